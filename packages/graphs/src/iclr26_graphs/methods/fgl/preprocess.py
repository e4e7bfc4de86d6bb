r"""FGL pre-processing: pseudo-labels, the kNN-augmented graph Ĝ, the homophily estimator, the forest.

1. Pseudo-labels ``Y' = softmax(X W)`` (for heterophilous graphs) or ``softmax(Â X W)`` (homophilous),
   a logistic regression trained with cross-entropy on the labelled nodes. The paper picks the form per
   data set; ``pseudo_model="auto"`` picks the one with the better validation accuracy.
2. Ĝ = G ∪ {(i, j): j among the ``k`` nearest neighbours of ``i`` in pseudo-label space ``Y'``}
   (symmetrised, no self-loops): denser, more homophilous, usually connected.
3. The homophily estimator (:class:`~iclr26_graphs.nn.homophily.HomophilyEstimator`) on Ĝ, trained
   against ``Y'`` with the true one-hot labels on the training nodes.
4. ``N_T`` spanning forests of Ĝ with ``P(T) ∝ Π s(e)``, ``s(e_ij) = (α_{i→j} + α_{j→i}) / 2``
   (or uniform trees for the ablation).
"""

from __future__ import annotations

from typing import Any, Literal

import torch
import torch.nn.functional as F

from iclr26_graphs.data.registry import validate_graph
from iclr26_graphs.errors import GraphInputError
from iclr26_graphs.methods.fgl.model import FGLStructure, _spmm, gcn_norm_weights, graph_fingerprint
from iclr26_graphs.nn.forest_conv import make_forest
from iclr26_graphs.nn.homophily import HomophilyEstimator
from iclr26_graphs.ops.homophily import edge_homophily
from iclr26_graphs.ops.spanning_tree import Sampler, sample_spanning_forests

PseudoModel = Literal["auto", "linear", "sgc"]

#: Default floor of the tree-sampling scores (``FGLConfig.tree_score_floor``). Softmax attention can
#: underflow to 0, and scores far below it make the samplers' walks nearly trapped: a node set joined to the
#: rest only by edges of score f leaves with probability ~f per step, so popping needs ~1/f rounds (the quick
#: cSBM graphs held node pairs cut off by two 1e-6 edges, which hit the 1.1e5-round guard). Raising scores
#: below the floor changes P(T) ∝ Π s(e) only for trees that use such edges, and those already carry a
#: factor ≤ f; bridges are exact whatever their score (the samplers cross them deterministically).
MIN_SCORE = 1e-3

__all__ = ["build_structure", "knn_edges", "pseudo_labels", "sample_trees", "tree_homophily"]


def _fit_logreg(
    feats: torch.Tensor, y: torch.Tensor, train: torch.Tensor, val: torch.Tensor, epochs: int, lr: float, wd: float
) -> tuple[torch.Tensor, float]:
    """Logistic regression on ``feats``; returns (softmax probabilities at the best val epoch, val acc)."""
    num_classes = int(y.max()) + 1
    lin = torch.nn.Linear(feats.size(1), num_classes).to(feats.device)
    opt = torch.optim.Adam(lin.parameters(), lr=lr, weight_decay=wd)
    best, best_probs = -1.0, None
    for _ in range(epochs):
        lin.train()
        opt.zero_grad()
        F.cross_entropy(lin(F.dropout(feats, 0.2, True))[train], y[train]).backward()
        opt.step()
        with torch.no_grad():
            lin.eval()
            logits = lin(feats)
            acc = float((logits[val].argmax(-1) == y[val]).float().mean()) if bool(val.any()) else 0.0
            if acc > best:
                best, best_probs = acc, logits.softmax(-1)
    assert best_probs is not None
    return best_probs, best


