"""``hsic-unlearning`` run (Zhang et al., ICLR 2026): train, unlearn, and evaluate by split-half dependence.

1. Data: ``cfg.dataset`` (class-stratified subsets), a forget set D_f (a random share R of the training set or one
   class), D_r = the rest; the test split is halved into the out-of-training *reference pool* (S_OOT, and the MIA's
   calibration non-members) and the *unseen target pool* (unseen target subsets, the MIA's evaluation
   non-members).
2. The original model on D_r ∪ D_f and the retrained model (gold standard) on D_r, from the same initialisation,
   one ``metrics.jsonl`` row per epoch; both are checkpointed, so ``--resume`` skips them. Trained through
   :mod:`iclr26_shared.distributed` (runs under torchrun unchanged: every minibatch split over the processes,
   see :func:`~iclr26_theory_metrics.methods.hsic_unlearning.model.train_classifier`; the fine-tune unlearning
   loop too). The other unlearning loops, the evaluation and the protocol are short and run identically on every
   rank (same seeds, same weights); rank 0 alone writes.
3. Each unlearning method of ``cfg.unlearning`` applied to a copy of the original model. Every model (original,
   retrain, each unlearned one) is saved under ``<run>/models/<name>/`` (``iclr26_shared.load_model(run, name)``).
4. Every model is evaluated (one row each, ``phase="eval"``): accuracies on D_r, D_f and the test split, the
   loss-threshold membership-inference attack (threshold calibrated on D_r members vs reference non-members;
   balanced accuracy on D_f vs unseen targets, chance 0.5) and the OTR: the share of ``n_targets`` random target
   subsets S_tar ⊆ D_f of size |S| that the split-half protocol declares out of training against S_IT ⊂ D_r and
   S_OOT ⊂ reference pool.
5. Discrimination (the paper's F1 experiment): on the retrained model, ``n_targets`` subsets of D_r (in training)
   and of D_f (never seen) per size in ``f1_subset_sizes``; F1 of "in training" for the split-half protocol and
   for the MMD baseline (closer reference by unbiased MMD², the paper's distribution-distance comparison). On the
   MIA-fool model (and the original), D_f subsets (in training) against unseen test subsets at |S|: the setting
   where the per-sample MIA is at chance.
6. A controlled check where the effect is large by construction: planted features, in-training = class code +
   noise of std ``control_noise``, unseen = class code + noise of std 1 (training features collapsed towards their
   class code); F1 of the same protocol and of MMD.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import torch

from iclr26_shared.errors import UsageError
from iclr26_shared.images import ImageTensors, load_image_tensors
from iclr26_shared.plotting import plot_bars, plot_curves
from iclr26_shared.runs import RunDir
from iclr26_shared.verdicts import t_interval
from iclr26_theory_metrics.methods.hsic_unlearning.config import HsicUnlearningConfig
from iclr26_theory_metrics.methods.hsic_unlearning.model import (
    build_classifier,
    check_world,
    per_sample_loss,
    train_classifier,
    unlearn,
)
from iclr26_theory_metrics.methods.hsic_unlearning.protocol import (
    EXP_CONTROL,
    EXP_F1,
    EXP_FORGET_UNSEEN,
    Protocol,
    disjoint_subsets,
    mc_interval,
    otr_study,
    random_subsets,
    reference_subsets,
)
from iclr26_theory_metrics.nn.models import FeatureClassifier
from iclr26_theory_metrics.ops.hsic import f1_score, mmd2_unbiased

__all__ = [
    "Protocol",
    "Splits",
    "control_study",
    "discrimination",
    "dry_run",
    "evaluation_pools",
    "loss_attack",
    "rank_auc",
    "run",
    "split_data",
]

Data = tuple[torch.Tensor, torch.Tensor]
#: Key role of the placebo subsets of the discrimination (the targets use 3 and 4).
_PLACEBO = 5
#: Kept importable under their former names (tests, notebooks).
_subsets, _disjoint, _references = random_subsets, disjoint_subsets, reference_subsets


def rank_auc(pos: Sequence[float], neg: Sequence[float]) -> float:
    """P(a value of ``pos`` > one of ``neg``), ties counted ½ (the Mann–Whitney AUC; 0.5 = no separation)."""
    p = torch.tensor(pos, dtype=torch.float64)[:, None]
    n = torch.tensor(neg, dtype=torch.float64)[None, :]
    return float(((p > n).double() + 0.5 * (p == n).double()).mean())


def discrimination(
    proto: Protocol,
    size: int,
    *,
    it_pool: torch.Tensor,
    oot_pool: torch.Tensor,
    it_ref_pool: torch.Tensor,
    oot_ref_pool: torch.Tensor,
    key: Sequence[int] = (EXP_F1,),
) -> dict[str, Any]:
    """F1 of "in training" over ``n_targets`` target subsets of ``it_pool`` (positives) and of ``oot_pool``
    (negatives), each ``[n, p]`` features, against references drawn from ``it_ref_pool`` and ``oot_ref_pool``;
    for the split-half protocol and the MMD² baseline (nearest reference), per protocol draw (``protocol_draws``;
    subsets, splits and shuffles keyed by ``(*key, size, draw)``, so two models evaluated with the same ``key``
    see the same draws). ``f1``/``f1_mmd``/``accuracy`` are means over the draws, ``*_ci`` their 95% Monte-Carlo
    intervals, ``f1_draws``/``f1_mmd_draws`` the per-draw values. The trivial answer "every target in training"
    scores F1 = 2/3 (``chance``).

    Diagnostics (no claim reads them): the mean of H over the shuffles for every target subset, its average per
    side (``mean_h_in``/``mean_h_out``) and per reference (``mean_h_it_ref``/``mean_h_oot_ref``), and
    ``auc_mean_h`` = P(mean H of an in-training target > mean H of an unseen target): whether the statistic itself
    separates the two sides, whatever reference subsets the decision drew. ``auc_placebo`` is the same AUC between
    ``n_targets`` further subsets per draw of ``oot_ref_pool`` and the unseen targets: two pools of the same kind
    (never trained on), so whatever it shows beyond 0.5 is a difference between two fixed pools, which
    ``auc_mean_h`` contains too (issue 38: 0.64–1.00 on the quick preset, as high as ``auc_mean_h``). Its subsets
    are drawn after every other subset of the draw and keyed apart, so the other draws are unchanged."""
    cfg = proto.cfg
    f1s, f1_mmd, accs, gap_in, gap_out, h_it, h_oot = [], [], [], [], [], [], []
    mean_h: dict[bool, list[float]] = {True: [], False: []}
    placebo: list[float] = []
    n0, t0 = proto.decisions, proto.ties
    for r in range(cfg.protocol_draws):
        k = (*key, size, r)
        gen = proto.generator(*k)
        it_ref = reference_subsets(it_ref_pool.shape[0], size, cfg, gen)
        oot_ref = reference_subsets(oot_ref_pool.shape[0], size, cfg, gen)
        refs = proto.references(it_ref_pool, it_ref, oot_ref_pool, oot_ref, k)
        h_it.append(float(refs[0].mean()))
        h_oot.append(float(refs[1].mean()))
        it_ref_feats = it_ref_pool[torch.cat(it_ref)]
        oot_ref_feats = oot_ref_pool[torch.cat(oot_ref)]
        sde_pred, mmd_pred, actual = [], [], []
        for role, (pool, positive) in enumerate(((it_pool, True), (oot_pool, False))):
            for j, idx in enumerate(random_subsets(pool.shape[0], size, cfg.n_targets, gen)):
                h = proto.dependence(pool, idx, (*k, 3 + role, j))
                mean_h[positive].append(float(h.mean()))
                oot, j_it, j_oot = proto.is_out_of_training(h, refs)
                sde_pred.append(not oot)
                (gap_in if positive else gap_out).append(j_oot - j_it)
                t = pool[idx]
                mmd_pred.append(
                    mmd2_unbiased(t, it_ref_feats, cfg.kernel, cfg.sigma)
                    < mmd2_unbiased(t, oot_ref_feats, cfg.kernel, cfg.sigma)
                )
                actual.append(positive)
        for j, idx in enumerate(random_subsets(oot_ref_pool.shape[0], size, cfg.n_targets, gen)):  # after the rest
            placebo.append(float(proto.dependence(oot_ref_pool, idx, (*k, _PLACEBO, j)).mean()))
        f1s.append(f1_score(sde_pred, actual))
        f1_mmd.append(f1_score(mmd_pred, actual))
        accs.append(sum(p == a for p, a in zip(sde_pred, actual, strict=True)) / len(actual))
    f1 = mc_interval(f1s)
    mmd = mc_interval(f1_mmd)
    gain = t_interval([a - b for a, b in zip(f1s, f1_mmd, strict=True)])  # a difference: not clipped
    return {
        "size": size,
        "f1": f1[0],
        "f1_ci": f1[1:],
        "f1_draws": f1s,
        "accuracy": sum(accs) / len(accs),
        "f1_mmd": mmd[0],
        "f1_mmd_ci": mmd[1:],
        "f1_mmd_draws": f1_mmd,
        "f1_minus_mmd_ci": list(gain),
        "chance": 2 / 3,
        "mean_jsd_gap_in": sum(gap_in) / len(gap_in),
        "mean_jsd_gap_out": sum(gap_out) / len(gap_out),
        "auc_mean_h": rank_auc(mean_h[True], mean_h[False]),
        "auc_placebo": rank_auc(placebo, mean_h[False]),
        "mean_h_in": sum(mean_h[True]) / len(mean_h[True]),
        "mean_h_out": sum(mean_h[False]) / len(mean_h[False]),
        "mean_h_it_ref": sum(h_it) / len(h_it),
        "mean_h_oot_ref": sum(h_oot) / len(h_oot),
        "tie_share": (proto.ties - t0) / max(proto.decisions - n0, 1),
    }


def loss_attack(
    member_cal: torch.Tensor, nonmember_cal: torch.Tensor, member_eval: torch.Tensor, nonmember_eval: torch.Tensor
) -> dict[str, float]:
    """The classic loss-threshold membership-inference attack: "member iff loss ≤ t", with t maximising the
    balanced accuracy on the calibration sets; returns its balanced accuracy on the evaluation sets (chance 0.5)
    and the share of ``member_eval`` it calls members."""
    cand = torch.cat([member_cal, nonmember_cal]).double().sort().values
    m, nm = member_cal.double().sort().values, nonmember_cal.double().sort().values
    tpr = torch.searchsorted(m, cand, right=True).double() / m.numel()
    tnr = 1.0 - torch.searchsorted(nm, cand, right=True).double() / nm.numel()
    t = cand[int(((tpr + tnr) / 2).argmax())]
    tpr_e = float((member_eval.double() <= t).double().mean())
    tnr_e = float((nonmember_eval.double() > t).double().mean())
    return {"mia_acc": (tpr_e + tnr_e) / 2, "mia_member_rate": tpr_e, "mia_threshold": float(t)}


@torch.no_grad()
def _features(model: FeatureClassifier, x: torch.Tensor, cfg: HsicUnlearningConfig) -> torch.Tensor:
    model.eval()
    out = []
    for s in range(0, x.shape[0], cfg.eval_batch_size):
        xb = x[s : s + cfg.eval_batch_size]
        out.append(model(xb) if cfg.layer == "logits" else model.features(xb))
    return torch.cat(out).double()


@torch.no_grad()
def _accuracy(model: FeatureClassifier, data: Data, batch_size: int) -> float:
    model.eval()
    x, y = data
    correct = sum(
        int((model(x[s : s + batch_size]).argmax(1) == y[s : s + batch_size]).sum())
        for s in range(0, x.shape[0], batch_size)
    )
    return correct / max(x.shape[0], 1)


def control_study(cfg: HsicUnlearningConfig, seed: int) -> dict[str, Any]:
    """The controlled check: planted in-training features (class code + noise ``control_noise``) vs unseen ones
    (class code + noise 1), 10 balanced classes, dimension ``control_dim``; F1 of the protocol and of MMD at the
    smallest size of ``f1_subset_sizes``."""
    gen = torch.Generator().manual_seed(seed + 7)
    size, classes, d = cfg.f1_subset_sizes[0], 10, cfg.control_dim
    n = (cfg.reference_subsets + 2) * size
    code = torch.randn(classes, d, generator=gen, dtype=torch.float64)

    def planted(noise: float) -> torch.Tensor:
        y = torch.arange(n) % classes
        return code[y] + noise * torch.randn(n, d, generator=gen, dtype=torch.float64)

    proto = Protocol(cfg, seed)
    res = discrimination(
        proto,
        size,
        it_pool=planted(cfg.control_noise),
        oot_pool=planted(1.0),
        it_ref_pool=planted(cfg.control_noise),
        oot_ref_pool=planted(1.0),
        key=(EXP_CONTROL,),
    )
    return {**res, "noise_in": cfg.control_noise, "noise_out": 1.0, "dim": d}


def _check_sizes(cfg: HsicUnlearningConfig, n_forget: int, n_retain: int, n_ref: int, n_unseen: int) -> None:
    """Data-dependent bounds, as one-line usage errors naming the field."""
    big = cfg.max_subset_size
    if n_forget < big:
        raise UsageError(
            f"subset_size / f1_subset_sizes: the largest subset ({big}) exceeds the forget set ({n_forget} images); "
            "lower them or raise n_train / forget_ratio"
        )
    refs = 1 if cfg.reference_overlap else cfg.reference_subsets  # disjoint references need refs × |S| images
    if n_ref < refs * big:
        raise UsageError(
            f"reference_subsets: {refs} disjoint references of {big} need {refs * big} test images in the "
            f"reference half, have {n_ref} (raise n_test, or allow shared images with reference_overlap)"
        )
    if n_unseen < big:
        raise UsageError(
            f"n_test: the unseen half of the test split ({n_unseen}) is smaller than the largest subset ({big})"
        )
    if n_retain < 4 * refs * big:  # halved (OTR references | discrimination), the second half halved again
        raise UsageError(f"n_train: the retain set ({n_retain}) is too small for references and targets of {big}")


def _split(
    cfg: HsicUnlearningConfig, y: torch.Tensor, num_classes: int, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """(forget indices, retain indices) of the training set."""
    n = y.shape[0]
    if cfg.forget == "class":
        if cfg.forget_class >= num_classes:
            raise UsageError(f"forget_class: {cfg.forget_class} is not a class of {cfg.dataset} (0..{num_classes - 1})")
        mask = y.cpu() == cfg.forget_class
        return torch.nonzero(mask).flatten(), torch.nonzero(~mask).flatten()
    perm = torch.randperm(n, generator=gen)
    k = max(1, round(cfg.forget_ratio * n))
    return perm[:k].sort().values, perm[k:].sort().values


@dataclasses.dataclass(frozen=True)
class Splits:
    """The run's data: the image tensors, the forget / retain indices into the training split, the test split's
    out-of-training reference half (``ref_idx``) and unseen half (``unseen_idx``)."""

    data: ImageTensors
    forget_idx: torch.Tensor
    retain_idx: torch.Tensor
    ref_idx: torch.Tensor
    unseen_idx: torch.Tensor


def split_data(cfg: HsicUnlearningConfig, seed: int) -> Splits:
    """Load ``cfg.dataset`` and split it as :func:`run` does for ``seed`` (the same generator calls in the same
    order, so a saved run's sets can be rebuilt: :mod:`~iclr26_theory_metrics.methods.hsic_unlearning.diagnose`)."""
    data = load_image_tensors(cfg.dataset, n_train=cfg.n_train, n_test=cfg.n_test, seed=seed, scale="standardize")
    gen = torch.Generator().manual_seed(seed + 1)
    forget_idx, retain_idx = _split(cfg, data.y_train, data.num_classes, gen)
    test_perm = torch.randperm(data.x_test.shape[0], generator=gen)
    half = data.x_test.shape[0] // 2
    return Splits(data, forget_idx, retain_idx, test_perm[:half], test_perm[half:])


def evaluation_pools(proto: Protocol, n_retain: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The retain indices split once (keyed by the protocol's seed) into the OTR's in-training reference pool and
    the rest (the discrimination's pools)."""
    it_pool, retain_rest = disjoint_subsets(n_retain, n_retain // 2, 1, proto.generator(EXP_F1))
    return it_pool[0], retain_rest


def run(cfg: HsicUnlearningConfig, run_dir: RunDir) -> dict[str, Any]:
    """The method's ``run`` (see the module docstring); returns the results dict written to results.json."""
    t0 = time.perf_counter()
    dist, device, seed = run_dir.dist, run_dir.device, run_dir.seed
    sp = split_data(cfg, seed)
    data, forget_idx, retain_idx, ref_idx, unseen_idx = sp.data, sp.forget_idx, sp.retain_idx, sp.ref_idx, sp.unseen_idx
    k = data.num_classes
    _check_sizes(cfg, forget_idx.numel(), retain_idx.numel(), ref_idx.numel(), unseen_idx.numel())
    for n, what in ((data.x_train.shape[0], "training set"), (retain_idx.numel(), "retain set")):
        check_world(n, cfg.batch_size, dist, what)  # before anything is trained or written
    x, y = data.x_train.to(device), data.y_train.to(device)
    retain: Data = (x[retain_idx.to(device)], y[retain_idx.to(device)])
    forget: Data = (x[forget_idx.to(device)], y[forget_idx.to(device)])
    xt, yt = data.x_test.to(device), data.y_test.to(device)
    test_ref: Data = (xt[ref_idx.to(device)], yt[ref_idx.to(device)])
    unseen: Data = (xt[unseen_idx.to(device)], yt[unseen_idx.to(device)])

    # --- 2. the original and the retrained model (checkpointed) ---
    models: dict[str, FeatureClassifier] = {}
    ckpt = run_dir.load_checkpoint()
    state = dict(ckpt[1]) if ckpt is not None else {}
    for j, (name, train_set) in enumerate((("original", (x, y)), ("retrain", retain))):
        torch.manual_seed(seed)  # the same initialisation for both
        model = build_classifier(cfg, data.image_shape, k).to(device)
        if name in state:
            model.load_state_dict(state[name])
        else:
            step0 = j * cfg.epochs

            def log(epoch: int, loss: float, step0: int = step0, name: str = name) -> None:
                run_dir.log(step0 + epoch, phase=f"train {name}", epoch=epoch, loss=loss)

            train_classifier(
                model, train_set, epochs=cfg.epochs, lr=cfg.lr, batch_size=cfg.batch_size,
                weight_decay=cfg.weight_decay, gen=torch.Generator().manual_seed(seed + 2 + j), dist=dist, on_epoch=log,
            )  # fmt: skip
            state[name] = {key: v.detach().cpu() for key, v in model.state_dict().items()}
            run_dir.save_checkpoint((j + 1) * cfg.epochs, state)
        models[name] = model.eval()

    # --- 3. unlearning ---
    unseen_ref_losses = per_sample_loss(models["original"], test_ref, cfg.eval_batch_size)
    for i, method in enumerate(cfg.unlearning):
        models[method] = unlearn(
            method, models["original"], retain, forget, cfg, gen=torch.Generator().manual_seed(seed + 10 + i),
            num_classes=k, dist=dist, unseen_losses=unseen_ref_losses,
        )  # fmt: skip

    for name, model in models.items():  # for reuse: iclr26_shared.load_model(run, name)
        run_dir.save_model(
            name, model, extra={"role": "original" if name == "original" else "retrain" if name == "retrain" else
                                "unlearned", "dataset": data.name, "input": "[B, C, H, W]"},
        )  # fmt: skip

    # --- 4. evaluation of every model (common random numbers: the same draws for every model) ---
    proto = Protocol(cfg, seed + 3)
    # the retain images split once into the OTR's in-training reference pool and the discrimination's pools
    it_pool_idx, retain_rest = evaluation_pools(proto, retain_idx.numel())
    evals: dict[str, dict[str, Any]] = {}
    feats: dict[str, dict[str, torch.Tensor]] = {}
    step = 2 * cfg.epochs
    for name, model in models.items():
        f = {
            key: _features(model, d[0], cfg)
            for key, d in (("retain", retain), ("forget", forget), ("ref", test_ref), ("unseen", unseen))
        }
        feats[name] = f
        losses = {
            key: per_sample_loss(model, d, cfg.eval_batch_size)
            for key, d in (("retain", retain), ("forget", forget), ("ref", test_ref), ("unseen", unseen))
        }
        row = {
            "acc_retain": _accuracy(model, retain, cfg.eval_batch_size),
            "acc_forget": _accuracy(model, forget, cfg.eval_batch_size),
            "acc_test": _accuracy(model, (xt, yt), cfg.eval_batch_size),
            **loss_attack(losses["retain"], losses["ref"], losses["forget"], losses["unseen"]),
            **otr_study(proto, f["forget"], f["retain"][it_pool_idx], f["ref"]),
        }
        step += 1
        run_dir.log(step, phase="eval", model=name, **{k: v for k, v in row.items() if not isinstance(v, list)})
        evals[name] = row

    # --- 5. discrimination ---
    # the other half of the retain images, halved again: reference pool / in-training target pool
    it_ref_part, it_target_part = retain_rest[: retain_rest.numel() // 2], retain_rest[retain_rest.numel() // 2 :]
    rf = feats["retrain"]
    f1_retrain = []
    for size in cfg.f1_subset_sizes:
        res = discrimination(
            proto, size, it_pool=rf["retain"][it_target_part], oot_pool=rf["forget"],
            it_ref_pool=rf["retain"][it_ref_part], oot_ref_pool=rf["ref"], key=(EXP_F1,),
        )  # fmt: skip
        f1_retrain.append(res)
        step += 1
        run_dir.log(step, phase="discrimination retrain", **{k: v for k, v in res.items() if not isinstance(v, list)})
    at_chance_mia: dict[str, Any] = {}
    for name in ("original", "mia-fool"):
        if name in feats:
            f = feats[name]
            res = discrimination(
                proto, cfg.subset_size, it_pool=f["forget"], oot_pool=f["unseen"],
                it_ref_pool=f["retain"][it_ref_part], oot_ref_pool=f["ref"], key=(EXP_FORGET_UNSEEN,),
            )  # fmt: skip
            at_chance_mia[name] = {**res, "mia_acc": evals[name]["mia_acc"]}
            step += 1
            run_dir.log(
                step, phase=f"discrimination {name}", **{k: v for k, v in res.items() if not isinstance(v, list)}
            )

    control = control_study(cfg, seed)
    if dist.is_main:
        sizes = [float(r["size"]) for r in f1_retrain]
        plot_curves(
            run_dir.figure_path("f1_vs_subset_size"),
            {
                "split-half HSIC": (sizes, [r["f1"] for r in f1_retrain]),
                "MMD": (sizes, [r["f1_mmd"] for r in f1_retrain]),
                "always in (trivial)": (sizes, [2 / 3] * len(sizes)),
            },
            xlabel="|S|",
            ylabel="F1 (in training)",
            title=f"retrained model, {data.name}: in- vs out-of-training subsets",
        )
        plot_bars(
            run_dir.figure_path("otr"),
            {n: e["otr"] for n, e in evals.items()},
            ylabel="OTR",
            title="out-of-training rate of forget subsets",
        )
        plot_bars(
            run_dir.figure_path("mia"),
            {n: e["mia_acc"] for n, e in evals.items()},
            ylabel="MIA balanced accuracy",
            title="loss attack on forget vs unseen",
        )
    return {
        "dataset": data.name,
        "model": cfg.model,
        "n_train": int(x.shape[0]),
        "n_forget": int(forget_idx.numel()),
        "n_retain": int(retain_idx.numel()),
        "n_test": int(xt.shape[0]),
        "forget": cfg.forget,
        "subset_size": cfg.subset_size,
        "n_targets": cfg.n_targets,
        "chance_f1": 2 / 3,
        "protocol_draws": cfg.protocol_draws,
        "chance_mia": 0.5,
        "seconds": time.perf_counter() - t0,
        "models": evals,
        "f1_retrain": f1_retrain,
        "mia_at_chance": at_chance_mia,
        "control": control,
    }


def dry_run(cfg: HsicUnlearningConfig, device: torch.device) -> dict[str, Any]:
    """``--dry-run``: the preset's data (20 training / 10 test images of ``cfg.dataset``), the classifier and its
    SGD optimizer at the preset's real sizes, one training step and one evaluation step (loss, accuracy and
    penultimate features) at batch 2."""
    import torch.nn.functional as F

    data = load_image_tensors(cfg.dataset, n_train=20, n_test=10, seed=0, scale="standardize")
    model = build_classifier(cfg, data.image_shape, data.num_classes).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9, weight_decay=cfg.weight_decay)
    x, y = data.x_train[:2].to(device), data.y_train[:2].to(device)
    model.train()
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        xt, yt = data.x_test[:2].to(device), data.y_test[:2].to(device)
        logits = model(xt)
        feats = model.features(xt)
    return {
        "parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "train_loss": float(loss.detach()),
        "eval_loss": float(F.cross_entropy(logits, yt)),
        "eval_accuracy": float((logits.argmax(1) == yt).double().mean()),
        "feature_dim": int(feats.shape[1]),
    }
