"""Benchmark: CryoLVM tiled-inference throughput (voxels/s), training-step time, window attention vs dense.

``uv run python packages/science/benchmarks/cryolvm_bench.py [--quick] [--out runs/bench/cryolvm.json]``

* ``window_attention``: :class:`~iclr26_science.cryoem.WindowAttention3d` (the fast path) against
  :func:`~iclr26_science.cryoem.naive_window_attention` (one dense masked attention, the baseline) on the same
  volume, in this process; ``speedup`` = dense median / windowed median.
* ``tiled_inference``: Gaussian-fused tiled inference of an untrained SCUNet3D over a cubic map; voxels/s =
  map voxels / median seconds; peak memory.
* ``train_step``: one fine-tuning step (forward, MSE + histogram loss, backward, AdamW) on a batch of crops.

Full sizes: the paper's network (dim 32, 7 stages, 48³ tiles, stride 24) on a 96³ map, batch 8;
``--quick``: the quick preset's network (dim 8, 5 stages, 16³ tiles) on a 32³ map (a smoke run of the script).
"""

from __future__ import annotations

from typing import Any

import torch

from iclr26_science.cryoem import SCUNet3D, WindowAttention3d, naive_window_attention, restoration_loss, tiled_inference
from iclr26_shared.bench import bench_main, compare, measure, peak_memory


def run(quick: bool) -> dict[str, Any]:
    torch.manual_seed(0)
    if quick:
        dim, depths, head, tile, stride, edge, batch, att_edge = 8, (1,) * 5, 4, 16, 8, 32, 4, 8
    else:
        dim, depths, head, tile, stride, edge, batch, att_edge = 32, (2,) * 7, 16, 48, 24, 96, 8, 12
    out: dict[str, Any] = {"dim": dim, "depths": depths, "tile": tile, "stride": stride, "map_edge": edge}

    attn = WindowAttention3d(16, 8, window=4, shifted=True).eval()
    x = torch.randn(1, att_edge, att_edge, att_edge, 16)
    with torch.no_grad():
        out["window_attention"] = {
            "edge": att_edge,
            **compare(lambda: attn(x), lambda: naive_window_attention(attn, x), repeats=3),
        }

    net = SCUNet3D(dim=dim, depths=depths, head_dim=head, window=4).eval()
    vol = torch.rand(1, edge, edge, edge)
    inf = measure(lambda: tiled_inference(net, vol, tile, stride), repeats=2 if quick else 3)
    mem = peak_memory(lambda: tiled_inference(net, vol, tile, stride)).to_dict()
    out["tiled_inference"] = {**inf, "voxels_per_s": edge**3 / inf["median_s"], "peak_memory": mem}

    train_net = SCUNet3D(dim=dim, depths=depths, head_dim=head, window=4)
    opt = torch.optim.AdamW(train_net.parameters(), lr=1e-4)
    xb, yb = torch.rand(batch, 1, tile, tile, tile), torch.rand(batch, 1, tile, tile, tile)

    def step() -> None:
        opt.zero_grad()
        restoration_loss(train_net(xb), yb, 0.5).backward()
        opt.step()

    out["train_step"] = {"batch": batch, **measure(step, repeats=2 if quick else 3),
                         "peak_memory": peak_memory(step).to_dict()}  # fmt: skip
    return out


if __name__ == "__main__":
    raise SystemExit(bench_main("cryolvm", run))
