"""Run the official ELViS module (github.com/pavelsuma/ELViS) beside ours on the same weights and inputs.

The official network is built from a local checkout (nothing is downloaded: ``pretrained=None``,
``binarized=False``, as every torch.hub ELViS model), its weights are perturbed so that every bias,
LayerNorm and ω is non-trivial, saved in the official checkpoint layout (``{"state": state_dict}``) and
read back through :func:`iclr26_generative_vision.retrieval.elvis.load_official_elvis`. Both score the
same unpadded pairs; the official mask is "True = padding", ours "True = descriptor".

    git clone https://github.com/pavelsuma/ELViS /path/to/ELViS   # or any local copy of the repository
    uv run python packages/generative-vision/scripts/compare_official_elvis.py --official /path/to/ELViS

Prints (and with ``--out``, writes) JSON: the largest absolute and relative difference of the similarity
``s`` over the pairs, for descriptor counts from 5 to 300 per image.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
from pathlib import Path

import torch
import torch.nn.functional as F

from iclr26_generative_vision.retrieval.elvis import load_official_elvis


def main() -> None:
    parser = argparse.ArgumentParser(description="Run the official ELViS module beside ours; JSON of the differences.")
    parser.add_argument("--official", type=Path, required=True, help="a local checkout of pavelsuma/ELViS")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not (args.official / "elvis" / "models" / "elvis.py").is_file():
        sys.exit(f"{args.official}: not a checkout of pavelsuma/ELViS (no elvis/models/elvis.py)")
    sys.path.insert(0, str(args.official))
    official_cls = importlib.import_module("elvis.models.elvis").Elvis

    torch.manual_seed(args.seed)
    official = official_cls(desc_name="dinov2", local_dim=768, binarized=False, pretrained=None)
    with torch.no_grad():
        for p in official.parameters():
            p.add_(0.05 * torch.randn(p.shape))
    official.eval()
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / "dinov2_elvis_gld.pt"
        torch.save({"state": official.state_dict()}, file)
        ours = load_official_elvis(file).eval()

    rows = []
    for m, n in [(5, 7), (32, 40), (100, 100), (300, 250)]:
        q = F.normalize(torch.randn(4, m, 768), dim=-1)
        x = F.normalize(torch.randn(4, n, 768), dim=-1)
        if n <= m:  # one pair shares descriptors: large votes
            x[0] = q[0, :n]
        q_pad, x_pad = torch.zeros(4, m, dtype=torch.bool), torch.zeros(4, n, dtype=torch.bool)
        with torch.no_grad():
            s_off = official(q, q_pad, x, x_pad).double()
            s_ours = ours(q, ~q_pad, x, ~x_pad).double()
        diff = (s_off - s_ours).abs()
        rows.append(
            {
                "M": m,
                "N": n,
                "s_official": s_off.tolist(),
                "s_ours": s_ours.tolist(),
                "max_abs_diff": float(diff.max()),
                "max_rel_diff": float((diff / s_off.abs().clamp_min(1e-12)).max()),
            }
        )
    out = {
        "official_module": "elvis/models/elvis.py (Elvis)",
        "torch": torch.__version__,
        "seed": args.seed,
        "pairs": rows,
        "max_abs_diff": max(r["max_abs_diff"] for r in rows),
        "max_rel_diff": max(r["max_rel_diff"] for r in rows),
    }
    text = json.dumps(out, indent=2)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
