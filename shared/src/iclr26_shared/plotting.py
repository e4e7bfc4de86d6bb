"""Matplotlib (Agg) figures that every method report uses; files are written atomically."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg", force=True)
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from iclr26_shared.io import atomic_write_bytes  # noqa: E402

__all__ = ["VERDICT_COLOURS", "image_grid", "plot_bars", "plot_curves", "plot_forest", "plot_images", "save_figure"]

#: Colour of each verdict in the forest plot.
VERDICT_COLOURS = {"holds": "tab:green", "fails": "tab:red", "inconclusive": "tab:grey"}

ArrayLike = Sequence[float] | np.ndarray


def save_figure(fig: Figure, path: str | Path, *, dpi: int = 120) -> Path:
    """Render ``fig`` to PNG at ``path`` atomically and close it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return atomic_write_bytes(path, buf.getvalue())


def plot_curves(
    path: str | Path,
    curves: Mapping[str, tuple[ArrayLike, ArrayLike]],
    *,
    bands: Mapping[str, tuple[ArrayLike, ArrayLike]] | None = None,
    xlabel: str = "step",
    ylabel: str = "",
    title: str = "",
    logx: bool = False,
    logy: bool = False,
) -> Path:
    """Line plot of named ``(x, y)`` curves, with optional ``(low, high)`` confidence bands per name."""
    if not curves:
        raise ValueError("plot_curves needs at least one curve")
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, (x, y) in curves.items():
        (line,) = ax.plot(np.asarray(x), np.asarray(y), label=name, marker="o" if len(x) < 20 else None)
        if bands and name in bands:
            lo, hi = bands[name]
            ax.fill_between(np.asarray(x), np.asarray(lo), np.asarray(hi), color=line.get_color(), alpha=0.2)
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    ax.legend()
    return save_figure(fig, path)


def plot_bars(
    path: str | Path,
    values: Mapping[str, float],
    *,
    errors: Mapping[str, float] | None = None,
    ylabel: str = "",
    title: str = "",
) -> Path:
    """Bar chart of named values with optional symmetric error bars."""
    if not values:
        raise ValueError("plot_bars needs at least one value")
    names = list(values)
    fig, ax = plt.subplots(figsize=(max(4, 0.9 * len(names) + 2), 4))
    err = [errors.get(n, 0.0) for n in names] if errors else None
    ax.bar(names, [values[n] for n in names], yerr=err, capsize=4, color="tab:blue", alpha=0.8)
    ax.set(ylabel=ylabel, title=title)
    ax.grid(True, axis="y", alpha=0.3)
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    return save_figure(fig, path)


def image_grid(images: np.ndarray, ncols: int, *, pad: int = 1) -> np.ndarray:
    """Tile ``[N, H, W(, 3)]`` into one ``[rows·(H+pad)−pad, ncols·(W+pad)−pad(, 3)]`` array, row-major
    (image ``i`` at row ``i // ncols``, column ``i % ncols``); gaps and empty cells are white (the
    images' maximum: 1.0, or 255 for uint8)."""
    images = np.asarray(images)
    n, h, w = images.shape[:3]
    ncols = max(1, min(ncols, n))
    nrows = (n + ncols - 1) // ncols
    white = 255 if images.dtype == np.uint8 else 1.0
    grid = np.full((nrows * (h + pad) - pad, ncols * (w + pad) - pad, *images.shape[3:]), white, dtype=images.dtype)
    for i in range(n):
        r, c = divmod(i, ncols)
        grid[r * (h + pad) : r * (h + pad) + h, c * (w + pad) : c * (w + pad) + w] = images[i]
    return grid


def plot_images(
    path: str | Path, images: np.ndarray, *, titles: Sequence[str] | None = None, ncols: int = 8, title: str = ""
) -> Path:
    """Grid of images ``[N, H, W]`` (grey) or ``[N, H, W, 3]`` (RGB), values in [0, 1] or uint8."""
    images = np.asarray(images)
    if images.ndim not in (3, 4):
        raise ValueError(f"plot_images expects [N, H, W] or [N, H, W, 3], got shape {images.shape}")
    n = len(images)
    ncols = max(1, min(ncols, n))
    nrows = (n + ncols - 1) // ncols
    size = (1.5 * ncols, 1.5 * nrows + (0.4 if title else 0))
    if titles is None:  # one mosaic, one imshow: a subplot per image costs seconds at hundreds of images
        fig, ax = plt.subplots(figsize=size)
        ax.axis("off")
        ax.imshow(image_grid(images, ncols), cmap="gray" if images.ndim == 3 else None, interpolation="nearest")
        if title:
            fig.suptitle(title)
        return save_figure(fig, path)
    fig, axes = plt.subplots(nrows, ncols, figsize=size, squeeze=False)
    for i, ax in enumerate(axes.flat):
        ax.axis("off")
        if i < n:
            ax.imshow(images[i], cmap="gray" if images.ndim == 3 else None)
            if titles is not None:
                ax.set_title(str(titles[i]), fontsize=7)
    if title:
        fig.suptitle(title)
    return save_figure(fig, path)


def plot_forest(
    path: str | Path,
    rows: Sequence[tuple[str, float, float, float, float, str]],
    *,
    title: str = "",
) -> Path:
    """Forest plot of claims: one row per ``(label, gain, low, high, margin, verdict)``.

    Claims measure different metrics, so each row is drawn on its own scale: ``(value − margin) / s`` with
    ``s`` the row's largest ``|value − margin|`` (gain, both interval ends), so the margin sits at 0 for
    every row and the sign of each end against it is what decides the verdict; the numbers themselves
    are written beside each row. A single-seed row has ``low == high == gain`` (a dot, no interval).
    """
    if not rows:
        raise ValueError("plot_forest needs at least one row")
    n = len(rows)
    fig, ax = plt.subplots(figsize=(10, max(2.0, 0.32 * n + 1.0)))
    for i, (_label, gain, low, high, margin, verdict) in enumerate(rows):
        y = n - 1 - i
        colour = VERDICT_COLOURS.get(verdict, "tab:grey")
        finite = [v - margin for v in (gain, low, high) if np.isfinite(v)]
        scale = max((abs(v) for v in finite), default=0.0) or 1.0
        if np.isfinite(low) and np.isfinite(high) and low != high:
            ax.plot([(low - margin) / scale, (high - margin) / scale], [y, y], color=colour, lw=2)
        if np.isfinite(gain):
            ax.plot([(gain - margin) / scale], [y], "o", color=colour, ms=5)
        text = f"{gain:.3g}" + (f" [{low:.3g}, {high:.3g}]" if low != high else "") + f" vs {margin:.3g}"
        ax.text(1.08, y, text, va="center", fontsize=7, transform=ax.get_yaxis_transform())
    ax.axvline(0.0, color="black", lw=0.8)
    ax.set_yticks(range(n))
    ax.set_yticklabels([r[0] for r in reversed(rows)], fontsize=7)
    ax.set_xlim(-1.15, 1.15)
    ax.set_xlabel("gain − margin, scaled per claim (right of 0 supports the claim)")
    handles = [Line2D([], [], color=c, marker="o", lw=2, label=v) for v, c in VERDICT_COLOURS.items()]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, -0.08 - 0.6 / max(n, 1)), ncol=3, fontsize=8)
    if title:
        ax.set_title(title)
    ax.grid(True, axis="x", alpha=0.3)
    return save_figure(fig, path)
