"""The paper's central claims of ELViS, checked on ``results.json``, and the report tables.

* Table "GLDv2 → OOD" (DINOv2: ELViS 55.0, RRT 48.6, Chamfer+OT 50.2, no re-ranking 38.9 mAP): on the
  held-out domains ELViS re-ranking beats the transformer re-ranker trained on the same domain (claim 1),
  the zero-parameter Chamfer+OT and the global shortlist;
* ablation (avg mAP 53.9 → 30.4 without dustbin): the dustbin ablation hurts (claim 2);
* cost (ELViS 96K parameters, 101 µs per pair; RRT 2232K, 656 µs): ELViS takes less time per pair (a
  wall-time claim); the parameter ratio is a design property, reported as a diagnostic (:func:`diagnostics`);
* controlled check (a large, known effect: two views of one window share many SIFT matches): on held-out
  pairs of the training domain's shortlists, ELViS's score separates positives from negatives with a
  pair AUC above ``control_auc`` (chance 0.5).

ELViS is judged with the paper's re-ranking score σ(τ·s) (row ``elvis-sigmoid-s`` when the run's
``inference_score`` is the calibrated σ(g(s)), which is then reported beside it as ``elvis``).

Chance levels: mAP of a random ranking (≈ positives / database size); AUC 0.5. For the transformer
comparison the trivial answer is *no re-ranking*: the transformer must beat the global shortlist before a
win over it counts (``chance`` = the global shortlist's OOD mAP: at or below it, inconclusive). mAP is the
official revisited protocol's (trapezoidal AP; junk moved behind each split's shortlist).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iclr26_generative_vision.methods._format import fmt
from iclr26_shared.spec import Claim
from iclr26_shared.tables import markdown_table

__all__ = ["MAP_MARGIN", "PAPER_ROW", "claims", "diagnostics", "report"]

#: The row of the paper's score σ(τ·s), present when the run re-ranked with σ(g(s)).
PAPER_ROW = "elvis-sigmoid-s"
#: mAP gap that counts as a win (a query set of ~10-40 queries moves mAP by ~0.01 per query swap).
MAP_MARGIN = 0.01

#: OOD comparisons, in order: (claim, metric, baseline scorer, paper).
_OOD_CLAIMS: tuple[tuple[str, str, str, str], ...] = (
    (
        "On held-out domains ELViS re-ranking beats a transformer re-ranker trained on the same domain",
        "OOD mAP@k, ELViS vs RRT-style transformer",
        "rrt",
        "GLDv2-trained, OOD: 55.0 vs 48.6 (RRT)",
    ),
    (
        "On held-out domains ELViS re-ranking improves over the global shortlist",
        "OOD mAP@k, ELViS vs global shortlist",
        "global",
        "OOD: 55.0 vs 38.9 (no re-ranking)",
    ),
    (
        "On held-out domains ELViS beats the zero-parameter Chamfer+OT similarity",
        "OOD mAP@k, ELViS vs Chamfer+OT",
        "chamfer-ot",
        "OOD: 55.0 vs 50.2",
    ),
)


def _summary(results: Mapping[str, Any], scorer: str, split: str) -> float:
    row = results.get("summary", {}).get(scorer)
    return float(row[split]) if row else math.nan


def _ours(results: Mapping[str, Any]) -> str:
    return PAPER_ROW if PAPER_ROW in results.get("summary", {}) else "elvis"


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """The claims that ``results`` can measure (a variant that was not trained gives no row)."""
    chance = results.get("chance_map", {})
    summary = results.get("summary", {})
    ours = _ours(results)
    if ours not in summary:
        return []
    out = [
        Claim(
            claim=text,
            metric=f"{metric} (σ(τ·s))" if ours == PAPER_ROW else metric,
            ours=_summary(results, ours, "ood"),
            baseline=_summary(results, base, "ood"),
            better="higher",
            margin=MAP_MARGIN,
            # the transformer must beat no re-ranking before a win over it counts
            chance=_summary(results, "global", "ood") if base == "rrt" and "global" in summary else chance.get("ood"),
            paper=paper,
        )
        for text, metric, base, paper in _OOD_CLAIMS
        if base in summary
    ]
    if "elvis-no-dustbin" in summary:
        out.append(
            Claim(
                claim="Removing the dustbins from the optimal transport hurts ELViS (the largest ablation drop)",
                metric="avg mAP@k over all domains, ELViS vs ELViS without dustbin",
                ours=_summary(results, ours, "avg"),
                baseline=_summary(results, "elvis-no-dustbin", "avg"),
                better="higher",
                margin=MAP_MARGIN,
                chance=chance.get("avg"),
                paper="avg 53.9 vs 30.4 (−23.5)",
            )
        )
    cost = results.get("cost", {})
    if "elvis" in cost and "rrt" in cost:
        out.append(
            Claim(
                claim="ELViS costs less time per pair than the transformer re-ranker",
                metric="µs per pair, ELViS / transformer re-ranker",
                ours=float(cost["elvis"]["us_per_pair"]) / float(cost["rrt"]["us_per_pair"]),
                threshold=1.0,
                better="lower",
                paper="101 vs 656 µs per pair (RRT)",
                timing=True,
            )
        )
    auc = results.get("pair_auc", {}).get(results.get("train_domain", ""), {})
    if ours in auc:
        out.append(
            Claim(
                claim="Controlled check: ELViS's score separates same-window from other-window pairs in-domain",
                metric="pair AUC on the in-domain test shortlists (held-out photographs)",
                ours=float(auc[ours]),
                threshold=float(results.get("control_auc", 0.8)),
                better="higher",
                chance=0.5,
                paper="two views of one window share many SIFT matches (HPatches-style ground truth)",
            )
        )
    return out


def diagnostics(results: Mapping[str, Any]) -> dict[str, Any]:
    """Reported, not judged: inference parameters of ELViS over the transformer's (a design property)."""
    cost = results.get("cost", {})
    if "elvis" in cost and "rrt" in cost and cost["rrt"]["params"]:
        return {"param_ratio_elvis_over_rrt": float(cost["elvis"]["params"]) / float(cost["rrt"]["params"])}
    return {}


