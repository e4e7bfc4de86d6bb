"""Fine-tune a restoration network on your own map pairs, outside the run harness (CryoLVM §3.2).

``fine_tune(inputs, targets, network)``:

1. read each input/target pair (:class:`~iclr26_science.cryoem.mrc.DensityMap` s or MRC paths; the two of a
   pair on one grid, e.g. a map and ``molmap(atoms, resolution, grid=map)`` of its model);
2. resample both to the network's voxel size ``network.apix`` (a network built without one is trained at
   the first input's voxel size) and scale them as in training
   (:func:`~iclr26_science.cryoem.pairs.scale_positive`);
3. for ``steps`` steps draw ``batch_size`` random ``crop³`` crops whose target holds density
   (:func:`~iclr26_science.cryoem.pairs.random_crops`) and take an AdamW step on
   ``α·MSE + (1 − α)·L_Hist`` (:func:`~iclr26_science.cryoem.losses.restoration_loss`, paper Eq. 3–5).

This is the ``cryolvm`` method's fine-tuning phase without its validation curves and variants. Start from a
saved network (``SCUNet3D.from_pretrained(folder)``, ``iclr26_shared.load_model(run_dir)``: JEPA pre-trained
or already fine-tuned) or a fresh :class:`~iclr26_science.cryoem.scunet.SCUNet3D`; the result restores
whole maps with :func:`~iclr26_science.cryoem.restore.restore` and saves with ``save_pretrained``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import annotated_types as at
import numpy as np
import torch

from iclr26_science.cryoem._inputs import map_list, read_checked
from iclr26_science.cryoem.losses import restoration_loss
from iclr26_science.cryoem.mrc import DensityMap
from iclr26_science.cryoem.pairs import random_crops, scale_positive
from iclr26_science.cryoem.restore import resample
from iclr26_science.cryoem.scunet import SCUNet3D
from iclr26_shared.config import NonNegFloat, NonNegInt, PosFloat, PosInt, UnitFloat, validate
from iclr26_shared.errors import DataError

__all__ = ["FineTuneSettings", "MapPair", "fine_tune", "map_pairs"]


@dataclass(frozen=True)
class FineTuneSettings:
    """The fine-tuning recipe (the ``cryolvm`` method's defaults)."""

    steps: PosInt = 2000
    """AdamW steps."""
    lr: PosFloat = 1e-3
    """AdamW learning rate."""
    weight_decay: NonNegFloat = 0.05
    """AdamW weight decay."""
    batch_size: PosInt = 8
    """Crops per step."""
    crop: NonNegInt = 0
    """Crop edge in voxels (0: ``network.crop``, else 48, the paper's); a multiple of the network's ``2^L``."""
    alpha: UnitFloat = 0.9
    """Loss weight: α·MSE + (1 − α)·histogram JS (1: MSE only)."""
    hist_bins: Annotated[int, at.Ge(2)] = 32
    """Soft-histogram bins over [0, 1]."""
    min_target: UnitFloat = 0.2
    """A crop's target must reach this scaled density somewhere (crops hold density, not solvent)."""
    seed: NonNegInt = 0
    """Seed of the crop positions."""

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class MapPair:
    """A scaled input/target pair on one grid (what :func:`random_crops` draws from)."""

    name: str
    x: np.ndarray
    y: np.ndarray


def _read(m: DensityMap | str | Path, where: str) -> DensityMap:
    dm = read_checked(m, where)
    if dm is None:
        raise DataError(f"{where}: expected a DensityMap or an MRC path, got {type(m).__name__}")
    return dm


def map_pairs(
    inputs: Sequence[DensityMap | str | Path], targets: Sequence[DensityMap | str | Path], apix: float | None
) -> tuple[list[MapPair], float]:
    """Steps 1–2 of the module docstring: the scaled pairs at ``apix`` (default the first input's) and the
    voxel size used."""
    lists = all(isinstance(v, Sequence) and not isinstance(v, str) for v in (inputs, targets))
    if lists and len(inputs) != len(targets):
        raise DataError(f"fine_tune: expected as many targets as inputs (>= 1), got {len(inputs)} and {len(targets)}")
    inputs, targets = map_list(inputs, "fine_tune", "inputs"), map_list(targets, "fine_tune", "targets")
    pairs: list[MapPair] = []
    for i, (a, b) in enumerate(zip(inputs, targets, strict=True)):
        x, y = _read(a, f"inputs[{i}]"), _read(b, f"targets[{i}]")
        if x.data.shape != y.data.shape or not math.isclose(x.apix, y.apix, rel_tol=1e-5):
            raise DataError(
                f"pair {i}: input {x.data.shape} at {x.apix:g} Å and target {y.data.shape} at {y.apix:g} Å must share "
                "one grid (simulate a model on the map's grid: molmap(atoms, resolution, grid=map))"
            )
        apix = apix or x.apix
        x, y = resample(x, apix), resample(y, apix)
        pairs.append(MapPair(f"pair {i}", scale_positive(x.data), scale_positive(y.data)))
    assert apix is not None
    return pairs, float(apix)


def fine_tune(
    inputs: Sequence[DensityMap | str | Path],
    targets: Sequence[DensityMap | str | Path],
    network: SCUNet3D,
    settings: FineTuneSettings | None = None,
    *,
    device: str | torch.device = "cpu",
    log: Callable[[int, float], None] | None = None,
) -> SCUNet3D:
    """Train ``network`` in place on the pairs (see the module docstring) and return it in eval mode.

    ``log(step, loss)`` is called after every step. A DataError names the pair whose grids differ or whose
    map (after resampling) is smaller than one crop."""
    s = settings or FineTuneSettings()
    pairs, _ = map_pairs(inputs, targets, network.apix)
    f = 2**network.levels
    crop = int(s.crop or network.crop or 48)
    if crop % f:
        raise DataError(f"fine_tune: crop {crop} must be a multiple of the network's 2^L = {f}")
    for p in pairs:
        if min(p.x.shape) < crop:
            raise DataError(f"{p.name}: map of shape {p.x.shape} (at the network's voxel size) is smaller than "
                            f"the crop {crop}: pad it or lower settings.crop")  # fmt: skip
    rng = np.random.default_rng(s.seed)
    dev = torch.device(device)
    net = network.to(dev)
    opt = torch.optim.AdamW(net.parameters(), lr=s.lr, weight_decay=s.weight_decay)
    for step in range(s.steps):
        x, y = random_crops(pairs, crop, s.batch_size, rng, min_target=s.min_target)
        net.train()
        loss = restoration_loss(net(torch.from_numpy(x).to(dev)), torch.from_numpy(y).to(dev), s.alpha, s.hist_bins)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if log is not None:
            log(step, float(loss.detach()))
    return net.eval()