def pseudo_labels(
    x: torch.Tensor,
    edge_index: torch.Tensor,
    y: torch.Tensor,
    train_mask: torch.Tensor,
    val_mask: torch.Tensor,
    *,
    model: PseudoModel = "auto",
    epochs: int = 200,
    lr: float = 0.01,
    weight_decay: float = 5e-4,
) -> tuple[torch.Tensor, str, float]:
    """``Y' [n, C]`` from ``softmax(X W)`` or ``softmax(Â X W)``; returns (Y', the form used, its val acc)."""
    results: dict[str, tuple[torch.Tensor, float]] = {}
    if model in ("auto", "linear"):
        results["linear"] = _fit_logreg(x, y, train_mask, val_mask, epochs, lr, weight_decay)
    if model in ("auto", "sgc"):
        ei, w = gcn_norm_weights(edge_index, x.size(0))
        results["sgc"] = _fit_logreg(_spmm(ei, w, x), y, train_mask, val_mask, epochs, lr, weight_decay)
    if not results:
        raise GraphInputError(f"pseudo_model = {model!r}: expected 'auto', 'linear' or 'sgc'")
    name = max(results, key=lambda k: results[k][1])
    return results[name][0], name, results[name][1]


def knn_edges(points: torch.Tensor, k: int, chunk: int = 4096) -> torch.Tensor:
    """Arcs ``(j, i)`` from each node ``i`` to its ``k`` nearest other nodes (Euclidean), ``[2, n·k]``."""
    n = points.size(0)
    k = min(k, n - 1)
    if k <= 0:
        return torch.empty(2, 0, dtype=torch.long, device=points.device)
    rows = []
    for start in range(0, n, chunk):
        d = torch.cdist(points[start : start + chunk], points)
        idx = torch.arange(start, min(start + chunk, n), device=points.device)
        d[torch.arange(idx.numel(), device=points.device), idx] = torch.inf
        rows.append(d.topk(k, largest=False).indices)
    nb = torch.cat(rows)
    return torch.stack([nb.flatten(), torch.arange(n, device=points.device).repeat_interleave(k)])


