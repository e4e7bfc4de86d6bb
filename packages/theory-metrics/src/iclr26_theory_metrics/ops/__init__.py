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
from iclr26_theory_metrics.ops.richness import RichnessAccumulator, RichnessInputError, naive_richness, richness

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
    "naive_richness",
    "richness",
]
