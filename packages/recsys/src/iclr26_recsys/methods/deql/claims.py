"""Claims and report of ``deql`` (checks over results.json; no heavy imports)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from iclr26_shared.spec import Claim

__all__ = ["claims", "report"]

#: ML-20M, strong generalisation, Recall@20 (paper via notes §4.3): DEQL(L2) / EDLAE (b = 0) / EASE.
PAPER_R20 = {"deql": 0.3940, "edlae": 0.3925, "ease": 0.3905}
_NAMES = {"deql": "DEQL (b > 0)", "edlae": "EDLAE (b = 0)", "ease": "EASE"}


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """(1) tuned DEQL ≥ tuned EDLAE and ≥ tuned EASE in test Recall@20 and NDCG@100 (mean over splits);
    (2) the closed form equals the gradient-descent minimiser of the DEQL objective."""
    mean = results["test_mean"]
    n = len(results["splits"])
    data = results["dataset"]["name"]
    out = []
    for metric in ("recall@20", "ndcg@100"):
        for other in ("edlae", "ease"):
            paper = (
                f"ML-20M R@20 {PAPER_R20['deql']} vs {PAPER_R20[other]}" if metric == "recall@20" else "(not quoted)"
            )
            ours, base = mean["deql"][metric], mean[other][metric]
            out.append(
                Claim(
                    claim=f"tuned DEQL (b > 0) >= tuned {_NAMES[other]} on {data} held-out users",
                    metric=f"test {metric}, mean of {n} split(s)",
                    ours=ours,
                    baseline=base,
                    holds=ours >= base,
                    paper=paper,
                )
            )
    gd = results["gd_check"]
    tol = float(gd.get("tolerance", 1e-4))
    out.append(
        Claim(
            claim=f"DEQL closed form = gradient-descent minimiser of the DEQL objective ({gd['items']} items)",
            metric="‖W_gd − W_closed‖_F / ‖W_closed‖_F",
            ours=gd["relative_error"],
            baseline=tol,
            holds=gd["relative_error"] <= tol and gd["objective_gap"] >= -1e-9 * abs(gd["objective_closed_form"]),
            paper="exact (closed form)",
        )
    )
    return out


def _fmt_params(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items() if k != "p" or v)


def report(results: Mapping[str, Any]) -> str:
    """Markdown: the three tuned models (mean ± std test metrics), paired differences, per-split settings."""
    mean, std = results["test_mean"], results["test_std"]
    splits = results["splits"]
    d = results["dataset"]
    lines = [
        "## Results",
        "",
        f"Data: {d['name']} binarised, {d['users']} users × {d['items']} items, {d['interactions']} interactions; "
        f"{len(splits)} strong-generalisation split(s) ({results.get('split_mode', 'random')}: "
        f"{' / '.join(str(s['n_val_users']) for s in splits)} evaluated validation users, "
        f"{' / '.join(str(s['n_test_users']) for s in splits)} test users, "
        f"{splits[0]['n_train_users']} training users in split 0; 20% of each held-out user's items predicted); "
        f"hyper-parameters chosen by validation {results['select_metric']}.",
        "",
        "| model | Recall@20 | Recall@50 | NDCG@20 | NDCG@100 | tuned hyper-parameters (split 0) |",
        "|---|---|---|---|---|---|",
    ]
    for f in ("ease", "edlae", "deql"):
        cells = [f"{mean[f][m]:.4f} ± {std[f][m]:.4f}" for m in ("recall@20", "recall@50", "ndcg@20", "ndcg@100")]
        lines.append(f"| {_NAMES[f]} | " + " | ".join(cells) + f" | {_fmt_params(splits[0]['best'][f]['params'])} |")
    lines += ["", "Paired differences on the same splits (DEQL − other; wins = splits where DEQL is higher):", ""]
    lines += ["| comparison | metric | mean diff | std | wins / splits |", "|---|---|---|---|---|"]
    for key, per in results["paired"].items():
        for m in ("recall@20", "ndcg@100"):
            v = per[m]
            lines.append(f"| {key} | {m} | {v['mean']:+.4f} | {v['std']:.4f} | {v['wins']} / {v['splits']} |")
    lines += ["", "Tuned hyper-parameters per split:", "", "| split | EASE | EDLAE | DEQL |", "|---|---|---|---|"]
    for s in splits:
        row = " | ".join(_fmt_params(s["best"][f]["params"]) for f in ("ease", "edlae", "deql"))
        lines.append(f"| {s['split']} | {row} |")
    gd = results["gd_check"]
    lines += [
        "",
        f"Gradient check: {gd['method']} on {gd['items']} items × {gd['users']} users, {gd['steps']} steps: "
        f"relative error {gd['relative_error']:.2e}, objective gap {gd['objective_gap']:.3e} "
        f"(closed form {gd['objective_closed_form']:.6g}).",
    ]
    return "\n".join(lines)
