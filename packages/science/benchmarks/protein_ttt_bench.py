"""Benchmark: ProteinTTT seconds per protein vs sequence length, full fine-tuning vs LoRA, and peak memory.

``uv run python packages/science/benchmarks/protein_ttt_bench.py [--quick] [--out runs/bench/protein_ttt.json]``

Each entry times a ``ProteinTTT.ttt`` call of ``TIMED_STEPS`` optimizer steps of the paper's recipe (each
``ags = 16`` micro-steps of ``batch_size = 2`` masked copies; the model is reset after the call) on a random
protein of the given length, full fine-tuning (every parameter but the token embeddings) as the baseline and
LoRA (rank 8, attention blocks) as the fast path, in the same process; ``speedup`` = full median / LoRA
median. A TTT step costs the same at every step, so the seconds per protein of the paper's 30 steps are
projected as ``seconds_per_step × 30`` (``seconds_per_protein_*``; the one set-up and reset per timed call is
spread over its steps, so the projection is a slight upper bound); timing all 30 steps at four lengths,
twice per variant, would take well over ten minutes on a laptop CPU. The model is AntiBERTy (26 M
parameters, from its wheel); ``--quick`` uses a 2-layer random ESM-2 and short sequences (a smoke run of the
script, not a measurement).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from iclr26_science.proteins import AMINO_ACIDS, MaskedLM, ProteinTTT, TTTSettings, esm2_from_config, load_antiberty
from iclr26_shared.bench import bench_main, compare, peak_memory


def _protein(length: int, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    return "".join(rng.choice(list(AMINO_ACIDS), size=length))


def _one(lm: MaskedLM, seq: str, settings: TTTSettings) -> None:
    ttt = ProteinTTT(lm, settings)
    ttt.ttt(seq)
    ttt.reset()


PAPER_STEPS = 30  # TTTConfig default: 30 optimizer steps x 16 micro-steps x 2 copies
TIMED_STEPS = 2


def _per_length(lm: MaskedLM, seq: str, steps: int, ags: int, quick: bool) -> dict[str, Any]:
    full = TTTSettings(steps=steps, ags=ags, batch_size=2)
    lora = TTTSettings(steps=steps, ags=ags, batch_size=2, lora_rank=8)
    res = compare(lambda: _one(lm, seq, lora), lambda: _one(lm, seq, full), repeats=2)
    for name, key in (("full", "baseline"), ("lora", "fast")):
        per_step = res[key]["median_s"] / steps
        res[f"seconds_per_step_{name}"] = per_step
        res[f"seconds_per_protein_{name}"] = per_step * PAPER_STEPS  # projected to the paper's 30 steps
    res["peak_memory_full"] = peak_memory(lambda: _one(lm, seq, full)).to_dict()
    res["peak_memory_lora"] = peak_memory(lambda: _one(lm, seq, lora)).to_dict()
    return res


def run(quick: bool) -> dict[str, Any]:
    lm = esm2_from_config(2, 32, 2) if quick else load_antiberty()
    lengths = (16, 32) if quick else (64, 128, 256, 510)
    # the paper's micro-steps per step (16) and copies (2), TIMED_STEPS steps timed; quick: 2 x 2 x 2
    steps, ags = (2, 2) if quick else (TIMED_STEPS, 16)
    out: dict[str, Any] = {
        "model": lm.name,
        "timed_steps": steps,
        "projected_steps": PAPER_STEPS,
        "ags": ags,
        "batch_size": 2,
        "per_length": {},
    }
    for length in lengths:
        out["per_length"][str(length)] = _per_length(lm, _protein(length), steps, ags, quick)
    return out


if __name__ == "__main__":
    raise SystemExit(bench_main("protein_ttt", run))
