"""The OGMM paper's central claims (Wang et al., ICLR 2026), checked on our ``results.json``.

1. On the held-out target domain the merged model beats (a) every single expert, (b) the ensembles
   (probability average, highest confidence), (c) weight averaging / model soups, (d) data-free
   multi-teacher KD and (e) model inversion without merging (Inverse-X: a fresh GNN of each architecture
   trained on the generated graphs; the family's best X is the baseline). Paper, Table 1 (NCI1): OGMM 66.84
   vs GIN-B 65.02 (best expert), Inverse-X 62.39, Ens-Prob 58.05, Avg-PTM 56.58, Uni-Soup 48.73,
   Multi-GFKD 47.57.
2. Stage 1 works: the generated graphs are classified as their conditioning label by their own expert
   (we ask for ≥ 90 %; the paper reports no rate) and match its BatchNorm statistics: judged per expert
   on a log scale, every expert's generated graphs must have an R_bn at least 20 % below (log10 ratio
   < −0.1) that of random graphs of the same density (R_bn spans 0.03 to thousands across experts, so a
   mean of raw values is carried by one expert).
3. (Not a claim.) The paper finds top-k between 2 and 4 best over k = 1..5 on test accuracy. A best-of-3
   against best-of-2 comparison holds with probability 3/5 when k has no effect, and a matched selection
   (k chosen on held-out data, scored on test) needs target data OGMM does not have; the sweep is reported.
4. Controlled checks (known large effects, to tell a CPU-scale miss from a bug): the density split is
   a real shift (experts lose ≥ 10 points off their own domain), and on a mixture target the gate puts
   most of its mass on the experts of each graph's own source domain (chance 0.5).

The "beats" claims need a margin of one binomial standard deviation of an accuracy near 0.5 on the
target set, ``sqrt(0.25 / n_target)`` (0.025 for the 400 target graphs of the quick preset).

Accuracy claims carry the chance level of the workspace's rule (``docs/architecture.md``, "Claims"): the
trivial answer's level ``p`` (the larger of ``1/C`` and the target's majority-class share,
``target_majority``; a constant predictor reaches it) plus the band a chance-level answer reaches by
sampling luck on that test set, :data:`CHANCE_Z` binomial standard errors ``sqrt(p(1 − p)/n)`` with ``n``
the target graphs (0.5 + 2·0.025 = 0.55 on the quick preset's 400 balanced target graphs). The label rate's
chance is ``1/C`` plus the same band over the ``n`` generated graphs (:func:`chance_level`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iclr26_shared.spec import Claim
from iclr26_shared.tables import markdown_table

__all__ = ["BN_LOG_RATIO", "LABEL_RATE", "ROUTING_MARGIN", "SHIFT_MARGIN", "accuracy_margin", "claims", "report"]

#: Claim 2: share of generated graphs their expert must classify as the conditioning label.
LABEL_RATE = 0.9
#: Claim 4: experts must be this much (accuracy) better in-domain than cross-domain.
SHIFT_MARGIN = 0.10
#: Claim 2 (R_bn): the worst expert's log10(R_bn generated / R_bn random) must lie below this.
BN_LOG_RATIO = -0.1
#: The routing control: own-domain gate mass must exceed 0.5 by this much.
ROUTING_MARGIN = 0.05


def _family(acc: Mapping[str, float], names: list[str]) -> tuple[str, float] | None:
    present = [n for n in names if n in acc]
    if not present:
        return None
    best = max(present, key=lambda n: acc[n])
    return best, float(acc[best])


def accuracy_margin(results: Mapping[str, Any]) -> float:
    """One binomial standard deviation of an accuracy near 0.5 on the target set: ``sqrt(0.25 / n)``."""
    n = int(results.get("sizes", {}).get("target", 400))
    return round(math.sqrt(0.25 / max(n, 1)), 4)


#: Binomial standard errors of the trivial level that make the chance band (~95%).
CHANCE_Z = 2.0


def chance_level(trivial: float, n: int) -> float:
    """``trivial + CHANCE_Z · sqrt(trivial (1 − trivial) / n)``: the trivial level plus what a chance-level
    answer scores above it by sampling luck on ``n`` test items."""
    return trivial + CHANCE_Z * math.sqrt(trivial * (1.0 - trivial) / max(int(n), 1))


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """Evaluate claims 1, 2 and 4 on one run's results."""
    acc: Mapping[str, float] = results["target_accuracy"]
    margin = accuracy_margin(results)
    sizes = results.get("sizes", {})
    trivial = max(1.0 / int(results["num_classes"]), float(results.get("target_majority", 0.0)))
    chance = chance_level(trivial, int(sizes.get("target", 400)))
    experts = [e["name"] for e in results["experts"]]
    ours = float(acc["ogmm"])
    out: list[Claim] = []
    families = [
        ("every single expert", experts, "NCI1: 66.84 vs 65.02 (GIN-B, best expert)"),
        ("the ensembles (Ens-Prob, Ens-HighConf)", ["ens-prob", "ens-highconf"], "NCI1: 66.84 vs 58.05 (Ens-Prob)"),
        (
            "weight averaging and model soups (uniform, greedy)",
            [k for k in acc if k.startswith(("uni-soup-", "greedy-soup-"))],
            "NCI1: 66.84 vs 56.58 (Avg-PTM), 48.73 (Uni-Soup), 38.64 (Greedy-Soup)",
        ),
        ("data-free multi-teacher KD", ["kd"], "NCI1: 66.84 vs 47.57 (Multi-GFKD)"),
        (
            "model inversion without merging (Inverse-X)",
            [k for k in acc if k.startswith("inverse-")],
            "NCI1: 66.84 vs 62.39 (Inverse-X)",
        ),
    ]
    for words, names, paper in families:
        best = _family(acc, names)
        if best is None:
            continue
        out.append(
            Claim(
                claim=f"The merged model beats {words} on the target domain",
                metric="target accuracy (best of the family)",
                ours=ours,
                baseline=best[1],
                better="higher",
                margin=margin,
                chance=chance,
                paper=paper,
            )
        )
    gen = results["generation"]
    out.append(
        Claim(
            claim="Generated graphs are classified as their conditioning label by their own expert "
            f"(>= {LABEL_RATE:.0%})",
            metric="label rate (mean over experts)",
            ours=float(gen["label_rate"]),
            threshold=LABEL_RATE,
            better="higher",
            chance=chance_level(1.0 / int(results["num_classes"]), int(sizes.get("generated", 64))),
            paper="qualitative (generation by inversion, Eqs. 7-11)",
        )
    )
    per = gen.get("per_expert") or []
    if per:
        worst = max(math.log10(max(float(p["bn_generated"]), 1e-12) / max(float(p["bn_random"]), 1e-12)) for p in per)
    else:
        worst = float(gen["bn_log_ratio_worst"])
    out.append(
        Claim(
            claim="Generated graphs match their expert's BatchNorm statistics better than random graphs, "
            "for every expert",
            metric="worst expert's log10(R_bn generated / R_bn random)",
            ours=worst,
            threshold=BN_LOG_RATIO,
            better="lower",
            paper="R_bn term of L_gen (Eq. 9)",
        )
    )
    ins = [float(e["in_domain_acc"]) for e in results["experts"]]
    cross = [float(e["cross_domain_acc"]) for e in results["experts"]]
    out.append(
        Claim(
            claim=f"Control: the density split is a real shift (experts lose >= {SHIFT_MARGIN:.0%} off their domain)",
            metric="expert accuracy, own source vs the other source (mean over experts)",
            ours=sum(ins) / len(ins),
            baseline=sum(cross) / len(cross),
            better="higher",
            margin=SHIFT_MARGIN,
            chance=chance,
            paper="PTC: GCN 70.53 in-domain vs about 50 on the other domain",
        )
    )
    routing = results.get("routing_own_domain")
    if routing is not None:
        out.append(
            Claim(
                claim="Control: the gate routes target graphs to the experts of their own source domain",
                metric="gate mass on own-domain experts (mixture target)",
                ours=float(routing),
                threshold=0.5,
                better="higher",
                margin=ROUTING_MARGIN,
                chance=0.5,
                paper="not reported (reviewers asked for gate analyses)",
            )
        )
    return out


