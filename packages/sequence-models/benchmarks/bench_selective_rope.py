"""Benchmarks of the sequence-models ops and layers (forward + backward), measured in one process.

* chunked vs naive GLA (``chunk_gla`` vs ``naive_recurrent_gla``), goal: >= 10x at T = 4096 on CPU;
* Selective RoPE vs RoPE inside a GLA layer (overhead ratio, goal <= 1.25x);
* GLA layer vs softmax attention layer as T grows.

For each case: tokens/s of forward+backward and memory: bytes of the tensors autograd saves for the
backward pass (``saved_bytes``) and the peak memory of one step (``iclr26_shared.bench.peak_memory``: CPU RSS
and, on CUDA, the allocator's peak).

    uv run python packages/sequence-models/benchmarks/bench_selective_rope.py [--quick] [--out FILE]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from iclr26_sequence_models.layers import Attention, GatedLinearAttention
from iclr26_sequence_models.ops import chunk_gla, naive_recurrent_gla
from iclr26_shared.bench import bench_main, measure, peak_memory

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _saved_bytes(fn: Callable[[], torch.Tensor]) -> int:
    """Bytes of the tensors autograd saves for backward during one forward."""
    total = 0

    def pack(t: torch.Tensor) -> torch.Tensor:
        nonlocal total
        total += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        fn()
    return total


def _case(fwd: Callable[[], torch.Tensor], tokens: int, repeats: int) -> dict[str, Any]:
    def step() -> None:
        fwd().float().square().mean().backward()

    timing = measure(step, repeats=repeats, warmup=1)
    peak = peak_memory(step, device=DEVICE.type)
    return {
        "median_s": timing["median_s"],
        "tokens_per_s": tokens / timing["median_s"],
        "saved_bytes": _saved_bytes(fwd),
        "cpu_peak_bytes": peak.cpu_peak_bytes,
        "cuda_peak_bytes": peak.cuda_peak_bytes,
    }


def _gla_inputs(
    t: int, b: int = 1, h: int = 4, d: int = 64
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator(device="cpu").manual_seed(0)
    q, k, v = (torch.randn(b, t, h, d, generator=gen).to(DEVICE).requires_grad_() for _ in range(3))
    g = torch.nn.functional.logsigmoid(torch.randn(b, t, h, d, generator=gen) + 3).div(16).to(DEVICE).requires_grad_()
    return q, k, v, g


def run(quick: bool) -> dict[str, Any]:
    """All cases; ``quick`` stops at T = 1024."""
    lengths = [256, 1024] if quick else [256, 1024, 4096]
    results: dict[str, Any] = {"device": str(DEVICE), "threads": torch.get_num_threads()}
    # 1. chunked vs naive GLA op
    for t in lengths:
        x = _gla_inputs(t)
        chunk = _case(lambda x=x: chunk_gla(x[0], x[1], x[2], x[3])[0], t, repeats=3)
        naive = _case(lambda x=x: naive_recurrent_gla(x[0], x[1], x[2], x[3])[0], t, repeats=1 if t >= 4096 else 2)
        results[f"gla_op_T{t}"] = {"chunk": chunk, "naive": naive, "speedup": naive["median_s"] / chunk["median_s"]}
    # 2. Selective RoPE vs RoPE in a GLA layer, 3. GLA vs softmax attention
    d, batch = 256, 2
    for t in lengths:
        x = torch.randn(batch, t, d, device=DEVICE)
        layers = {}
        for name, mod in {
            "gla_rope": GatedLinearAttention(d, 4, use_short_conv=True, position="rope"),
            "gla_selective": GatedLinearAttention(
                d, 4, use_short_conv=True, position="selective", position_options={"use_gate": True, "use_bias": True}
            ),
            "attn_rope": Attention(d, 4, position="rope"),
        }.items():
            mod = mod.to(DEVICE)
            layers[name] = _case(lambda m=mod, x=x: m(x)[0], batch * t, repeats=3)
        results[f"layers_T{t}"] = {
            **layers,
            "selective_over_rope": layers["gla_selective"]["median_s"] / layers["gla_rope"]["median_s"],
            "attn_over_gla": layers["attn_rope"]["median_s"] / layers["gla_rope"]["median_s"],
        }
    return results


if __name__ == "__main__":
    raise SystemExit(bench_main("sequence-models-selective-rope", run))
