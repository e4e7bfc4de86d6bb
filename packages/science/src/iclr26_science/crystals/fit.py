"""Fit and predict on your own crystals: a list of pymatgen ``Structure`` s and one scalar target each.

::

    from iclr26_science.crystals import FitSettings, fit
    model = fit(structures, targets, FitSettings(epochs=60))    # a CrystalFourierTransformer
    model.history                                               # per epoch: loss, val_mae, lr, seconds
    y = model.predict(new_structures)                           # [S] numpy, in the targets' units
    model.save_pretrained("cft"); CrystalFourierTransformer.from_pretrained("cft")

``fit`` runs the recipe of the ``crystal-fourier-transformer`` method's fine-tuning phase (paper §5): the
target standardised on the training crystals, AdamW with linear warm-up and cosine decay, MSE, gradient
clipping, the state of lowest validation MAE kept (a random ``val_fraction`` of the crystals). The returned model's
``history`` holds one row per epoch (``epoch``, ``loss``: the mean training MSE of the standardised
target, ``val_mae``: in the targets' units or None, ``lr``, ``seconds``); ``callback(row)`` sees each row
as it is made and stops training by returning True. The
method's orbit-distance pre-training of the encoding MLP is not part of it (``iclr26-science
crystal-fourier-transformer`` runs both).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import annotated_types as at
import numpy as np
import torch
from torch import nn

from iclr26_science.crystals.basis import BasisNormalization
from iclr26_science.crystals.encoding import EncodingKind
from iclr26_science.crystals.model import CrystalBatch, CrystalFourierTransformer
from iclr26_science.crystals.structures import CrystalInput, structure_to_input
from iclr26_shared.config import NonNegFloat, NonNegInt, PosFloat, PosInt, UnitFloat, validate
from iclr26_shared.errors import DataError

__all__ = ["FitSettings", "as_inputs", "batch_of", "fit", "fit_crystals"]


@dataclass(frozen=True)
class FitSettings:
    """The model and the training recipe (the method's defaults)."""

    num_basis: PosInt = 64
    """Orbits K of the positional encoding."""
    dim: PosInt = 128
    """Model width (paper 128)."""
    depth: PosInt = 4
    """Transformer blocks (paper 4)."""
    heads: PosInt = 4
    """Attention heads (paper 4)."""
    ff: PosInt = 512
    """FFN width (paper 512)."""
    encoding: EncodingKind = "symmetry"
    """Symmetry-adapted basis (the paper) or plain plane waves (ablation)."""
    basis_normalization: BasisNormalization = "unit"
    """``unit`` (the reference code's unit-modulus orbit sums) or ``orthonormal`` (divided by ``√|O|``)."""
    head_hidden: tuple[int, ...] = (2048, 256)
    """Hidden widths of the output head (paper 2048, 256)."""
    epochs: PosInt = 60
    """Passes over the training crystals."""
    batch_size: PosInt = 32
    """Crystals per step."""
    lr: PosFloat = 1e-3
    """Peak AdamW learning rate."""
    weight_decay: NonNegFloat = 1e-3
    """AdamW weight decay."""
    warmup_frac: UnitFloat = 0.05
    """Share of the steps with a linear warm-up."""
    grad_clip: PosFloat = 1.0
    """Gradient-norm clip."""
    val_fraction: Annotated[float, at.Interval(ge=0, lt=1)] = 0.1
    """Share of the crystals held out to pick the best epoch (0: keep the last)."""
    seed: NonNegInt = 0
    """Seed of the initialisation, the split and the batch order."""

    def __post_init__(self) -> None:
        validate(self)


def as_inputs(structures: Sequence[object]) -> list[CrystalInput]:
    """Each item as a :class:`CrystalInput` (pymatgen ``Structure`` s are symmetry-refined; a DataError
    names the index of one that is not a crystal)."""
    if isinstance(structures, str | bytes) or not isinstance(structures, Sequence):
        raise DataError(f"expected a list of pymatgen Structures, got {type(structures).__name__}")
    return [s if isinstance(s, CrystalInput) else structure_to_input(s, where=f"structures[{i}]")  # type: ignore[arg-type]
            for i, s in enumerate(structures)]  # fmt: skip


def batch_of(inputs: Sequence[CrystalInput]) -> CrystalBatch:
    """A padded :class:`CrystalBatch` of ``inputs`` (features computed by the model)."""
    n = max(c.num_atoms for c in inputs)
    species = torch.zeros(len(inputs), n, dtype=torch.long)
    frac = torch.zeros(len(inputs), n, 3)
    for row, c in enumerate(inputs):
        species[row, : c.num_atoms] = torch.from_numpy(c.species)
        frac[row, : c.num_atoms] = torch.from_numpy(c.frac).float()
    lattice = torch.from_numpy(np.stack([c.lattice for c in inputs])).float()
    group = torch.tensor([c.space_group for c in inputs], dtype=torch.long)
    return CrystalBatch(species, frac, lattice, group)


def fit(
    structures: Sequence[object],
    targets: Sequence[float] | np.ndarray,
    settings: FitSettings | None = None,
    *,
    device: str | torch.device = "cpu",
    callback: Callable[[dict[str, Any]], bool | None] | None = None,
) -> CrystalFourierTransformer:
    """Train a :class:`CrystalFourierTransformer` on ``structures`` → ``targets`` (see the module docstring).

    Returns the model (the state of lowest validation MAE, or the last) with ``model.history``: one dict per
    epoch run (``epoch`` from 1, ``loss``, ``val_mae``, ``lr``, ``seconds``). ``callback(row)`` is called
    after each epoch; returning True stops training there."""
    s = settings or FitSettings()
    inputs = as_inputs(structures)
    y = np.asarray(targets, dtype=np.float64)
    if y.shape != (len(inputs),) or not np.isfinite(y).all():
        raise DataError(f"targets: expected {len(inputs)} finite numbers (one per structure), got shape {y.shape}")
    if len(inputs) < 2:
        raise DataError(f"structures: at least 2 crystals are needed to fit, got {len(inputs)}")
    rng = np.random.default_rng(s.seed)
    order = rng.permutation(len(inputs))
    n_val = round(s.val_fraction * len(inputs)) if s.val_fraction > 0 else 0
    n_val = min(n_val, len(inputs) - 1)
    val, train = order[:n_val], order[n_val:]
    mean, std = float(y[train].mean()), float(max(y[train].std(), 1e-6))
    torch.manual_seed(s.seed)
    dev = torch.device(device)
    model = CrystalFourierTransformer(
        s.num_basis, s.dim, s.depth, s.heads, s.ff, 0.0, s.encoding, 256, 2, True, s.head_hidden,
        s.basis_normalization,
    ).to(dev)  # fmt: skip
    model.set_target_scale(mean, std)
    z = torch.as_tensor((y - mean) / std, dtype=torch.float32, device=dev)
    full = batch_of(inputs)  # the basis features depend on the data only: computed once, as the method does
    with torch.no_grad():
        full.features = model.encoding.features(full.frac.to(dev), full.group.to(dev))

    def rows(idx: np.ndarray) -> CrystalBatch:
        t = torch.as_tensor(idx)
        feats = None if full.features is None else full.features[t.to(full.features.device)]
        return CrystalBatch(full.species[t], full.frac[t], full.lattice[t], full.group[t], feats).to(dev)

    opt = torch.optim.AdamW(model.parameters(), lr=s.lr, weight_decay=s.weight_decay)
    total = s.epochs * math.ceil(len(train) / s.batch_size)
    warm = max(1, round(s.warmup_frac * total))

    def lr_at(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    best = (math.inf, None)
    history: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for epoch in range(1, s.epochs + 1):
        model.train()
        perm = train[rng.permutation(len(train))]
        losses: list[float] = []
        for k in range(0, len(perm), s.batch_size):
            idx = perm[k : k + s.batch_size]
            pred = model(rows(idx))
            loss = ((pred - z[torch.as_tensor(idx, device=dev)]) ** 2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), s.grad_clip)
            opt.step()
            sched.step()
            losses.append(float(loss.detach()))
        mae: float | None = None
        if n_val:
            model.eval()
            with torch.no_grad():
                pred_val = (model(rows(val)).double() * model.target_std + model.target_mean).cpu().numpy()
            mae = float(np.abs(pred_val - y[val]).mean())
            if mae < best[0]:
                best = (mae, {k: v.detach().clone() for k, v in model.state_dict().items()})
        row = {"epoch": epoch, "loss": float(np.mean(losses)), "val_mae": mae,
               "lr": float(opt.param_groups[0]["lr"]), "seconds": time.perf_counter() - t0}  # fmt: skip
        history.append(row)
        if callback is not None and callback(row):
            break
    if best[1] is not None:
        model.load_state_dict(best[1])
    model.history = history
    return model.eval()


#: :func:`fit` under the name the top-level package exports (``from iclr26_science import fit_crystals``).
fit_crystals = fit
