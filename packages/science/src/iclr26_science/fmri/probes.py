"""Linear probes with subject-level cross-validation, and subject identification across time windows.

Brain-Semantoks evaluates frozen features with a linear head and reports balanced accuracy (continuous
targets such as age are discretised into classes) over repeated splits (§4.1). Every split here is by
**subject**: all scans/windows of a subject fall on the same side (:func:`subject_folds`), so a probe never
sees a test subject. The linear head is an L2-regularised multinomial logistic regression fitted by L-BFGS on
standardised features; its regularisation strength is chosen by an inner subject-level split of the training
fold only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from iclr26_shared.errors import DataError

__all__ = [
    "balanced_accuracy",
    "fit_logistic",
    "identification_accuracy",
    "linear_probe_cv",
    "quantile_classes",
    "subject_folds",
]


def subject_folds(subjects: np.ndarray, k: int, seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """``k`` (train, test) index pairs over samples whose subject sets are disjoint and whose test sets
    partition the samples (subjects shuffled with ``seed`` and dealt round-robin)."""
    subjects = np.asarray(subjects)
    uniq = np.unique(subjects)
    if k < 2 or k > len(uniq):
        raise DataError(f"subject folds: need 2 <= k <= {len(uniq)} subjects, got k={k}")
    order = np.random.default_rng(seed).permutation(uniq)
    fold_of = {s: i % k for i, s in enumerate(order)}
    f = np.array([fold_of[s] for s in subjects])
    return [(np.flatnonzero(f != i), np.flatnonzero(f == i)) for i in range(k)]


def quantile_classes(values: np.ndarray, n_classes: int) -> np.ndarray:
    """Discretise a continuous target into ``n_classes`` equally populated classes (by quantiles)."""
    edges = np.quantile(values, np.linspace(0, 1, n_classes + 1)[1:-1])
    return np.searchsorted(edges, values, side="right").astype(np.int64)


def balanced_accuracy(y: np.ndarray, pred: np.ndarray) -> float:
    """Mean over the classes present in ``y`` of the per-class recall."""
    return float(np.mean([np.mean(pred[y == c] == c) for c in np.unique(y)]))


def fit_logistic(
    x: np.ndarray, y: np.ndarray, n_classes: int, l2: float, iters: int = 100
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """L2-regularised multinomial logistic regression on standardised ``x [n, d]``; returns
    ``(W [d, C], b [C], mean [d], std [d])``. Objective: mean cross-entropy + ``l2·‖W‖²/2``."""
    mu, sd = x.mean(0), x.std(0) + 1e-8
    xt = torch.as_tensor((x - mu) / sd, dtype=torch.float64)
    yt = torch.as_tensor(y, dtype=torch.long)
    w = torch.zeros(x.shape[1], n_classes, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(n_classes, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=iters, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(xt @ w + b, yt) + 0.5 * l2 * (w * w).sum()
        loss.backward()
        return loss

    opt.step(closure)  # type: ignore[arg-type]
    return w.detach().numpy(), b.detach().numpy(), mu, sd


def _predict(model: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], x: np.ndarray) -> np.ndarray:
    w, b, mu, sd = model
    return np.argmax(((x - mu) / sd) @ w + b, axis=1)


def linear_probe_cv(
    features: np.ndarray,
    labels: np.ndarray,
    subjects: np.ndarray,
    *,
    folds: int = 5,
    repeats: int = 1,
    l2_grid: Sequence[float] = (1e-3, 1e-2, 1e-1, 1.0),
    seed: int = 0,
) -> dict[str, float]:
    """Balanced accuracy of a linear probe under ``repeats`` × ``folds``-fold subject-level CV.

    The L2 strength is chosen per outer fold by an inner 3-fold subject-level split of its training part.
    Returns ``{"balanced_accuracy": mean over folds and repeats, "sd": sd over repeats}``.
    """
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(labels, dtype=np.int64)
    if x.ndim != 2 or len(x) != len(y) or len(y) != len(subjects):
        raise DataError(f"probe: features {x.shape}, labels {y.shape}, subjects {np.shape(subjects)} do not match")
    n_classes = int(y.max()) + 1
    scores = []
    for r in range(repeats):
        preds = np.full(len(y), -1)
        for tr, te in subject_folds(subjects, folds, seed + r):
            inner_k = min(3, len(np.unique(subjects[tr])))
            best, best_l2 = -1.0, l2_grid[0]
            for l2 in l2_grid:
                accs = []
                for itr, iva in subject_folds(subjects[tr], inner_k, seed + 100 + r):
                    m = fit_logistic(x[tr][itr], y[tr][itr], n_classes, l2)
                    accs.append(balanced_accuracy(y[tr][iva], _predict(m, x[tr][iva])))
                if np.mean(accs) > best:
                    best, best_l2 = float(np.mean(accs)), l2
            preds[te] = _predict(fit_logistic(x[tr], y[tr], n_classes, best_l2), x[te])
        scores.append(balanced_accuracy(y, preds))
    return {"balanced_accuracy": float(np.mean(scores)), "sd": float(np.std(scores))}


def identification_accuracy(a: np.ndarray, b: np.ndarray) -> float:
    """Subject fingerprinting (Finn et al. 2015): row i of ``a`` and of ``b`` are subject i's features from two
    different time windows; each window-``b`` feature is matched to the window-``a`` feature it correlates with
    most (features centred across subjects first), and vice versa. Returns the share of correct matches
    (chance ``1/n``)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise DataError(f"identification: feature arrays must have the same [n, d] shape, got {a.shape}, {b.shape}")
    a = a - a.mean(0)
    b = b - b.mean(0)
    a = a / (np.linalg.norm(a, axis=1, keepdims=True) + 1e-12)
    b = b / (np.linalg.norm(b, axis=1, keepdims=True) + 1e-12)
    sim = a @ b.T
    idx = np.arange(len(a))
    return float((np.mean(sim.argmax(1) == idx) + np.mean(sim.argmax(0) == idx)) / 2)
