"""Training-step time DDT vs DDT + DUPA (K = 2, 3) and sampling time vs the encoder refresh rate.

``uv run python packages/generative-vision/benchmarks/dupa_cost.py [--quick] [--out PATH]``

* ``train``: one optimizer step (forward, backward, AdamW) of the DDT objective on a batch of B images:
  ``ddt`` (K = 1, λ = 0), ``dupa_k2`` and ``dupa_k3`` (K paths through the shared model + the projector
  and L_DUPA); ratios to ``ddt`` measured in the same process, with peak memory through
  ``iclr26_shared.bench.peak_memory``.
* ``sampling``: one Euler sampling run (no CFG) of B images for each refresh rate k (the condition is
  recomputed every k steps); time and block evaluations relative to k = 1.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import torch

from iclr26_generative_vision.flow.dupa import draw_paths
from iclr26_generative_vision.flow.sampler import euler_sample
from iclr26_generative_vision.methods.dupa.config import DUPAConfig
from iclr26_generative_vision.methods.dupa.model import build_objective
from iclr26_generative_vision.nn.ddt import DDT
from iclr26_shared.bench import bench_main, measure, peak_memory

logging.getLogger("diffusers").setLevel(logging.ERROR)


def _case(size: int, cfg: DUPAConfig, batch: int, steps: int, repeats: int) -> dict[str, Any]:
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x = torch.randn(batch, 1, size, size, device=device)
    y = torch.arange(batch, device=device) % 10
    out: dict[str, Any] = {"device": str(device), "shape": {"image": size, "batch": batch, **dataclasses.asdict(cfg)}}
    out["shape"] = {k: out["shape"][k] for k in ("image", "batch", "hidden", "encoder_depth", "decoder_depth")}
    train: dict[str, Any] = {}
    for name, k in (("ddt", 1), ("dupa_k2", 2), ("dupa_k3", 3)):
        torch.manual_seed(0)
        model = DDT(
            size,
            1,
            10,
            patch_size=cfg.patch_size,
            hidden=cfg.hidden,
            encoder_depth=cfg.encoder_depth,
            decoder_depth=cfg.decoder_depth,
            heads=cfg.heads,
        )
        obj = build_objective(dataclasses.replace(cfg, num_paths=max(k, 2)), "dupa" if k > 1 else "ddt", model)
        obj = obj.to(device)
        opt = torch.optim.AdamW(obj.parameters(), lr=1e-4)
        gen = torch.Generator().manual_seed(0)

        def step(obj: Any = obj, opt: Any = opt, gen: torch.Generator = gen, k: int = k) -> None:
            loss = obj(draw_paths(x, y, k, gen))[0]
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        timing = measure(step, repeats=repeats, warmup=1)
        mem = peak_memory(step, device=str(device))
        peak = mem.cuda_peak_bytes if mem.cuda_peak_bytes is not None else mem.cpu_peak_bytes
        train[name] = {"seconds_per_step": timing["median_s"], "peak_bytes": peak}
    for row in train.values():
        row["time_vs_ddt"] = row["seconds_per_step"] / train["ddt"]["seconds_per_step"]
        row["memory_vs_ddt"] = row["peak_bytes"] / max(1, train["ddt"]["peak_bytes"])
    out["train"] = train
    torch.manual_seed(0)
    model = (
        DDT(
            size,
            1,
            10,
            patch_size=cfg.patch_size,
            hidden=cfg.hidden,
            encoder_depth=cfg.encoder_depth,
            decoder_depth=cfg.decoder_depth,
            heads=cfg.heads,
        )
        .to(device)  # pyright: ignore[reportArgumentType]  (diffusers types ModelMixin.to oddly)
        .eval()
    )
    noise = torch.randn(batch, 1, size, size, device=device)
    sampling: dict[str, Any] = {}
    for k in (1, 2, 4, 8):
        info: dict[str, Any] = {}

        def sample(k: int = k, info: dict[str, Any] = info) -> None:
            info.update(euler_sample(model, noise, y, num_steps=steps, refresh_rate=k)[1])

        timing = measure(sample, repeats=repeats, warmup=1)
        sampling[f"k{k}"] = {"seconds": timing["median_s"], "block_evals": info["block_evals"]}
    for row in sampling.values():
        row["time_vs_k1"] = row["seconds"] / sampling["k1"]["seconds"]
        row["block_evals_vs_k1"] = row["block_evals"] / sampling["k1"]["block_evals"]
    out["sampling"] = sampling
    return out


def run(quick: bool) -> dict[str, Any]:
    """Quick: the quick preset's DDT on 8×8 digits; else also the full preset's on 28×28."""
    cases = {"ddt_8x8_quick": _case(8, DUPAConfig(), 64, 25, repeats=3 if quick else 10)}
    if not quick:
        full = DUPAConfig(hidden=192, heads=6, encoder_depth=8, decoder_depth=4, patch_size=4)
        cases["ddt_28x28_full"] = _case(28, full, 256, 50, repeats=10)
    return cases


if __name__ == "__main__":
    raise SystemExit(bench_main("dupa-cost", run))
