"""``run`` of ``causal-delta``: render the pool, build the OOD splits, train every variant, measure IID/OOD.

Steps: (1) the MuJoCo pool of ``num_pairs`` before/after pairs (``data.causal_triplet``; cached under
``<out-dir>/causal-delta/.render-cache/``); (2) per split (``comp``: held-out verb–noun pairs, ``noun``:
held-out object classes) the IID train / IID test / OOD test indices; (3) every variant trained on the
split's IID training pairs from the same initialisation seed and the same batch order; (4) action
accuracy on IID test and OOD test, the IID–OOD gap; (5) the δ-space geometry of the first split's test
pairs: cosine between the mean δ of every two actions (antonyms should be anti-parallel).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
import torch

from iclr26_generative_vision.data.causal_triplet import (
    MUJOCO_VOCAB,
    VERBS,
    CausalTripletSet,
    Split,
    Vocabulary,
    load_or_render,
    make_split,
    render_pairs,
)
from iclr26_generative_vision.methods.causal_delta.config import CausalDeltaConfig
from iclr26_generative_vision.methods.causal_delta.model import (
    build_model,
    evaluate,
    loss_terms,
    to_tensor,
    train_variant,
)
from iclr26_shared.runs import RunDir

__all__ = ["action_cosines", "dry_run", "load_pool", "run"]


def load_pool(cfg: CausalDeltaConfig, run_dir: RunDir) -> tuple[CausalTripletSet, bool]:
    """The pool: the real data set's pairs (``dataset`` procthor / epic-kitchens, read from ``data_dir``), or the
    rendered one (rank 0 renders or reads the cache; under torchrun the other ranks then read it)."""
    if cfg.dataset != "mujoco":
        from iclr26_generative_vision.data.causal_triplet_real import read_real

        return read_real(cfg.dataset, cfg.data_dir, size=cfg.image_size, max_pairs=cfg.num_pairs, bbox=cfg.bbox), False
    cache = run_dir.path.parent / ".render-cache" if cfg.render_cache else None
    kwargs: dict[str, Any] = dict(
        size=cfg.image_size, seed=run_dir.seed, max_distractors=cfg.max_distractors, cache_dir=cache
    )
    if cache is None or not run_dir.dist.distributed:
        return load_or_render(cfg.num_pairs, **kwargs)
    if run_dir.dist.is_main:
        data, hit = load_or_render(cfg.num_pairs, **kwargs)
        run_dir.dist.barrier()
        return data, hit
    run_dir.dist.barrier()
    return load_or_render(cfg.num_pairs, **kwargs)


def action_cosines(deltas: np.ndarray, verbs: np.ndarray, vocab: Vocabulary = MUJOCO_VOCAB) -> dict[str, Any]:
    """The geometry of δ-space by action, over ``deltas [N, l]`` with ``verbs [N]``.

    Two cosines per pair of actions (a, b): of their *mean* δ (``matrix``, ``antonyms``, ``antonym_mean``,
    ``other_mean``) and the mean cosine of their *individual* δ_i, δ_j (``pairwise``: ``antonym_pairwise``,
    ``other_pairwise``). Non-antonym pairs are summarised by their mean *absolute* cosine (their signed mean
    cancels: with u_close ≈ −u_open, cos(open, on) + cos(close, on) ≈ 0 for any encoder); ``within`` is
    the mean cosine of two different samples of one action (invariance:
    1 when every sample of an action has the same direction). The mean-δ cosine of antonyms is strongly negative for
    any encoder when one action's before/after images are the other's after/before, so the pairwise one is
    the measure that also asks for invariance. ``matrix`` is over ``vocab.verbs`` order, NaN where an action
    is absent.
    """
    names = vocab.verbs
    v = len(names)
    unit = deltas / np.linalg.norm(deltas, axis=1, keepdims=True).clip(min=1e-12)
    means = np.full((v, deltas.shape[1]), np.nan)
    unit_means = np.full((v, deltas.shape[1]), np.nan)
    within: list[float] = []
    for a in range(v):
        m = verbs == a
        if m.any():
            means[a] = deltas[m].mean(0)
            unit_means[a] = unit[m].mean(0)
            n = int(m.sum())
            if n > 1:
                within.append(float((n * n * unit_means[a] @ unit_means[a] - n) / (n * (n - 1))))
    mean_unit = means / np.linalg.norm(means, axis=1, keepdims=True).clip(min=1e-12)
    mat = mean_unit @ mean_unit.T
    pair = unit_means @ unit_means.T  # mean over i ∈ a, j ∈ b of cos(δ_i, δ_j)
    ant_ids = vocab.antonym_ids()
    present = [(i, j) for i, j in ant_ids if np.isfinite(mat[i, j])]
    others = [
        (i, j)
        for i, j in combinations(range(v), 2)
        if (i, j) not in ant_ids and (j, i) not in ant_ids and np.isfinite(mat[i, j])
    ]

    def avg(m: np.ndarray, ids: list[tuple[int, int]], absolute: bool = False) -> float:
        vals = [abs(m[i, j]) if absolute else m[i, j] for i, j in ids]
        return float(np.mean(vals)) if vals else float("nan")

    return {
        "matrix": mat.tolist(),
        "antonyms": {f"{names[i]}/{names[j]}": float(mat[i, j]) for i, j in present},
        "antonym_mean": avg(mat, present),
        "other_mean": avg(mat, others, absolute=True),
        "pairwise": {f"{names[i]}/{names[j]}": float(pair[i, j]) for i, j in present},
        "antonym_pairwise": avg(pair, present),
        "other_pairwise": avg(pair, others, absolute=True),
        "within": float(np.mean(within)) if within else float("nan"),
    }


def _accuracy(pred: np.ndarray, y: np.ndarray) -> float:
    return float((pred == y).mean()) if len(y) else float("nan")


def _chance(y: np.ndarray, num_verbs: int = len(VERBS)) -> float:
    """No-skill accuracy: the larger of 1/V and the majority action's share."""
    return max(1.0 / num_verbs, float(np.bincount(y, minlength=num_verbs).max() / max(1, len(y))))