def _symmetric_simple(edge_index: torch.Tensor, n: int) -> torch.Tensor:
    e = edge_index[:, edge_index[0] != edge_index[1]]
    key = torch.unique(torch.cat([e[0] * n + e[1], e[1] * n + e[0]]))
    return torch.stack([key // n, key % n])


def sample_trees(
    edge_index: torch.Tensor,
    attention: torch.Tensor | None,
    num_nodes: int,
    num_trees: int,
    generator: torch.Generator | None,
    *,
    sampler: Sampler = "cycle-popping",
    score_floor: float = MIN_SCORE,
) -> torch.Tensor:
    """``[N_T, 2, m]`` forests of Ĝ, ``∝ Π s(e)`` with ``s`` the mean attention of the two arcs (None: uniform).

    Scores below ``score_floor`` are raised to it (see :data:`MIN_SCORE`): every component keeps a tree
    and no node set is left with only near-zero exits.
    """
    w = None if attention is None else attention.clamp(min=score_floor)
    return sample_spanning_forests(edge_index, w, num_nodes, num_trees, generator, sampler=sampler)


def tree_homophily(trees: torch.Tensor, y: torch.Tensor, nodes: torch.Tensor | None = None) -> float:
    """Mean edge homophily of the trees ``[N_T, 2, m]`` under the labels ``y``; with a boolean ``nodes``
    mask, over the tree edges whose two ends both lie in it (NaN when no tree edge does)."""
    if nodes is None:
        return float(sum(edge_homophily(t, y) for t in trees) / trees.size(0))
    same = torch.cat([(y[t[0]] == y[t[1]])[nodes[t[0]] & nodes[t[1]]] for t in trees])
    return float(same.float().mean()) if same.numel() else float("nan")


def build_structure(
    x: torch.Tensor,
    edge_index: torch.Tensor,
    y: torch.Tensor,
    train_mask: torch.Tensor,
    val_mask: torch.Tensor,
    *,
    num_trees: int = 8,
    knn_k: int = 5,
    pseudo_model: PseudoModel = "auto",
    pseudo_epochs: int = 200,
    estimator_channels: int = 32,
    estimator_epochs: int = 200,
    lr: float = 0.01,
    weight_decay: float = 5e-4,
    uniform_trees: bool = False,
    sampler: Sampler = "cycle-popping",
    score_floor: float = MIN_SCORE,
    generator: torch.Generator | None = None,
    pseudo: tuple[torch.Tensor, str, float] | None = None,
) -> tuple[FGLStructure, dict[str, Any]]:
    """Run FGL's pre-processing; returns the structure and diagnostics (homophily of G, Ĝ, trees...).

    ``y`` is read only on ``train_mask`` (and ``val_mask`` to choose the pseudo-label form); the
    diagnostics use all labels to *measure* homophily, never to build anything. ``pseudo`` reuses the
    output of :func:`pseudo_labels` (e.g. when several ``knn_k`` are tried on one graph).
    """
    validate_graph(x, edge_index, y, where="FGL input")
    n = x.size(0)
    if bool(edge_index.numel()) and not bool((edge_index[0] != edge_index[1]).any()):
        raise GraphInputError("FGL input: edge_index holds only self-loops")
    if not bool(train_mask.any()):
        raise GraphInputError("FGL input: train_mask selects no node")
    if pseudo is None:
        pseudo = pseudo_labels(
            x,
            edge_index,
            y,
            train_mask,
            val_mask,
            model=pseudo_model,
            epochs=pseudo_epochs,
            lr=lr,
            weight_decay=weight_decay,
        )
    probs, form, pseudo_val = pseudo
    knn = knn_edges(probs, knn_k)
    g_hat = _symmetric_simple(torch.cat([edge_index, knn], 1), n)
    targets = probs.detach().clone()
    targets[train_mask] = F.one_hot(y[train_mask], probs.size(1)).to(targets.dtype)
    # the bilinear form Q_i K_j has a vanishing gradient at small weights: standardise its input and do
    # not decay its weights (coupled L2 in Adam would otherwise pull it back to uniform attention)
    x_std = (x - x.mean(0)) / x.std(0).clamp(min=1e-8)
    est = HomophilyEstimator(x.size(1), estimator_channels).to(x.device)
    losses = est.fit(x_std, g_hat, targets, epochs=estimator_epochs, lr=lr, weight_decay=0.0)
    with torch.no_grad():
        attention = est(x_std, g_hat)
    trees = sample_trees(
        g_hat, None if uniform_trees else attention, n, num_trees, generator, sampler=sampler, score_floor=score_floor
    )
    structure = FGLStructure(n, g_hat, attention, make_forest(g_hat, n, trees), graph_fingerprint(edge_index, n))
    same = (y[g_hat[0]] == y[g_hat[1]]).float()
    g_keys = _symmetric_simple(edge_index, n)
    g_keys = g_keys[0] * n + g_keys[1]
    knn_only = ~torch.isin(g_hat[0] * n + g_hat[1], g_keys)
    tree_knn_only = ~torch.isin(trees[:, 0] * n + trees[:, 1], g_keys)
    diag = {
        "pseudo_model": form,
        "pseudo_val_acc": pseudo_val,
        "pseudo_test_acc": float(
            (probs.argmax(-1)[~(train_mask | val_mask)] == y[~(train_mask | val_mask)]).float().mean()
        ),
        "homophily_graph": edge_homophily(edge_index, y),
        "homophily_knn": edge_homophily(knn, y),
        "homophily_augmented": edge_homophily(g_hat, y),
        "homophily_trees": tree_homophily(trees, y),
        # attention-weighted homophily: how much of the estimator's mass sits on same-class arcs, per target
        "attention_on_same_class": float((attention * same).sum() / n),
        # how much of Ĝ's attention mass and of the trees sits on arcs that only the kNN step added
        "attention_on_knn_only": float((attention * knn_only.float()).sum() / n),
        "tree_edges_knn_only": float(tree_knn_only.float().mean()) if tree_knn_only.numel() else 0.0,
        "estimator_loss_first_last": [losses[0], losses[-1]] if losses else [],
        "augmented_arcs": int(g_hat.size(1)),
    }
    return structure, diag
