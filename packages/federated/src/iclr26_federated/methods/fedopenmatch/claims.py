"""The paper's central claims, checked on our results (mean over seeds of the final round).

1. FedOpenMatch has higher open-set balanced accuracy than FedAvg+OpenMatch and FedAvg+FixMatch.
2. Each of GS, LA and LCR adds to it: FedOpenMatch beats each leave-one-out ablation.
3. Its closed-set accuracy is not worse than the labeled-only lower bound.

A claim whose variants were not run is left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iclr26_shared.spec import Claim

__all__ = ["claims", "report"]

_PAPER_OPEN = "CIFAR-100 80/20@25 Dir(0.3): 50.40 vs OpenMatch 1.74"
_PAPER_ABL = {
    "gs": "ablation Dir(0.1): base 34.81 → +GS 39.51",
    "la": "ablation Dir(0.1): +GS 39.51 → +GS+LA 43.65",
    "lcr": "ablation Dir(0.1): +GS+LA 43.65 → +LCR 48.36",
}
_NAMES = {"gs": "gradient stop (GS)", "la": "logit adjustment (LA)", "lcr": "logit-consistency (LCR)"}


def _ms(stats: Mapping[str, Any], metric: str) -> str:
    return f"{stats[f'{metric}_mean']:.4f} ± {stats[f'{metric}_std']:.4f} (n={stats['n_seeds']})"


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """Evaluate the claims on ``results["variants"]``."""
    v = results["variants"]
    out: list[Claim] = []
    if "fedopenmatch" not in v:
        return out
    ours = v["fedopenmatch"]
    for base, label in (("fedavg-openmatch", "FedAvg+OpenMatch"), ("fedavg-fixmatch", "FedAvg+FixMatch")):
        if base in v:
            out.append(
                Claim(
                    claim=f"FedOpenMatch has higher open-set balanced accuracy than {label}",
                    metric=f"open_bacc (mean over seeds; ours {_ms(ours, 'open_bacc')})",
                    ours=ours["open_bacc_mean"],
                    baseline=v[base]["open_bacc_mean"],
                    holds=ours["open_bacc_mean"] > v[base]["open_bacc_mean"],
                    paper=_PAPER_OPEN if base == "fedavg-openmatch" else "FedAvg+FixMatch below FedOpenMatch",
                )
            )
    for comp, ablated in (("gs", "no-gs"), ("la", "no-la"), ("lcr", "no-lcr")):
        if ablated in v:
            out.append(
                Claim(
                    claim=f"{_NAMES[comp]} adds to FedOpenMatch (full vs without it)",
                    metric=f"open_bacc (mean over seeds; without it {_ms(v[ablated], 'open_bacc')})",
                    ours=ours["open_bacc_mean"],
                    baseline=v[ablated]["open_bacc_mean"],
                    holds=ours["open_bacc_mean"] > v[ablated]["open_bacc_mean"],
                    paper=_PAPER_ABL[comp],
                )
            )
    if "labeled-only" in v:
        out.append(
            Claim(
                claim="FedOpenMatch's closed-set accuracy is not worse than labeled-only",
                metric=f"closed_acc (mean over seeds; ours {_ms(ours, 'closed_acc')})",
                ours=ours["closed_acc_mean"],
                baseline=v["labeled-only"]["closed_acc_mean"],
                holds=ours["closed_acc_mean"] >= v["labeled-only"]["closed_acc_mean"],
                paper="labeled-only is the lower bound",
            )
        )
    return out


def report(results: Mapping[str, Any]) -> str:
    """Markdown body for report.md: the variant table, failures and timing."""
    lines = [
        "## Variants (final round, mean ± std over seeds)",
        "",
        "| variant | open-set bal. acc | closed-set acc | unknown recall | known recall | seeds |",
        "|---|---|---|---|---|---|",
    ]
    for name, s in results["variants"].items():
        cells = [
            f"{s[f'{m}_mean']:.4f} ± {s[f'{m}_std']:.4f}"
            for m in ("open_bacc", "closed_acc", "unknown_recall", "known_recall")
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {s['n_seeds']} |")
    lines += [
        "",
        f"Engine: {results.get('engine')}; seconds per round: {results.get('seconds_per_round', float('nan')):.3f}.",
    ]
    failures = results.get("failures") or []
    lines += ["", f"Client failures (reported, run continued): {len(failures)}"]
    for f in failures[:20]:
        lines.append(f"- {f['variant']} seed {f['seed']} round {f['round']} node {f['node_id']}: {f['reason']}")
    return "\n".join(lines) + "\n"
