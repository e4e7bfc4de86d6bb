"""The paper's claims for ``crystal-fourier-transformer``, checked on results.json (light: no torch).

Paper: *A Single Architecture for Representing Invariance Under Any Space Group* (arXiv 2512.13989):
exact invariance of the symmetry-adapted basis (Thm. 3.2), zero-shot generalisation to held-out space
groups (§5, "zero-shot"), the standard-positional-encoding ablation, and accuracy/speed against graph
baselines (Tables 1-2). The no-skill level of every MAE claim is the mean predictor (the mean of the
training targets) on the same split.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from iclr26_shared.spec import Claim
from iclr26_shared.tables import markdown_table

__all__ = ["INVARIANCE_TOL", "SPEED_MARGIN", "claims", "report"]

#: Relative float64 tolerance for "exactly invariant".
INVARIANCE_TOL = 1e-9
#: A speed claim needs at least a 1.1x speed-up (timer noise on a shared machine is below that).
SPEED_MARGIN = 0.1


def claims(results: Mapping[str, Any]) -> list[Claim]:
    """(1) exact invariance over all checked groups; (2) zero-shot: held-out MAE close to seen-group MAE,
    below the mean predictor's, and below the plain-Fourier ablation's; (3) accuracy and speed against
    the e3nn baseline (only for the models that were trained)."""
    cfg = results.get("config", {})
    inv = results["invariance"]
    cft = results["cft"]
    mean = results["mean_predictor"]
    mean_holdout = float(mean["holdout_mae"])
    mean_test = float(mean["test_mae"])
    margin = float(cfg.get("mae_margin", 0.01))
    # the trivial answer is the mean predictor: a side at or above its MAE shows no skill
    chance_holdout, chance_test = mean_holdout, mean_test
    # "held-out close to seen" is judged only when the seen-group fit beats the mean predictor by the
    # margin: a seen-group MAE that gets worse would otherwise make the ratio easier to pass
    seen_fits = float(cft["test_mae"]) < mean_test - margin
    out = [
        Claim(
            claim=f"symmetry-adapted basis is invariant under every operation and lattice translation "
            f"({inv['groups_checked']} of 230 groups checked)",
            metric="max relative error",
            ours=inv["max_rel_error"],
            threshold=INVARIANCE_TOL,
            better="lower",
            paper="exact (Thm. 3.2)",
        )
    ]
    ratio = float(cfg.get("zero_shot_ratio", 1.5))
    out += [
        Claim(
            claim=f"held-out space groups (zero-shot) reach an MAE within {ratio:g}x of the seen groups' "
            f"(judged only when the seen-group MAE beats the mean predictor)",
            metric=f"held-out MAE vs {ratio:g} x seen-group test MAE",
            ours=cft["holdout_mae"],
            baseline=ratio * cft["test_mae"] if seen_fits else math.nan,
            better="lower",
            margin=margin,
            chance=chance_holdout,
            paper="held-out close to seen (≈2x for groups 71/140 on bulk modulus)",
        ),
        Claim(
            claim="held-out space groups (zero-shot): CFT beats the mean predictor",
            metric="held-out MAE (CFT vs mean of train targets)",
            ours=cft["holdout_mae"],
            baseline=mean_holdout,
            better="lower",
            margin=margin,
            paper="zero-shot MAE far below the target spread",
        ),
    ]
    if "plain" in results:
        out.append(
            Claim(
                claim="zero-shot MAE is lower with the symmetry-adapted encoding than with plain Fourier features",
                metric="held-out MAE (CFT vs plain PE)",
                ours=cft["holdout_mae"],
                baseline=results["plain"]["holdout_mae"],
                better="lower",
                margin=margin,
                chance=chance_holdout,
                paper="standard-PE ablation is worse",
            )
        )
    if "e3nn" in results:
        e3 = results["e3nn"]
        acc = float(cfg.get("accuracy_ratio", 1.5))
        out += [
            Claim(
                claim=f"CFT accuracy is competitive with an E(3)-equivariant network (within {acc:g}x)",
                metric=f"seen-group test MAE (CFT vs {acc:g} x e3nn)",
                ours=cft["test_mae"],
                baseline=acc * e3["test_mae"],
                better="lower",
                margin=margin,
                chance=chance_test,
                paper="0.306 vs 0.213 eV band gap (vs Matformer, Table 1)",
            ),
            Claim(
                claim="CFT trains faster than the E(3)-equivariant graph baseline",
                metric="train speed-up over e3nn (x, s/epoch ratio)",
                ours=e3["train_s_per_epoch"] / cft["train_s_per_epoch"],
                threshold=1.0,
                better="higher",
                margin=SPEED_MARGIN,
                timing=True,
                paper="6-7x faster than graph baselines (Table 2)",
            ),
            Claim(
                claim="CFT infers faster than the E(3)-equivariant graph baseline",
                metric="inference speed-up over e3nn (x, structures/s ratio)",
                ours=cft["inference_structures_per_s"] / e3["inference_structures_per_s"],
                threshold=1.0,
                better="higher",
                margin=SPEED_MARGIN,
                timing=True,
                paper="6-7x faster than graph baselines (Table 2)",
            ),
        ]
    return out


def _f(x: Any, fmt: str = ".4f") -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def report(results: Mapping[str, Any]) -> str:
    """Markdown table of every model's MAEs and timings, and the data summary."""
    table = []
    if "mean_predictor" in results:
        mp = results["mean_predictor"]
        table.append(["mean of train targets", _f(mp["test_mae"]), _f(mp["holdout_mae"]), "—", "—", "—"])
    for m in ("cft", "plain", "e3nn"):
        if m in results:
            r = results[m]
            table.append([m, _f(r["test_mae"]), _f(r["holdout_mae"]), _f(r.get("real_mae")),
                          _f(r["train_s_per_epoch"], ".3g"), _f(r["inference_structures_per_s"], ".4g")])  # fmt: skip
    headers = ["model", "seen test MAE", "held-out MAE", "real MAE", "train s/epoch", "infer struct/s"]
    lines = ["## Models", "", *markdown_table(headers, table).splitlines()]
    per_group = {m: results[m].get("holdout_mae_per_group", {}) for m in ("cft", "plain", "e3nn") if m in results}
    groups = sorted({g for v in per_group.values() for g in v}, key=int)
    if groups:
        rows = [[m, *(f"{v[g]:.3f}" if g in v else "—" for g in groups)] for m, v in per_group.items()]
        lines += ["", "Held-out MAE per group:", "", *markdown_table(["model", *groups], rows).splitlines()]
    per_family = {m: results[m].get("holdout_mae_per_family", {}) for m in ("cft", "plain", "e3nn") if m in results}
    if "mean_predictor" in results:
        per_family = {"mean predictor": results["mean_predictor"].get("holdout_mae_per_family", {}), **per_family}
    families = sorted({f for v in per_family.values() for f in v})
    if families:
        rows = [[m, *(f"{v[f]:.3f}" if f in v else "—" for f in families)] for m, v in per_family.items()]
        lines += [
            "",
            "Held-out MAE per structure family:",
            "",
            *markdown_table(["model", *families], rows).splitlines(),
        ]
    d = results.get("data", {})
    lines += ["", f"Data: {d.get('num_crystals')} {d.get('generator')} crystals, split {d.get('split_sizes')}, "
              f"held-out detected groups {d.get('holdout_detected_groups')}; target {d.get('label', 'emt')} "
              f"eV/atom (mean {d.get('target_mean', 0):.3f}, std {d.get('target_std', 0):.3f})."]  # fmt: skip
    return "\n".join(lines)
