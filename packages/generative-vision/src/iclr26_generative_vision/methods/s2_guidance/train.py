"""``run(cfg, run_dir)`` of ``s2-guidance``: the toy and image experiments, figures, results."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from iclr26_generative_vision.methods.s2_guidance.config import S2GuidanceConfig
from iclr26_shared.runs import RunDir

__all__ = ["run"]


def _quiet_diffusers() -> None:
    """diffusers logs an 'experimental feature' warning for every guider built; keep errors only."""
    from diffusers.utils import logging as dlogging

    dlogging.set_verbosity_error()
    logging.getLogger("diffusers").setLevel(logging.ERROR)


def _gmm_figures(run: RunDir, figure_data: Mapping[str, Any]) -> None:
    import matplotlib.pyplot as plt

    from iclr26_shared.plotting import save_figure

    for tag, d in figure_data.items():
        names = [n for n in d if n not in ("labels", "truth")]
        fig, axes = plt.subplots(1, len(names) + 1, figsize=(2.6 * (len(names) + 1), 2.6), squeeze=False)
        panels = [("truth", d["truth"])] + [(n, d[n]) for n in names]
        for ax, (name, xs) in zip(axes[0], panels, strict=True):
            xs = np.asarray(xs, dtype=np.float64)
            if xs.shape[1] == 1:
                ax.hist(xs[:, 0], bins=80, range=(-9, 9), density=True, color="tab:blue", alpha=0.8)
            else:
                ax.scatter(xs[:, 0], xs[:, 1], s=1, c=np.asarray(d["labels"]), cmap="tab10", alpha=0.5)
                ax.set_xlim(-9, 9)
                ax.set_ylim(-9, 9)
            ax.set_title(name, fontsize=8)
        save_figure(fig, run.figure_path(f"gmm_{tag}"))


def _image_figures(run: RunDir, grids: Mapping[str, torch.Tensor]) -> None:
    from iclr26_shared.plotting import plot_images

    for name, grid in grids.items():
        k, per = grid.shape[:2]
        show = grid[:, : min(per, 8)]  # [K, m, C, S, S]
        imgs = ((show[:, :, 0].reshape(-1, *show.shape[-2:]) + 1) / 2).clamp(0, 1).numpy()
        plot_images(run.figure_path(f"samples_{name}"), imgs, ncols=show.shape[1], title=f"{name} (rows: classes)")


def _sweep_figure(run: RunDir, results: Mapping[str, Any]) -> None:
    """W₂ (toys) and FD (DiT) against ω; ω = 0 is CFG."""
    import matplotlib.pyplot as plt

    from iclr26_shared.plotting import save_figure

    panels: list[tuple[str, str, list[dict[str, Any]]]] = [
        (f"GMM {tag} (MLP)", "w2", res["s2_sweep"]) for tag, res in sorted(results.get("gmm", {}).items())
    ]
    if "images" in results:
        panels.append((f"{results['images']['dataset']} DiT", "fd", results["images"]["s2_sweep"]))
    panels = [p for p in panels if p[2]]
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 2.8), squeeze=False)
    for ax, (title, key, rows) in zip(axes[0], panels, strict=True):
        ax.plot([r["s2_scale"] for r in rows], [r[key] for r in rows], marker="o")
        ax.set_xlabel("ω (0 = CFG)")
        ax.set_ylabel("W2 to truth" if key == "w2" else "FD (in-repo features)")
        ax.set_title(title, fontsize=8)
    save_figure(fig, run.figure_path("s2_sweep"))


def run(cfg: S2GuidanceConfig, run_dir: RunDir) -> dict[str, Any]:
    """Run the experiments selected by ``cfg.experiment`` and return the results (claims added by the runner)."""
    _quiet_diffusers()
    results: dict[str, Any] = {"experiment": cfg.experiment, "guiders": list(cfg.guiders)}
    if cfg.run_gmm:
        from iclr26_generative_vision.methods.s2_guidance.gmm import run_gmm

        results["gmm"], figure_data = run_gmm(cfg, run_dir)
        _gmm_figures(run_dir, figure_data)
    if cfg.run_images:
        from iclr26_generative_vision.methods.s2_guidance.images import run_images

        results["images"], grids = run_images(cfg, run_dir)
        _image_figures(run_dir, grids)
    _sweep_figure(run_dir, results)
    return results
