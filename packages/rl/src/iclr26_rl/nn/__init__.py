"""Reusable layers (torch only)."""

from iclr26_rl.nn.layers import (
    NormedLinear,
    drqv2_weight_init,
    linear_schedule,
    naive_random_shift,
    normed_mlp,
    random_shift,
    sample_shifts,
    truncated_normal_sample,
)

__all__ = [
    "NormedLinear",
    "drqv2_weight_init",
    "linear_schedule",
    "naive_random_shift",
    "normed_mlp",
    "random_shift",
    "sample_shifts",
    "truncated_normal_sample",
]
