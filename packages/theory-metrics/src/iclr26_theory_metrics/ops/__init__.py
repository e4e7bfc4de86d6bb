"""Reusable operations: neural-collapse metrics and the richness metric D_LR (streaming and naive)."""

from iclr26_theory_metrics.ops.neural_collapse import (
    METRIC_KEYS,
    ClassStats,
    NC4Counter,
    NCAccumulator,
    NCInputError,
    naive_neural_collapse_metrics,
    nc_metrics_from_stats,
    neural_collapse_metrics,
)
from iclr26_theory_metrics.ops.richness import (
    RichnessAccumulator,
    RichnessInputError,
    kernel_distance,
    naive_richness,
    parameter_norm,
    richness,
    richness_spectrum,
)

__all__ = [
    "METRIC_KEYS",
    "ClassStats",
    "NC4Counter",
    "NCAccumulator",
    "NCInputError",
    "RichnessAccumulator",
    "RichnessInputError",
    "naive_neural_collapse_metrics",
    "nc_metrics_from_stats",
    "neural_collapse_metrics",
    "kernel_distance",
    "naive_richness",
    "parameter_norm",
    "richness",
    "richness_spectrum",
]
