"""Figures: for the optimizer study (Zhao et al., ICLR 2026) α_t on the UFM against Theorems 3.1–3.4 and every NC
metric vs epoch per training run; for the richness metric (Nam et al., ICLR 2026) its eigen-decomposition view."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from iclr26_shared.plotting import plot_bars, plot_curves, save_figure
from iclr26_shared.runs import RunDir

__all__ = ["plot_richness_spectrum", "plot_training", "plot_ufm"]

#: (metric, log y-axis) plotted against the epoch.
EPOCH_METRICS: tuple[tuple[str, bool], ...] = (
    ("nc0", True),
    ("nc1", True),
    ("nc2", False),
    ("nc2_norm", False),
    ("nc2_angle", False),
    ("nc2w", False),
    ("nc2m", False),
    ("nc3", False),
    ("nc4", False),
    ("train_loss", True),
    ("train_acc", False),
    ("test_acc", False),
)


def _positive(xs: Sequence[float], ys: Sequence[float]) -> tuple[list[float], list[float]]:
    pts = [(x, y) for x, y in zip(xs, ys, strict=True) if y > 0]
    return [p[0] for p in pts], [p[1] for p in pts]


def _envelope(values: Sequence[float], window: int) -> tuple[list[float], list[float]]:
    """Max over consecutive windows (the coupled SignGD α_t oscillates between ~0 and its envelope)."""
    xs, ys = [], []
    for start in range(0, len(values), window):
        chunk = values[start : start + window]
        xs.append(start + (len(chunk) - 1) / 2)
        ys.append(max(chunk))
    return xs, ys


def _plot_overlaid(
    path: Path, curves: Mapping[str, tuple[list[float], list[float]]], *, xlabel: str, ylabel: str, title: str
) -> Path:
    """Log-y line plot in which a curve that lies exactly on another stays visible: simulations are solid lines,
    each "(theory)" curve is dashed, wider-spaced and drawn with sparse open markers in its simulation's colour
    (Theorems 3.1–3.2 match the simulation to 1e-9, so a plain line would hide it)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    colours: dict[str, Any] = {}
    markers = iter(("o", "s", "^", "D", "v", "P"))
    for name, (x, y) in curves.items():
        base = name.removesuffix(" (theory)")
        if name.endswith(" (theory)"):
            every = max(1, len(x) // 12)
            ax.plot(x, y, label=name, color=colours.get(base), linestyle=(0, (6, 4)), linewidth=2.2,
                    marker=next(markers, "o"), markevery=every, markerfacecolor="none", markersize=7)  # fmt: skip
        else:
            (line,) = ax.plot(x, y, label=name, linewidth=1.2)
            colours[name] = line.get_color()
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    ax.legend()
    return save_figure(fig, path)


def plot_ufm(run: RunDir, traces: dict[str, Any], *, num_classes: int, steps: int) -> None:
    """``figures/ufm_sgd.png`` (Thms 3.1–3.2: simulated α_t and theory) and ``figures/ufm_signgd.png``
    (Thm 3.3 with its closed form; Thm 3.4 as the envelope of α_t over windows of T/100 steps)."""
    names = {
        "sgd": "SGD (coupled WD)",
        "sgdw": "SGDW (decoupled WD)",
        "signumw": "SignGD decoupled",
        "signumw_rotated": "SignGD decoupled, rotated ETF",
        "signum_constant": "SignGD coupled, constant η (envelope)",
        "signum_inverse": "SignGD coupled, η_t→0 (envelope)",
    }
    window = max(1, steps // 100)
    for fig, keys in (
        ("ufm_sgd", ("sgd", "sgdw")),
        ("ufm_signgd", ("signumw", "signumw_rotated", "signum_constant", "signum_inverse")),
    ):
        curves: dict[str, tuple[list[float], list[float]]] = {}
        for key in keys:
            if key not in traces:
                continue
            sim, theory = traces[key]
            xs = list(range(len(sim)))
            if key.startswith("signum_") or key.endswith("_rotated"):
                curves[names[key]] = _positive(*_envelope(sim, window))
            else:
                curves[names[key]] = _positive(xs, sim)
            if theory is not None:
                curves[names[key] + " (theory)"] = _positive(xs, theory)
        if curves:
            _plot_overlaid(run.figure_path(fig), curves, xlabel="step", ylabel="α_t = |Wᵀ1|²/K",
                           title=f"UFM, K = {num_classes}")  # fmt: skip


def plot_training(run: RunDir, runs: Sequence[dict[str, Any]], rows: Sequence[dict[str, Any]]) -> None:
    """``figures/epoch_<metric>.png`` (one curve per optimizer: its best-NC3 valid run, else its first run; plus
    the momentum ablation) and ``figures/final_nc0.png`` (every run)."""
    if not runs:
        return
    shown: dict[str, dict[str, Any]] = {}
    for r in runs:
        if r["role"] != "grid":
            continue
        cur = shown.get(r["optimizer"])
        better = r["valid"] and (cur is None or not cur["valid"] or r["final"]["nc3"] < cur["final"]["nc3"])
        if cur is None or better:
            shown[r["optimizer"]] = r
    chosen = [*shown.values(), *(r for r in runs if r["role"].startswith("ablation"))]
    labels = {r["index"]: r["label"] + (" (ablation)" if r["role"].startswith("ablation") else "") for r in chosen}
    for metric, logy in EPOCH_METRICS:
        curves: dict[str, tuple[list[float], list[float]]] = {}
        for idx, label in labels.items():
            pts = [
                (r["epoch"], r[metric]) for r in rows if r.get("run") == idx and metric in r and r[metric] == r[metric]
            ]
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            if logy:
                xs, ys = _positive(xs, ys)
            if xs:
                curves[label] = (xs, ys)
        if curves:
            plot_curves(run.figure_path(f"epoch_{metric}"), curves, xlabel="epoch", ylabel=metric, logy=logy)
    finals = {r["label"]: r["final"]["nc0"] for r in runs if r["final"]["nc0"] == r["final"]["nc0"]}
    if finals:
        import math

        logs = {k: math.log10(max(v, 1e-300)) for k, v in finals.items()}
        plot_bars(run.figure_path("final_nc0"), logs, ylabel="log10 NC0 (final)", title="final NC0 per run")


def plot_richness_spectrum(path: str | Path, spectrum: Mapping[str, Sequence[float]], *, title: str = "") -> Path:
    """The eigen-decomposition view of D_LR (Nam et al., ICLR 2026) as one figure: the relative eigenvalues
    ρ_k/ρ_1 and the cumulative utilisation Π̂(k) (and quality Π*(k) when present) against k, log y-axis
    (``spectrum`` as returned by :func:`iclr26_theory_metrics.ops.richness.richness_spectrum`)."""
    names = {"relative_eigenvalues": "ρ_k / ρ_1", "utilisation": "utilisation Π̂(k)", "quality": "quality Π*(k)"}
    curves = {
        label: _positive([float(k) for k in range(1, len(spectrum[key]) + 1)], list(spectrum[key]))
        for key, label in names.items()
        if spectrum.get(key)
    }
    return plot_curves(path, curves, xlabel="eigenfunction k", ylabel="", title=title, logy=True)
