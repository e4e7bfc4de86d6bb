"""``run(cfg, run_dir)`` of ``s2-guidance``: the toy and image experiments, figures, results."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from iclr26_generative_vision.methods.s2_guidance.config import S2GuidanceConfig
from iclr26_shared.runs import RunDir

__all__ = ["dry_run", "run"]


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
    results: dict[str, Any] = {
        "experiment": cfg.experiment,
        "guiders": list(cfg.guiders),
        "image_guiders": list(cfg.dit_guiders),
    }
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


def dry_run(cfg: S2GuidanceConfig, device: torch.device) -> dict[str, Any]:
    """The preset's networks at their real sizes (the DiT on two of its images when ``run_images``, the
    toy MLP when ``run_gmm``): one AdamW step of the ε-prediction loss each, then one CFG evaluation at
    batch 2; ``{"parameters", "train_loss", "eval_loss"}`` summed over the networks."""
    from iclr26_generative_vision.data.gmm import toy_mixture
    from iclr26_generative_vision.methods.s2_guidance.images import load_images
    from iclr26_generative_vision.methods.s2_guidance.model import build_dit, build_mlp, make_training_scheduler

    _quiet_diffusers()
    sched = make_training_scheduler(cfg)
    gen = torch.Generator().manual_seed(0)
    batches: list[tuple[torch.nn.Module, torch.Tensor, torch.Tensor]] = []
    if cfg.run_images:
        data = load_images(cfg, 0)
        batches.append((build_dit(cfg, data), data.x_train[:2], data.y_train[:2]))
    if cfg.run_gmm:
        gmm = toy_mixture(cfg.gmm_dims[0], cfg.gmm_spread, cfg.gmm_std)
        x0, labels = gmm.sample(2, gen)
        batches.append((build_mlp(cfg, gmm.dim, gmm.num_components), x0.float(), labels))
    params, train_loss, eval_loss = 0, 0.0, 0.0
    for model, x0, labels in batches:
        model = model.to(device).train()
        x0, labels = x0.to(device), labels.to(device)
        opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
        t = torch.randint(0, cfg.num_train_timesteps, (2,), generator=gen).to(device)
        noise = torch.randn(x0.shape, generator=gen).to(device)
        x_t = sched.add_noise(x0, noise, t)  # pyright: ignore[reportArgumentType]
        loss = torch.nn.functional.mse_loss(model(x_t, t, labels), noise)
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():  # one CFG step: the conditional and the unconditional pass
            null = torch.full_like(labels, model.null_label)  # pyright: ignore[reportArgumentType]
            eps = model(x_t, t, labels) + (cfg.image_guidance_scale - 1) * (model(x_t, t, labels) - model(x_t, t, null))
            eval_loss += float(torch.nn.functional.mse_loss(eps, noise))
        params += sum(p.numel() for p in model.parameters() if p.requires_grad)
        train_loss += float(loss.detach())
    return {"parameters": params, "train_loss": train_loss, "eval_loss": eval_loss}
