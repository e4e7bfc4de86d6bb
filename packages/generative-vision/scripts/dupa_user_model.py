"""DUPA on a user's flow transformer (diffusers' DiTTransformer2DModel, not ours): does the alignment collapse,
and which documented remedy prevents it (issue 54)?

Trains one tiny DiT (width 64, 4 blocks, patch 2, aligned at ``transformer_blocks.1``) on the 8×8 digits
with K = 2 paths and λ = 0.5, from the same initialisation and batches, in three DUPA arms: the paper's loss
with a trained projector, a frozen random projector (``projector.requires_grad_(False)``) and a
SimSiam-style predictor with stop-gradient targets (``Predictor`` + ``dupa_loss(predictor=q)``), beside
the dual-path control without alignment (``none``: K = 2, λ = 0). Prints
JSON: the alignment loss along training and the centred collapse metric (``path_cosines``: same-image
minus other-class cosine of two noisy paths on 200 held-out digits; 0 = collapsed) at init and at the end.

    uv run python packages/generative-vision/scripts/dupa_user_model.py --steps 300
"""

from __future__ import annotations

import argparse
import copy
import json
import time

import torch


def main() -> None:
    from diffusers.models.transformers.dit_transformer_2d import DiTTransformer2DModel

    from iclr26_generative_vision.flow.adapter import HookedFlowModel
    from iclr26_generative_vision.flow.dupa import ConditionProjector, Predictor, draw_paths
    from iclr26_generative_vision.methods.dupa.model import DUPAObjective
    from iclr26_generative_vision.methods.dupa.train import path_cosines
    from iclr26_shared.images import load_image_tensors

    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--arms", nargs="+", default=["none", "trained", "frozen", "predictor"])
    args = ap.parse_args()
    torch.set_num_threads(1)
    data = load_image_tensors("digits", seed=args.seed, scale="symmetric")
    x_held, y_held = data.x_test[:200], data.y_test[:200]
    torch.manual_seed(args.seed)
    dit = DiTTransformer2DModel(
        num_attention_heads=2, attention_head_dim=32, in_channels=1, num_layers=4, sample_size=8, patch_size=2,
        num_embeds_ada_norm=data.num_classes, norm_num_groups=1,
    )  # fmt: skip
    projector = ConditionProjector(64, 128, 32)
    predictor = Predictor(32, 64)
    log_at = {10, 20, 50, 100, 200, args.steps}
    results: dict[str, object] = {"steps": args.steps, "seed": args.seed, "lr": args.lr, "batch": args.batch}
    for arm in args.arms:
        torch.manual_seed(args.seed + 1)  # the DiT's label dropout draws from the global RNG: same in every arm
        proj = copy.deepcopy(projector)
        if arm == "frozen":
            proj.requires_grad_(False)
        flow = HookedFlowModel(copy.deepcopy(dit), "transformer_blocks.1", null_label=data.num_classes)
        obj = DUPAObjective(
            flow,
            num_paths=2,
            weight=0.0 if arm == "none" else 0.5,
            projector=None if arm == "none" else proj,
            predictor=copy.deepcopy(predictor) if arm == "predictor" else None,
        )
        init = path_cosines(obj, x_held, y_held, torch.Generator().manual_seed(41))
        opt = torch.optim.AdamW([p for p in obj.parameters() if p.requires_grad], lr=args.lr, betas=(0.9, 0.95))
        gen = torch.Generator().manual_seed(args.seed + 2)
        curve, start = [], time.process_time()
        for step in range(1, args.steps + 1):
            idx = torch.randint(0, data.x_train.shape[0], (args.batch,), generator=gen)
            loss, vel, align = obj(draw_paths(data.x_train[idx], data.y_train[idx], 2, gen))
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step in log_at:
                curve.append(
                    {"step": step, "align_loss": round(align.item(), 4), "velocity_loss": round(vel.item(), 4)}
                )
        final = path_cosines(obj, x_held, y_held, torch.Generator().manual_seed(41))
        keys = [
            k
            for k in ("gap_projected", "gap_raw", "same_projected_uncentred", "other_projected_uncentred")
            if k in final
        ]
        results[arm] = {
            "curve": curve,
            "init": {k: round(init[k], 4) for k in keys},
            "final": {k: round(final[k], 4) for k in keys},
            "cpu_s": round(time.process_time() - start, 1),
        }
        print(json.dumps({arm: results[arm]}), flush=True)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
