"""The FGL paper's central claims (Li et al., ICLR 2026), checked on our ``results.json``.

1. On heterophilous graphs (edge homophily < 0.5) FGL beats the best compared baseline (GCN, APPNP,
   GCNII, and the feature-only MLP and logistic regression) by a clear margin (≥ 5 accuracy points,
   averaged over those graphs); on homophilous graphs it is at least on par (within 1 point: an explicit
   non-inferiority claim). Paper, Table 1: Texas 91.89 vs 71.35 (APPNP), Wisconsin 86.27 vs 70.31 (GCNII);
   Cora 85.46 vs 85.34 (GCNII).
2. Homophily-guided sampling gives trees of higher edge homophily than uniform sampling (Theorem 2),
   measured on the tree edges between non-training nodes: the estimator's attention is fitted to the
   training labels, so edges at training nodes would be homophilous by construction. Its chance level is
   the homophily of random node pairs (the class prior ``Σ_c p_c²``) plus two binomial standard errors on
   one tree's measured edges: guided trees no more homophilous than random pairs cannot hold, and uniform
   trees at or below that level leave the claim inconclusive (on a heterophilous graph they are).
3. The paper's ablation table (Cora / Texas / Flickr): the full model beats uniform tree sampling, a
   single homophily-guided tree, the model without the local sub-module and the one without the global
   sub-module (Cora 85.46 vs 83.63 / 83.73 / 82.18 / 80.00; Texas 91.89 vs 82.58 / 84.83 / 69.93 / 82.88).

Every accuracy claim carries the chance level of the workspace's rule: the trivial level (``1/C`` or the
test nodes' majority share, whichever is larger) plus two binomial standard errors of the mean accuracy on
the runs' test nodes (:func:`_chance`); under the strict verdicts ours below it fails, ours at it cannot
hold, a baseline at it makes the claim inconclusive.
A claim is left out when the run lacks what it needs (no baseline, no homophilous graph, no ablations).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iclr26_shared.spec import Claim
from iclr26_shared.tables import markdown_table

__all__ = ["ABLATION_MARGIN", "HETERO_MARGIN", "PAR_TOLERANCE", "TREE_MARGIN", "claims", "report"]

#: "clear margin" of claim 1 (accuracy, absolute).
HETERO_MARGIN = 0.05
#: "at least on par" of claim 1 (accuracy, absolute): ours may trail the best baseline by this much.
PAR_TOLERANCE = 0.01
#: An ablation win: the full model must beat the ablated one by 2 accuracy points, about one binomial
#: standard deviation of a test accuracy near 0.6 on the quick cSBM's ~700 test nodes (sqrt(.24/700) = 0.019).
ABLATION_MARGIN = 0.02
#: Guided trees must be more homophilous than uniform ones by this much (edge-homophily units; about one
#: binomial standard deviation of the homophily of ~1000 tree edges at 0.4: 0.015).
TREE_MARGIN = 0.02

#: The best-baseline set of claim 1: graph models and the feature-only ones (FGL's own pre-processing fits
#: a logistic regression on the features; a win must also beat what the features alone give).
BASELINES = ("gcn", "appnp", "gcnii", "mlp", "linear")

#: (variant, words, paper numbers) of the ablation claims.
ABLATIONS: tuple[tuple[str, str, str], ...] = (
    ("fgl-uniform", "Homophily-guided sampling beats uniform sampling", "Cora 85.46 vs 83.63; Texas 91.89 vs 82.58"),
    ("fgl-single-tree", "A forest of trees beats a single tree", "Cora 85.46 vs 83.73; Texas 91.89 vs 84.83"),
    (
        "fgl-no-local",
        "The full model beats the model without the local sub-module",
        "Cora 85.46 vs 82.18; Texas 91.89 vs 69.93",
    ),
    (
        "fgl-no-global",
        "The full model beats the model without the global sub-module",
        "Cora 85.46 vs 80.00; Texas 91.89 vs 82.88",
    ),
)


def _acc(graph: Mapping[str, Any], method: str) -> float | None:
    entry = graph["accuracy"].get(method)
    return None if entry is None else float(entry["mean"])


def _mean_acc(graphs: list[Mapping[str, Any]], method: str) -> float:
    return sum(float(g["accuracy"][method]["mean"]) for g in graphs) / len(graphs)


def _chance(graphs: list[Mapping[str, Any]]) -> float | None:
    """Chance level of a mean test accuracy over ``graphs`` and their repeats (the workspace's rule): the
    trivial level ``p_u = max(1/C, majority share of the test nodes)`` of every (graph, repeat) unit ``u``,
    averaged, plus two binomial standard errors of that mean, ``2 √(Σ_u p_u (1 − p_u) / n_u) / U`` over the
    ``U`` units with ``n_u`` test nodes. Results without test counts give ``mean 1/C`` and no band; None when
    C is not recorded."""
    if not all("num_classes" in g for g in graphs):
        return None
    units: list[tuple[float, int | None]] = []
    for g in graphs:
        c = 1.0 / int(g["num_classes"])
        nodes, majority = g.get("test_nodes") or [None], g.get("test_majority") or [None]
        for n, m in zip(nodes, majority, strict=False):
            units.append((max(c, float(m)) if m is not None else c, int(n) if n else None))
    level = sum(p for p, _ in units) / len(units)
    if any(n is None for _, n in units):
        return level
    var = sum(p * (1 - p) / max(n or 1, 1) for p, n in units)
    return level + 2.0 * math.sqrt(var) / len(units)


def _tree_chance(graph: Mapping[str, Any]) -> float | None:
    """Chance level of tree edge homophily: trees of random node pairs have the class-prior homophily
    ``h₀ = Σ_c p_c²`` (non-training nodes), plus the band two binomial standard errors
    ``2 √(h₀ (1 − h₀) / m)`` on the ``m`` measured edges of one tree (None when not recorded)."""
    if "class_prior_homophily" not in graph or "tree_edges_unseen" not in graph:
        return None
    h0 = float(graph["class_prior_homophily"]["mean"])
    m = float(graph["tree_edges_unseen"]["mean"])
    return h0 + 2.0 * math.sqrt(h0 * (1.0 - h0) / max(m, 1.0))


def _names(graphs: list[Mapping[str, Any]]) -> str:
    """The graphs by name only: the claim text must be the same in every seed's run (it groups the seeds)."""
    return ", ".join(str(g["graph"]) for g in graphs)


def _vs_best_baseline(graphs: list[Mapping[str, Any]], words: str, margin: float, paper: str) -> Claim | None:
    """FGL against the best (highest mean accuracy over ``graphs``) baseline present on all of them; which
    baseline is best may change from seed to seed, so it is not named in the claim text."""
    present = [b for b in BASELINES if all(b in g["accuracy"] for g in graphs)]
    if not graphs or not present:
        return None
    best = max(present, key=lambda b: _mean_acc(graphs, b))
    return Claim(
        claim=f"{words} ({_names(graphs)})",
        metric="test accuracy (mean over graphs and repeats)",
        ours=_mean_acc(graphs, "fgl"),
        baseline=_mean_acc(graphs, best),
        better="higher",
        margin=margin,
        chance=_chance(graphs),
        paper=paper,
    )


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """Evaluate claims 1–3 on the aggregated results."""
    graphs = [g for g in results["graphs"] if "fgl" in g["accuracy"]]
    out: list[Claim] = []
    hetero = _vs_best_baseline(
        [g for g in graphs if g["homophily"] < 0.5],
        f"FGL beats the best baseline by >= {HETERO_MARGIN:.0%} on heterophilous graphs",
        HETERO_MARGIN,
        "Texas 91.89 vs 71.35 (APPNP); Wisconsin 86.27 vs 70.31 (GCNII)",
    )
    homo = _vs_best_baseline(
        [g for g in graphs if g["homophily"] >= 0.5],
        f"FGL is at least on par (within {PAR_TOLERANCE:.0%}) with the best baseline on homophilous graphs",
        -PAR_TOLERANCE,
        "Cora 85.46 vs 85.34 (GCNII)",
    )
    out += [c for c in (hetero, homo) if c is not None]
    abl = next((g for g in graphs if g["graph"] == results.get("ablation_graph")), None)
    if abl is None:
        return out
    if "tree_homophily_guided" in abl and "tree_homophily_uniform" in abl:
        out.append(
            Claim(
                claim=f"Homophily-guided trees are more homophilous than uniform ones ({abl['graph']})",
                metric="tree edge homophily (edges between non-training nodes)",
                ours=float(abl["tree_homophily_guided"]["mean"]),
                baseline=float(abl["tree_homophily_uniform"]["mean"]),
                better="higher",
                margin=TREE_MARGIN,
                chance=_tree_chance(abl),
                paper="Theorem 2 (monotone in p/q)",
            )
        )
    ours = _acc(abl, "fgl")
    assert ours is not None
    for variant, words, paper in ABLATIONS:
        base = _acc(abl, variant)
        if base is None:
            continue
        out.append(
            Claim(
                claim=f"{words} ({abl['graph']})",
                metric="test accuracy",
                ours=ours,
                baseline=base,
                better="higher",
                margin=ABLATION_MARGIN,
                chance=_chance([abl]),
                paper=paper,
            )
        )
    return out


def report(results: Mapping[str, Any]) -> str:
    """Markdown tables: accuracy (mean ± std) per graph and model; tree homophily; pre-processing."""
    graphs = list(results["graphs"])
    if not graphs:
        return "No graph finished."
    order = ["fgl", "fgl-sender", "fgl-receiver", *BASELINES]
    order += ["fgl-uniform", "fgl-single-tree", "fgl-no-global", "fgl-no-local"]
    methods = [m for m in order if any(m in g["accuracy"] for g in graphs)]

    def acc(g: Mapping[str, Any], m: str) -> str:
        a = g["accuracy"].get(m)
        return "—" if a is None else f"{100 * a['mean']:.1f} ± {100 * a['std']:.1f}"

    def f(g: Mapping[str, Any], key: str) -> str:
        return f"{g[key]['mean']:.3f}" if key in g else "—"

    lines = ["## Accuracy (test, mean ± std over repeats)", ""]
    lines.append(
        markdown_table(
            ["graph", "homophily", *methods],
            [[g["graph"], f"{g['homophily']:.2f}", *(acc(g, m) for m in methods)] for g in graphs],
        )
    )
    lines += ["", "## Homophily of the augmented graph and the trees (true labels)", ""]
    lines.append(
        markdown_table(
            ["graph", "G", "kNN edges", "Ĝ", "trees (FGL)", "guided*", "uniform*", "pseudo-label test acc"],
            [
                [
                    g["graph"],
                    f"{g['homophily']:.3f}",
                    *(
                        f(g, k)
                        for k in (
                            "homophily_knn",
                            "homophily_augmented",
                            "homophily_trees",
                            "tree_homophily_guided",
                            "tree_homophily_uniform",
                            "pseudo_test_acc",
                        )
                    ),
                ]
                for g in graphs
            ],
        )
    )
    lines += ["", "\\* on tree edges between non-training nodes (labels no pre-processing step saw).", ""]
    lines += ["## Chosen on validation nodes, and how much sits on kNN-only arcs", ""]
    rows = []
    for g in graphs:
        chosen = "; ".join(
            f"({s['knn_k']}, {s['beta1']:g}, {s['beta2']:g})" for s in g.get("selected", []) if s is not None
        )
        rows.append([g["graph"], chosen or "—", f(g, "attention_on_knn_only"), f(g, "tree_edges_knn_only")])
    lines.append(
        markdown_table(
            ["graph", "(k, β1, β2) per repeat", "attention on kNN-only arcs", "tree edges on kNN-only arcs"], rows
        )
    )
    tuned = [g for g in graphs if len(g.get("tuning", [])) > 1]
    if tuned:
        lines += ["", "## The tuning grid: validation / test accuracy of every candidate (mean over repeats)", ""]
        cands = tuned[0]["tuning"]
        heads = [f"k={c['knn_k']}, β=({c['beta1']:g}, {c['beta2']:g})" for c in cands]
        body = [
            [
                g["graph"],
                *(f"{100 * c['val_acc']['mean']:.1f} / {100 * c['test_acc']['mean']:.1f}" for c in g["tuning"]),
            ]
            for g in tuned
        ]
        lines.append(markdown_table(["graph", *heads], body))
    lines += ["", f"Wall time: {results.get('wall_seconds', float('nan')):.1f} s."]
    return "\n".join(lines)