def run(cfg: CausalDeltaConfig, run_dir: RunDir) -> dict[str, Any]:
    """Train every variant on every split it belongs to and evaluate it; returns the results."""
    device, seed = run_dir.device, run_dir.seed
    data, cached = load_pool(cfg, run_dir)
    vocab = data.vocab
    nv = len(vocab.verbs)
    splits: dict[str, Split] = {
        k: make_split(
            k,
            data.verbs,
            data.nouns,
            ood_fraction=cfg.comp_ood_fraction if k == "comp" else cfg.noun_ood_fraction,
            iid_test_fraction=cfg.iid_test_fraction,
            seed=seed,
            vocab=vocab,
        )
        for k in cfg.splits
    }
    results: dict[str, Any] = {
        "dataset": cfg.dataset,
        "verbs": list(vocab.verbs),
        "nouns": list(vocab.nouns),
        "pool": {"pairs": len(data), "image_size": cfg.image_size, "from_cache": cached},
        "splits": {k: s.describe() for k, s in splits.items()},
        "chance": {
            k: {"iid": _chance(data.verbs[s.iid_test], nv), "ood": _chance(data.verbs[s.ood_test], nv)}
            for k, s in splits.items()
        },
        "control_accuracy": cfg.control_accuracy,
        "antonym_threshold": cfg.antonym_cosine,
        "world_size": run_dir.dist.world_size,
    }
    jobs = [(k, v) for k in cfg.splits for v in cfg.variants if k in cfg.trained_on(v)]
    steps = {k: cfg.epochs * (len(s.train) // min(cfg.batch_size, len(s.train))) for k, s in splits.items()}
    # The checkpoint's step counts finished (split, variant) jobs; each job logs its rows with stage=<job>,
    # and a job that starts over on resume drops its earlier rows (restart_stage), so none is trimmed here.
    ckpt = run_dir.load_checkpoint(trim=False)
    done: dict[str, Any] = dict(ckpt[1]) if ckpt else {}
    accuracy: dict[str, dict[str, dict[str, float]]] = {k: {} for k in cfg.splits}
    losses: dict[str, dict[str, Any]] = {}
    geometry: dict[str, Any] = {}
    first = cfg.splits[0]
    geo_idx = np.concatenate([splits[first].iid_test, splits[first].ood_test])
    torch.manual_seed(seed)  # the untrained CDE encoder: how much of the δ geometry is there before training
    _, deltas0 = evaluate(build_model(cfg, "cde", vocab).to(device), data.images[geo_idx], device=device)
    geometry["cde-untrained"] = action_cosines(deltas0, data.verbs[geo_idx], vocab)
    with run_dir.progress(sum(steps[k] for k, _ in jobs), "causal-delta: train") as bar:
        for i, (k, variant) in enumerate(jobs):
            key = f"{k}/{variant}"
            s = splits[k]
            torch.manual_seed(seed)
            model = build_model(cfg, variant, vocab).to(device)
            if key in done:
                model.load_state_dict(done[key]["state"])
                losses[key] = {"first": done[key]["first"], "last": done[key]["last"], "steps": done[key]["steps"]}
                bar.advance(steps[k])
            else:
                run_dir.restart_stage(key)  # rows of a job a killed process had not finished

                def on_step(step: int, vals: dict[str, float], key: str = key) -> None:
                    bar.advance(1, loss=vals["loss"])
                    if step % cfg.log_every == 0:
                        run_dir.log(step, stage=key, **{f"{key}/{t}": x for t, x in vals.items()})

                ls = train_variant(
                    model,
                    cfg,
                    variant,
                    data.images[s.train],
                    data.verbs[s.train],
                    data.nouns[s.train],
                    seed=seed,
                    device=device,
                    dist=run_dir.dist,
                    on_step=on_step,
                    vocab=vocab,
                )
                losses[key] = {"first": ls[0], "last": ls[-1], "steps": len(ls)}
                done[key] = {"state": model.state_dict(), **losses[key]}
                run_dir.save_checkpoint(i + 1, done)
            run_dir.save_model(
                f"{k}-{variant}", model.eval(), extra={"split": k, "variant": variant, "verbs": list(vocab.verbs)}
            )
            pred_iid, _ = evaluate(model, data.images[s.iid_test], device=device)
            pred_ood, _ = evaluate(model, data.images[s.ood_test], device=device)
            iid = _accuracy(pred_iid, data.verbs[s.iid_test])
            ood = _accuracy(pred_ood, data.verbs[s.ood_test])
            accuracy[k][variant] = {"iid": iid, "ood": ood, "gap": iid - ood}
            if k == first:
                _, deltas = evaluate(model, data.images[geo_idx], device=device)
                geometry[variant] = action_cosines(deltas, data.verbs[geo_idx], vocab)
    results["accuracy"] = accuracy
    results["geometry_split"] = first
    results["geometry"] = geometry
    results["losses"] = losses
    if run_dir.dist.is_main:
        _plots(results, data, splits, run_dir)
    return results


def _plots(results: dict[str, Any], data: CausalTripletSet, splits: dict[str, Split], run_dir: RunDir) -> None:
    import matplotlib.pyplot as plt

    from iclr26_shared.plotting import plot_bars, plot_images, save_figure

    for k, rows in results["accuracy"].items():
        plot_bars(
            run_dir.figure_path(f"gap_{k}"),
            {v: r["gap"] for v, r in rows.items()},
            ylabel="IID − OOD accuracy",
            title=f"IID–OOD gap, {k} split (lower is better)",
        )
    first = splits[results["geometry_split"]]
    names, nouns = data.vocab.verbs, data.vocab.nouns
    pick = [
        int(first.train[np.flatnonzero(data.verbs[first.train] == a)[0]])
        for a in range(len(names))
        if (data.verbs[first.train] == a).any()
    ]
    grid = data.images[pick].reshape(-1, *data.images.shape[2:])
    titles = [f"{names[data.verbs[i]]} {nouns[data.nouns[i]]} {t}" for i in pick for t in ("before", "after")]
    plot_images(run_dir.figure_path("pairs"), grid, titles=titles, ncols=4, title="One training pair per action")
    geo = results["geometry"].get("cde")
    if geo:
        fig, ax = plt.subplots(figsize=(5.5, 4.5))
        im = ax.imshow(np.asarray(geo["matrix"], dtype=float), vmin=-1, vmax=1, cmap="coolwarm")
        ax.set_xticks(range(len(names)), names, rotation=45, ha="right")
        ax.set_yticks(range(len(names)), names)
        ax.set_title("CDE: cosine of mean δ per action")
        fig.colorbar(im, ax=ax)
        save_figure(fig, run_dir.figure_path("delta_cosines"))


def dry_run(cfg: CausalDeltaConfig, device: torch.device) -> dict[str, Any]:
    """Every variant at the preset's real sizes on four rendered pairs of the preset's image size (MuJoCo;
    the opt-in real data sets are not read): one AdamW step of the variant's loss on two pairs, then its
    action predictions on the other two; ``{"parameters", "train_loss", "eval_accuracy"}`` summed /
    averaged over the variants."""
    images, verbs, nouns = render_pairs(4, size=cfg.image_size, seed=0, max_distractors=cfg.max_distractors)
    v, o = torch.from_numpy(verbs[:2]).to(device), torch.from_numpy(nouns[:2]).to(device)
    params, train_loss, correct = 0, 0.0, 0.0
    for variant in cfg.variants:
        torch.manual_seed(0)
        model = build_model(cfg, variant).to(device).train()
        opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        x0, x1 = to_tensor(images[:2], device)
        terms = loss_terms(cfg, variant, model(x0, x1), v, o)
        opt.zero_grad(set_to_none=True)
        terms["loss"].backward()
        opt.step()
        pred, _ = evaluate(model, images[2:], device=device, batch_size=2)
        correct += float((pred == verbs[2:]).mean())
        params += sum(p.numel() for p in model.parameters() if p.requires_grad)
        train_loss += float(terms["loss"].detach())
    return {"parameters": params, "train_loss": train_loss, "eval_accuracy": correct / len(cfg.variants)}
