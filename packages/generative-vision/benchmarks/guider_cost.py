"""Seconds and peak memory per sampling step: CFG vs S² (sequential third pass) vs S² batched.

``uv run python packages/generative-vision/benchmarks/guider_cost.py [--quick] [--out PATH]``

One denoising step of the class-conditional DiT on a batch of B images, three ways:

* ``cfg``: diffusers ``ClassifierFreeGuidance`` through the guider protocol (2 sequential passes);
* ``s2_sequential``: :class:`S2Guidance` through the guider protocol (3 sequential passes; S² active);
* ``s2_batched``: Eq. 4 with the pruned pass batched with the conditional pass (one 2B pass + one B pass).

Ratios are to CFG measured in the same process. Peak memory: ``iclr26_shared.bench.peak_memory`` (the CUDA
allocator's peak on GPU; the process's peak RSS above its level before the call on CPU).
"""

from __future__ import annotations

import logging
from typing import Any

import torch
from diffusers.guiders.classifier_free_guidance import ClassifierFreeGuidance

from iclr26_generative_vision.guidance.batched import s2_batched_prediction
from iclr26_generative_vision.guidance.s2 import S2Guidance
from iclr26_generative_vision.nn.dit import ClassConditionalDiT
from iclr26_shared.bench import bench_main, measure, peak_memory

logging.getLogger("diffusers").setLevel(logging.ERROR)


def _guided_step(
    model: ClassConditionalDiT, guider: Any, x: torch.Tensor, t: torch.Tensor, y: torch.Tensor
) -> torch.Tensor:
    guider.set_state(step=1, num_inference_steps=4, timestep=t[0])
    batches = guider.prepare_inputs({"class_labels": (y, torch.full_like(y, model.null_label))})
    for b in batches:
        guider.prepare_models(model)
        b.noise_pred = model(x, t, class_labels=b.class_labels)
        guider.cleanup_models(model)
    return guider(batches).pred


def _case(size: int, patch: int, hidden: int, depth: int, heads: int, batch: int, repeats: int) -> dict[str, Any]:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = ClassConditionalDiT(size, 1, 10, patch, hidden, depth, heads).to(device).eval()  # pyright: ignore[reportArgumentType]  (diffusers types ModelMixin.to oddly)
    x = torch.randn(batch, 1, size, size, device=device)
    t = torch.full((batch,), 500, device=device)
    y = torch.arange(batch, device=device) % 10
    cfg = ClassifierFreeGuidance(guidance_scale=3.0)
    s2 = S2Guidance(guidance_scale=3.0, s2_scale=0.25, s2_start=0.0, s2_stop=1.0, seed=0)
    mask = [depth // 2]
    fns = {
        "cfg": lambda: _guided_step(model, cfg, x, t, y),
        "s2_sequential": lambda: _guided_step(model, s2, x, t, y),
        "s2_batched": lambda: s2_batched_prediction(
            model,
            model.transformer_blocks,
            x,
            t,
            {"class_labels": y},
            {"class_labels": torch.full_like(y, model.null_label)},
            mask,
            3.0,
            0.25,
        ),
    }
    out: dict[str, Any] = {
        "device": str(device),
        "shape": {"image": size, "patch": patch, "hidden": hidden, "depth": depth, "batch": batch},
    }
    with torch.no_grad():
        for name, fn in fns.items():
            timing = measure(fn, repeats=repeats, warmup=1)
            mem = peak_memory(fn, device=str(device))
            peak = mem.cuda_peak_bytes if mem.cuda_peak_bytes is not None else mem.cpu_peak_bytes
            out[name] = {"seconds_per_step": timing["median_s"], "peak_bytes": peak, **mem.to_dict()}
    for name in ("s2_sequential", "s2_batched"):
        out[name]["time_vs_cfg"] = out[name]["seconds_per_step"] / out["cfg"]["seconds_per_step"]
        out[name]["memory_vs_cfg"] = out[name]["peak_bytes"] / max(1, out["cfg"]["peak_bytes"])
    return out


def run(quick: bool) -> dict[str, Any]:
    """The benchmark cases (quick: the digits-size DiT; else also an MNIST-size one)."""
    cases = {"dit_8x8_h96_d10_b256": _case(8, 2, 96, 10, 4, 256, repeats=3 if quick else 10)}
    if not quick:
        cases["dit_28x28_h192_d12_b256"] = _case(28, 4, 192, 12, 6, 256, repeats=10)
    return cases


if __name__ == "__main__":
    raise SystemExit(bench_main("s2-guider-cost", run))
