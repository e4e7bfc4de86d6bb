"""The image experiment: a class-conditional DiT trained by us, sampled with each guider at the same λ.

Real images that ship offline (``digits`` by default, ``mnist-5k``; ``fashion-mnist`` opt-in). The DiT
(diffusers blocks) is trained with ε-prediction on the DDPM forward process and classifier-free label
dropout; sampling uses the EMA weights. Evaluation: a small CNN trained on the same training images gives
(a) class accuracy of the samples w.r.t. their conditioning label and (b) penultimate features for a
Fréchet distance to the real training images. This is an FID-*style* score on our own features, **not**
Inception FID.
"""

from __future__ import annotations

import copy
import math
from typing import Any, Protocol, cast

import torch

from iclr26_generative_vision.guidance.factory import GuiderSettings
from iclr26_generative_vision.methods.s2_guidance.config import S2GuidanceConfig
from iclr26_generative_vision.methods.s2_guidance.model import build_dit, drop_labels, make_training_scheduler
from iclr26_generative_vision.methods.s2_guidance.sampling import (
    correction_alignment,
    guider_settings,
    run_guider,
    sweep_reuse,
    sweep_settings,
)
from iclr26_generative_vision.metrics.classifier import accuracy, features, train_classifier
from iclr26_generative_vision.metrics.distances import frechet_distance
from iclr26_generative_vision.nn.dit import ClassConditionalDiT
from iclr26_shared.errors import DataError
from iclr26_shared.images import ImageTensors, load_image_tensors
from iclr26_shared.runs import RunDir
from iclr26_shared.seeding import get_rng_state, set_rng_state

__all__ = ["ImageDataConfig", "load_images", "run_images", "train_dit"]


class ImageDataConfig(Protocol):
    """What :func:`load_images` reads from a config (S²-Guidance's and DUPA's both qualify)."""

    @property
    def dataset(self) -> str: ...  # noqa: D102

    @property
    def max_train(self) -> int: ...  # noqa: D102


def load_images(cfg: ImageDataConfig, seed: int) -> ImageTensors:
    """``cfg.dataset`` in [−1, 1] (``x/127.5 − 1``), capped class-stratified at ``max_train`` train and test
    images (0: all). The DiT needs square images and the sample figures show one channel, so a set of
    another shape raises :class:`DataError`."""
    data = load_image_tensors(cfg.dataset, n_train=cfg.max_train, n_test=cfg.max_train, seed=seed, scale="symmetric")
    c, h, w = data.image_shape
    if c != 1 or h != w:
        raise DataError(f"{cfg.dataset}: expected square grey images [N, 1, S, S], got {tuple(data.x_train.shape)}")
    return data


def _lr_at(step: int, cfg: S2GuidanceConfig) -> float:
    warmup = max(1, cfg.train_steps // 50)
    if step <= warmup:
        return cfg.lr * step / warmup
    return 0.5 * cfg.lr * (1 + math.cos(math.pi * (step - warmup) / max(1, cfg.train_steps - warmup)))


def train_dit(cfg: S2GuidanceConfig, data: ImageTensors, run: RunDir) -> ClassConditionalDiT:
    """Train the DiT (AdamW, warmup + cosine, EMA), resuming from the run's last checkpoint; returns the EMA.

    Runs under ``torchrun`` through :mod:`iclr26_shared.distributed` (``run.dist``): every rank draws the
    same global batch of ``cfg.batch_size`` (indices, dropped labels, t, ε) from the same seeded generator
    and trains on its share ``batch[rank::world]``; DDP averages the gradients of the equal shares' mean
    losses, which is the gradient of the global batch's mean loss, so the loss curve follows the single
    process. The logged loss is averaged over ranks; only rank 0 writes. With one process every helper is
    the identity and the run is bit-for-bit the single-process trainer.
    """
    device, dist = run.device, run.dist
    model = build_dit(cfg, data).to(device)  # pyright: ignore[reportArgumentType]  (diffusers types ModelMixin.to oddly)
    ema = copy.deepcopy(model).requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.0)
    sched = make_training_scheduler(cfg)
    gen = torch.Generator().manual_seed(run.seed + 101)
    x_train, y_train = data.x_train.to(device), data.y_train.to(device)
    start = 0
    ckpt = run.load_checkpoint(stage="images")  # trims only the DiT's rows, never the toys' (stage "gmm")
    if ckpt is not None:
        start, state = ckpt
        model.load_state_dict(state["model"])
        ema.load_state_dict(state["ema"])
        opt.load_state_dict(state["opt"])
        gen.set_state(state["gen"])
        set_rng_state(state["rng"])
    model.train()
    ddp = dist.wrap(model)
    n = x_train.shape[0]
    with run.progress(cfg.train_steps, "dit", completed=start) as bar:
        for step in range(start + 1, cfg.train_steps + 1):
            for group in opt.param_groups:
                group["lr"] = _lr_at(step, cfg)
            idx = torch.randint(0, n, (cfg.batch_size,), generator=gen).to(device)
            x0 = x_train[idx]
            labels = drop_labels(y_train[idx], model.null_label, cfg.label_dropout, gen)
            t = torch.randint(0, cfg.num_train_timesteps, (cfg.batch_size,), generator=gen).to(device)
            noise = torch.randn(x0.shape, generator=gen).to(device)
            if dist.distributed:  # this rank's share of the global batch (identity with one process)
                x0, labels, t, noise = (dist.shard(v, what="batch_size") for v in (x0, labels, t, noise))
            loss = torch.nn.functional.mse_loss(
                ddp(sched.add_noise(x0, noise, cast(torch.IntTensor, t)), t, labels), noise
            )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            decay = min(cfg.ema_decay, (1 + step) / (10 + step))
            with torch.no_grad():
                for pe, pm in zip(ema.parameters(), model.parameters(), strict=True):
                    pe.lerp_(pm, 1 - decay)
            loss_value = dist.mean({"dit_loss": loss.item()})["dit_loss"]
            if step % cfg.log_every == 0 or step == cfg.train_steps:
                run.log(step, stage="images", dit_loss=loss_value, lr=_lr_at(step, cfg))
            bar.advance(loss=loss_value)
            if step % cfg.checkpoint_every == 0 or step == cfg.train_steps:
                run.save_checkpoint(
                    step,
                    {
                        "model": model.state_dict(),
                        "ema": ema.state_dict(),
                        "opt": opt.state_dict(),
                        "gen": gen.get_state(),
                        "rng": get_rng_state(),
                    },
                )
    ema.eval()
    return ema