def report(results: Mapping[str, Any]) -> str:
    """Markdown: target accuracy per method, experts in/cross domain, generation, top-k sweep, the gate."""
    acc: Mapping[str, float] = results["target_accuracy"]
    lines = [f"## Target accuracy ({results['dataset']}, target = {results['target']})", ""]
    ranked = sorted(acc.items(), key=lambda kv: -kv[1])
    lines.append(markdown_table(["method", "accuracy"], [[n, f"{100 * v:.1f}"] for n, v in ranked]))
    lines += ["", "## Experts", ""]
    lines.append(
        markdown_table(
            ["expert", "own source (test)", "other source", "target"],
            [
                [
                    e["name"],
                    f"{100 * e['in_domain_acc']:.1f}",
                    f"{100 * e['cross_domain_acc']:.1f}",
                    f"{100 * e.get('target_acc', float('nan')):.1f}",
                ]
                for e in results["experts"]
            ],
        )
    )
    gen = results["generation"]
    lines += ["", "## Stage 1: generated graphs", ""]
    lines.append(
        markdown_table(
            ["expert", "label rate", "R_bn generated", "R_bn random", "log10 ratio", "edges/node"],
            [
                [
                    s["expert"],
                    f"{s['label_rate']:.2f}",
                    f"{s['bn_generated']:.3g}",
                    f"{s['bn_random']:.3g}",
                    f"{math.log10(max(s['bn_generated'], 1e-12) / max(s['bn_random'], 1e-12)):+.2f}",
                    f"{s['edge_density']:.2f}",
                ]
                for s in gen["per_expert"]
            ],
        )
    )
    if results.get("topk"):
        lines += ["", "## Top-k sweep (target accuracy; reported, not a claim)", ""]
        topk = results["topk"]
        lines.append(markdown_table(["k", *topk], [["acc", *(f"{100 * v:.1f}" for v in topk.values())]]))
    routing = results.get("routing_own_domain")
    by_input = results.get("routing_own_domain_by_gate_input") or {}
    acc_by_input = results.get("ogmm_accuracy_by_gate_input") or {}
    if by_input:
        lines += ["", "## The gate: what it reads", ""]
        lines.append(
            markdown_table(
                ["gate input", "own-domain gate mass", "OGMM target accuracy"],
                [
                    [
                        k,
                        "—" if v is None else f"{v:.3f}",
                        f"{100 * acc_by_input[k]:.1f}" if k in acc_by_input else "—",
                    ]
                    for k, v in by_input.items()
                ],
            )
        )
    diag = results.get("merged_diagnostics")
    if diag:
        lines += [
            "",
            f"The merged model on the target: as trained {100 * acc['ogmm']:.1f}; its gate over the unmasked experts "
            f"(every mask reset to 1) {100 * diag['no_masks']:.1f}; its masked experts under a uniform gate "
            f"{100 * diag['uniform_gate']:.1f}.",
        ]
    lines += [
        "",
        f"Gate mass on own-domain experts: {'—' if routing is None else f'{routing:.2f}'}. "
        f"Density (edges/node): {results['density']}. Wall time: {results.get('wall_seconds', float('nan')):.1f} s.",
    ]
    return "\n".join(lines)