def report(results: Mapping[str, Any]) -> str:
    """Markdown tables: ID/OOD/avg mAP per scorer, per-domain Medium/Hard mAP, pair AUCs, cost (report.md)."""
    domains = results["domains"]
    chance = results.get("chance_map", {})
    lines = [
        f"## Offline retrieval benchmark (scikit-image photographs, {results.get('descriptor', 'sift')}, "
        f"{results['max_keypoints']} descriptors "
        f"per image), trained on `{results['train_domain']}`, top-{results['rerank_k']} re-ranked",
        "",
        markdown_table(
            ["domain", "queries", "database", "sources (instances)"],
            [
                [d, i["queries"], i["database"], ", ".join(f"{n} ({c})" for n, c in i["sources"].items())]
                for d, i in domains.items()
            ],
        ),
        "",
        f"Training: {results['train']['views']} views of {results['train']['instances']} instances. mAP is the "
        "mean of Medium and Hard mAP@k (official revisited protocol: trapezoidal AP, junk moved behind each "
        f"split's shortlist; OOD rect.: rectangular AP); chance (random ranking) ID {fmt(chance.get('id'))}, "
        f"OOD {fmt(chance.get('ood'))}. Claims use `{_ours(results)}`.",
        "",
        markdown_table(
            ["scorer", "ID mAP", "OOD mAP", "avg mAP", "OOD mAP (rect. AP)", "OOD Easy / Medium / Hard"],
            [
                [
                    sc,
                    row["id"],
                    row["ood"],
                    row["avg"],
                    row.get("ood_rect"),
                    " / ".join(fmt(row.get(f"ood_{p}")) for p in ("easy", "medium", "hard")),
                ]
                for sc, row in results["summary"].items()
            ],
        ),
    ]
    per = results["map"]
    scorers = list(next(iter(per.values())))
    lines += [
        "",
        "### Per domain: Easy / Medium / Hard mAP",
        "",
        markdown_table(
            ["scorer", *per],
            [
                [sc, *(" / ".join(fmt(per[d][sc].get(p)) for p in ("easy", "medium", "hard")) for d in per)]
                for sc in scorers
            ],
        ),
    ]
    aucs = results.get("pair_auc", {})
    if aucs:
        lines += [
            "",
            "### Pair AUC on the shortlists (each scorer's pair term)",
            "",
            markdown_table(
                ["scorer", *aucs], [[sc, *(aucs[d].get(sc) for d in aucs)] for sc in next(iter(aucs.values()))]
            ),
        ]
    if results.get("cost"):
        lines += [
            "",
            "### Cost per pair",
            "",
            markdown_table(
                ["re-ranker", "parameters", "µs per pair"],
                [[sc, c["params"], c["us_per_pair"]] for sc, c in results["cost"].items()],
            ),
        ]
        diag = diagnostics(results)
        if diag:
            lines += [
                "",
                f"Diagnostic (not a claim): ELViS / transformer inference parameters = "
                f"{fmt(diag['param_ratio_elvis_over_rrt'])} (paper: 96K / 2232K = 0.043).",
            ]
    if results.get("losses"):
        lines += [
            "",
            "Training BCE (first → last step): "
            + "; ".join(
                f"{v} {fmt(r['first'])} → {fmt(r['last'])} ({r['steps']} steps)" for v, r in results["losses"].items()
            ),
        ]
    return "\n".join(lines)