def run_images(cfg: S2GuidanceConfig, run: RunDir) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """Train classifier and DiT, sample with every guider, score; returns ``(results, sample grids)``."""
    device = run.device
    data = load_images(cfg, run.seed)
    cls_gen = torch.Generator().manual_seed(run.seed + 7)
    classifier = train_classifier(
        data.x_train.to(device),
        data.y_train.to(device),
        data.num_classes,
        epochs=cfg.classifier_epochs,
        generator=cls_gen,
    )
    real_feats = features(classifier, data.x_train.to(device)).cpu().numpy()
    test_feats = features(classifier, data.x_test.to(device)).cpu().numpy()
    results: dict[str, Any] = {
        "dataset": data.name,
        "num_classes": data.num_classes,
        "num_train": int(data.x_train.shape[0]),
        "classifier_test_accuracy": accuracy(classifier, data.x_test.to(device), data.y_test.to(device)),
        "fd_test_vs_train": frechet_distance(test_feats, real_feats),
        "guiders": {},
    }
    model = train_dit(cfg, data, run)
    # requires_grad as a loaded model's (CPU kernels round differently, 1 ulp, on weights without grad);
    # every sampler below runs under no_grad
    run.save_model("dit", model.eval().requires_grad_(True), extra={"dataset": data.name, "prediction": "epsilon"})
    k = data.num_classes
    labels = torch.arange(k).repeat_interleave(cfg.samples_per_class).to(device)
    noise_gen = torch.Generator().manual_seed(run.seed + 23)
    noise = torch.randn(labels.shape[0], data.channels, data.size, data.size, generator=noise_gen).to(device)
    settings = guider_settings(cfg, cfg.image_guidance_scale, seed=run.seed)
    grids: dict[str, torch.Tensor] = {}

    def sample(name: str, guide: GuiderSettings) -> tuple[torch.Tensor, dict[str, Any]]:
        """Guider ``name``'s samples from the shared noise and labels (the guiders and the ω sweep)."""
        return run_guider(
            name,
            model,
            cfg.dit_depth,
            guide,
            cfg,
            noise,
            labels,
            model.null_label,
            clip_sample=True,
            seed=run.seed,
            max_batch=cfg.sample_batch,
        )

    for name in cfg.dit_guiders:
        xs, info = sample(name, settings)
        xs = xs.clamp(-1, 1)
        feats = features(classifier, xs).cpu().numpy()
        results["guiders"][name] = {
            "fd": frechet_distance(feats, real_feats),
            "class_accuracy": accuracy(classifier, xs, labels),
            **info,
        }
        grids[name] = xs.cpu().reshape(k, cfg.samples_per_class, *xs.shape[1:])  # labels are sorted
    blank_gen = torch.Generator().manual_seed(run.seed + 31)  # chance level: clamped noise images
    blank = torch.randn(noise.shape, generator=blank_gen).clamp(-1, 1).to(device)
    results["fd_noise"] = frechet_distance(features(classifier, blank).cpu().numpy(), real_feats)
    cfg_sps = results["guiders"]["cfg"]["seconds_per_step"]
    for row in results["guiders"].values():
        row["time_vs_cfg"] = row["seconds_per_step"] / cfg_sps
    results["s2_sweep"] = []
    for omega, sweep in sweep_settings(cfg, settings, cfg.dit_s2_sweep):
        reuse = sweep_reuse(omega, cfg, results["guiders"])  # ω = 0 is CFG's run, ω = s2_scale the s2 run
        if reuse is not None:
            row = results["guiders"][reuse]
        else:
            xs, info = sample("s2", sweep)
            xs = xs.clamp(-1, 1)
            row = {
                "fd": frechet_distance(features(classifier, xs).cpu().numpy(), real_feats),
                "class_accuracy": accuracy(classifier, xs, labels),
                **info,
                "time_vs_cfg": info["seconds_per_step"] / cfg_sps,
            }
        results["s2_sweep"].append({"s2_scale": omega, **row})
    per_class = min(cfg.samples_per_class, 32)
    pick = torch.cat([torch.nonzero(data.y_train == c).flatten()[:per_class] for c in range(k)])
    results["alignment"] = correction_alignment(
        model,
        cfg.dit_depth,
        settings,
        cfg,
        data.x_train[pick].to(device),
        data.y_train[pick].to(device),
        model.null_label,
        run.seed,
        max_batch=cfg.sample_batch,
    )
    return results, grids
