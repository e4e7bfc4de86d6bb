"""Linear-recurrence ops in fla's ``[B, T, H, D]`` layout: a readable naive loop and a fast chunkwise twin each."""

from iclr26_sequence_models.ops.delta_rule import chunk_gated_delta_rule, naive_recurrent_gated_delta_rule
from iclr26_sequence_models.ops.gla import chunk_gla, naive_recurrent_gla

__all__ = ["chunk_gated_delta_rule", "chunk_gla", "naive_recurrent_gated_delta_rule", "naive_recurrent_gla"]
