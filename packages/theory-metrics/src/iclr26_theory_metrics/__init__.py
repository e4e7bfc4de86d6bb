"""iclr26 theory-metrics: neural-collapse metrics NC0–NC4 and the optimizer study (Zhao et al., ICLR 2026), and
the dynamical-richness metric D_LR (Nam et al., ICLR 2026), and HSIC with the split-half dependence of subsets
for unlearning evaluation (Zhang et al., ICLR 2026).

Public API (imported lazily so that ``iclr26 list`` stays fast)::

    from iclr26_theory_metrics import neural_collapse_metrics
    metrics = neural_collapse_metrics(features, labels, weights)   # [N, p], [N], [K, p] -> dict of floats
    d_lr = richness(features, outputs)                              # [n, p], [n, C] -> float in [0, 1]
    h = hsic(x, y)                                                  # [n, p], [n, q] -> 0-dim float64 tensor
    out = evaluate_unlearning(model, forget, retain, test)          # OTR of the forget set, with its MC interval
    cmp = compare_unlearning(original, unlearned, forget, retain, test, retrained=None)  # paired, same draws
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_theory_metrics.methods.hsic_unlearning.protocol import compare_unlearning, evaluate_unlearning
    from iclr26_theory_metrics.nn import MLP, VGG9, ModularTransformer, ResNet9, build_model
    from iclr26_theory_metrics.ops.hsic import (
        HSICInputError,
        classify_subset,
        f1_score,
        hsic,
        hsic_permutation_null,
        hsic_test,
        jsd,
        mmd2_unbiased,
        split_half_dependence,
        split_half_mean,
    )
    from iclr26_theory_metrics.ops.hsic_null import split_half_gamma, split_half_moments
    from iclr26_theory_metrics.ops.metric import StreamingMetric
    from iclr26_theory_metrics.ops.neural_collapse import (
        HIGHER_IS_BETTER,
        METRIC_KEYS,
        ClassStats,
        NC4Counter,
        NCAccumulator,
        NCInputError,
        NeuralCollapse,
        higher_is_better,
        naive_neural_collapse_metrics,
        nc_metrics_from_stats,
        neural_collapse_metrics,
    )
    from iclr26_theory_metrics.ops.richness import (
        RichnessAccumulator,
        RichnessInputError,
        kernel_distance,
        parameter_norm,
        richness,
        richness_spectrum,
    )
    from iclr26_theory_metrics.optim import SGDW, InterpolatedAdamW, Signum, SignumW, make_optimizer
    from iclr26_theory_metrics.recorder import NCRecorder, measure_model
    from iclr26_theory_metrics.ufm import UFMTrace, simulate_ufm

__all__ = [
    "HIGHER_IS_BETTER",
    "HSICInputError",
    "METRIC_KEYS",
    "MLP",
    "ModularTransformer",
    "NeuralCollapse",
    "SGDW",
    "ClassStats",
    "InterpolatedAdamW",
    "NC4Counter",
    "NCAccumulator",
    "NCInputError",
    "NCRecorder",
    "ResNet9",
    "RichnessAccumulator",
    "RichnessInputError",
    "Signum",
    "SignumW",
    "StreamingMetric",
    "UFMTrace",
    "VGG9",
    "build_model",
    "classify_subset",
    "compare_unlearning",
    "evaluate_unlearning",
    "f1_score",
    "higher_is_better",
    "hsic",
    "hsic_permutation_null",
    "hsic_test",
    "jsd",
    "kernel_distance",
    "make_optimizer",
    "measure_model",
    "mmd2_unbiased",
    "naive_neural_collapse_metrics",
    "nc_metrics_from_stats",
    "parameter_norm",
    "neural_collapse_metrics",
    "richness",
    "richness_spectrum",
    "simulate_ufm",
    "split_half_dependence",
    "split_half_gamma",
    "split_half_mean",
    "split_half_moments",
]

_WHERE = {
    **dict.fromkeys(
        [
            "HIGHER_IS_BETTER",
            "METRIC_KEYS",
            "ClassStats",
            "NC4Counter",
            "NCAccumulator",
            "NCInputError",
            "NeuralCollapse",
            "higher_is_better",
            "naive_neural_collapse_metrics",
            "nc_metrics_from_stats",
            "neural_collapse_metrics",
        ],
        "iclr26_theory_metrics.ops.neural_collapse",
    ),
    **dict.fromkeys(
        [
            "RichnessAccumulator",
            "RichnessInputError",
            "kernel_distance",
            "parameter_norm",
            "richness",
            "richness_spectrum",
        ],
        "iclr26_theory_metrics.ops.richness",
    ),
    **dict.fromkeys(
        [
            "HSICInputError",
            "classify_subset",
            "f1_score",
            "hsic",
            "hsic_permutation_null",
            "hsic_test",
            "jsd",
            "mmd2_unbiased",
            "split_half_dependence",
            "split_half_mean",
        ],
        "iclr26_theory_metrics.ops.hsic",
    ),
    **dict.fromkeys(["split_half_gamma", "split_half_moments"], "iclr26_theory_metrics.ops.hsic_null"),
    "evaluate_unlearning": "iclr26_theory_metrics.methods.hsic_unlearning.protocol",
    "compare_unlearning": "iclr26_theory_metrics.methods.hsic_unlearning.protocol",
    **dict.fromkeys(
        ["SGDW", "InterpolatedAdamW", "Signum", "SignumW", "make_optimizer"], "iclr26_theory_metrics.optim"
    ),
    **dict.fromkeys(["MLP", "ModularTransformer", "ResNet9", "VGG9", "build_model"], "iclr26_theory_metrics.nn"),
    "StreamingMetric": "iclr26_theory_metrics.ops.metric",
    **dict.fromkeys(["NCRecorder", "measure_model"], "iclr26_theory_metrics.recorder"),
    **dict.fromkeys(["UFMTrace", "simulate_ufm"], "iclr26_theory_metrics.ufm"),
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
