"""Reusable operations: neural-collapse metrics (streaming and naive)."""

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

__all__ = [
    "METRIC_KEYS",
    "ClassStats",
    "NC4Counter",
    "NCAccumulator",
    "NCInputError",
    "naive_neural_collapse_metrics",
    "nc_metrics_from_stats",
    "neural_collapse_metrics",
]
