"""Benchmark: ProteinTTT seconds per protein vs sequence length, full fine-tuning vs LoRA, and peak memory.

``uv run python packages/science/benchmarks/protein_ttt_bench.py [--quick] [--lengths 64 128 256]
[--repeats 2] [--steps 1] [--out runs/bench/protein_ttt.json]``

``--lengths`` (default 64 128 256; AntiBERTy takes up to 510 residues), ``--repeats`` (timed calls per
variant and length after one warm-up, default 2; the median is reported) and ``--steps`` (timed optimizer
steps per call, default 1) size the run; the defaults take about 3-4 minutes on 2 idle CPU cores (one
warm-up + ``repeats`` timed calls + one peak-memory call per variant and length, each ``steps × 16 + 1``
forward/backward passes of 2 masked copies). Adding 510 roughly triples that.

Each entry times a ``ProteinTTT.ttt`` call of ``steps`` optimizer steps of the paper's recipe (each
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

import argparse
import sys
from collections.abc import Sequence
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
DEFAULT_LENGTHS = (64, 128, 256)
DEFAULT_REPEATS = 2
DEFAULT_STEPS = 1
MAX_LENGTH = 510  # AntiBERTy's 512 positions minus [CLS] and [SEP]


def _per_length(lm: MaskedLM, seq: str, steps: int, ags: int, repeats: int) -> dict[str, Any]:
    full = TTTSettings(steps=steps, ags=ags, batch_size=2)
    lora = TTTSettings(steps=steps, ags=ags, batch_size=2, lora_rank=8)
    res = compare(lambda: _one(lm, seq, lora), lambda: _one(lm, seq, full), repeats=repeats)
    for name, key in (("full", "baseline"), ("lora", "fast")):
        per_step = res[key]["median_s"] / steps
        res[f"seconds_per_step_{name}"] = per_step
        res[f"seconds_per_protein_{name}"] = per_step * PAPER_STEPS  # projected to the paper's 30 steps
    res["peak_memory_full"] = peak_memory(lambda: _one(lm, seq, full)).to_dict()
    res["peak_memory_lora"] = peak_memory(lambda: _one(lm, seq, lora)).to_dict()
    return res


def run(
    quick: bool,
    lengths: Sequence[int] | None = None,
    repeats: int = DEFAULT_REPEATS,
    steps: int = DEFAULT_STEPS,
) -> dict[str, Any]:
    """Time full vs LoRA TTT at each length (``quick``: a random 2-layer ESM-2, 2 micro-steps, lengths 16, 32)."""
    lm = esm2_from_config(2, 32, 2) if quick else load_antiberty()
    lengths = tuple(lengths) if lengths else ((16, 32) if quick else DEFAULT_LENGTHS)
    # the paper's micro-steps per step (16) and copies (2), `steps` steps timed; quick: 2 micro-steps
    ags = 2 if quick else 16
    out: dict[str, Any] = {
        "model": lm.name,
        "timed_steps": steps,
        "projected_steps": PAPER_STEPS,
        "ags": ags,
        "batch_size": 2,
        "repeats": repeats,
        "lengths": list(lengths),
        "per_length": {},
    }
    for length in lengths:
        out["per_length"][str(length)] = _per_length(lm, _protein(length), steps, ags, repeats)
    return out


def main(argv: list[str] | None = None) -> int:
    """``--lengths``/``--repeats``/``--steps`` here; ``--quick``/``--out`` go to :func:`bench_main`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="protein_ttt", add_help=False)
    parser.add_argument("--lengths", type=int, nargs="+", default=None, help="sequence lengths (1-510)")
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS, help="timed calls per variant and length")
    parser.add_argument("--steps", type=int, default=DEFAULT_STEPS, help="timed optimizer steps per call")
    if "-h" in argv or "--help" in argv:
        parser.print_help()
    args, rest = parser.parse_known_args(argv)
    if args.lengths is not None and not all(1 <= n <= MAX_LENGTH for n in args.lengths):
        parser.error(f"--lengths: expected integers in 1-{MAX_LENGTH}, got {args.lengths}")
    if args.repeats < 1:
        parser.error(f"--repeats: expected a positive integer, got {args.repeats}")
    if args.steps < 1:
        parser.error(f"--steps: expected a positive integer, got {args.steps}")
    return bench_main("protein_ttt", lambda quick: run(quick, args.lengths, args.repeats, args.steps), rest)


if __name__ == "__main__":
    raise SystemExit(main())
