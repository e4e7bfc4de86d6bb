"""Training pairs of the three restoration tasks from atomic models (paper §4, App. C), and crops.

The target is always ``molmap`` at the target resolution (the paper's EMReady-style targets); the input
is what an experiment would give, simulated here since no deposited maps ship offline:

* ``sharpen`` — the same density blurred by a B factor drawn from ``bfactor`` (Å²) plus noise at ``snr``;
* ``super-resolution`` — molmap at ``low_resolution`` Å, blurred and noisy the same way;
* ``missing-wedge`` — the target plus noise, with the Fourier wedge outside ``±tilt_max``° removed.

Inputs and targets are scaled like EMReady's: divided by the 99.9th percentile of their positive density
and clipped to ``[0, 1]`` (:func:`scale_positive`), so the identity map is a sensible start. :func:`normalise`
is the paper's pre-training normalisation (clip to the 1st–99th percentiles, rescale to ``[0, 1]``); with it
the input background sits near 0.4 while the target's is 0, which a few hundred CPU steps did not learn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from iclr26_science.cryoem.mrc import DensityMap
from iclr26_science.cryoem.simulate import add_noise, apply_bfactor, apply_missing_wedge, box_for, molmap
from iclr26_science.cryoem.structures import Atoms

__all__ = ["TASKS", "CropSource", "Degradation", "Pair", "make_pair", "normalise", "random_crops", "scale_positive"]

Task = Literal["sharpen", "super-resolution", "missing-wedge"]
TASKS: tuple[Task, ...] = ("sharpen", "super-resolution", "missing-wedge")


@dataclass(frozen=True)
class Degradation:
    """How an input map is made from an atomic model (see the module docstring)."""

    task: Task = "sharpen"
    resolution: float = 4.0
    low_resolution: float = 8.0
    bfactor: tuple[float, float] = (50.0, 150.0)
    snr: float = 1.0
    noise: Literal["white", "pink"] = "white"
    tilt_max: float = 60.0


class CropSource(Protocol):
    """What :func:`random_crops` reads: an input and a target on one grid, and a name for messages."""

    @property
    def name(self) -> str: ...
    @property
    def x(self) -> np.ndarray: ...
    @property
    def y(self) -> np.ndarray: ...


@dataclass(frozen=True)
class Pair:
    """A normalised input/target pair on one grid, the atoms that made it and the raw input map."""

    name: str
    x: np.ndarray
    y: np.ndarray
    atoms: Atoms
    raw: DensityMap


def normalise(data: np.ndarray, lo_q: float, hi_q: float) -> np.ndarray:
    """Clip to the ``[lo_q, hi_q]`` quantiles and rescale to ``[0, 1]`` (float32)."""
    lo, hi = np.quantile(data, [lo_q, hi_q])
    if hi <= lo:
        return np.zeros_like(data, dtype=np.float32)
    return ((np.clip(data, lo, hi) - lo) / (hi - lo)).astype(np.float32)


def scale_positive(data: np.ndarray, q: float = 0.999) -> np.ndarray:
    """EMReady's scaling: divide by the ``q`` quantile of the positive density and clip to ``[0, 1]``."""
    pos = data[data > 0]
    top = float(np.quantile(pos, q)) if pos.size else 0.0
    if top <= 0:
        return np.zeros_like(data, dtype=np.float32)
    return np.clip(data / top, 0.0, 1.0).astype(np.float32)


def make_pair(
    atoms: Atoms,
    deg: Degradation,
    apix: float,
    rng: np.random.Generator,
    *,
    pad: float = 6.0,
    multiple: int = 8,
    min_edge: int = 1,
) -> Pair:
    """Input and target maps of ``atoms`` for ``deg.task`` on a cubic box (edge a multiple of ``multiple``,
    at least ``min_edge``)."""
    shape, origin = box_for(atoms, apix, pad=pad, multiple=multiple, min_edge=min_edge)
    target = molmap(atoms, deg.resolution, apix, shape=shape, origin=origin)
    if deg.task == "sharpen":
        raw = apply_bfactor(target.data, float(rng.uniform(*deg.bfactor)), apix)
        raw = add_noise(raw, deg.snr, rng, kind=deg.noise)
    elif deg.task == "super-resolution":
        low = molmap(atoms, deg.low_resolution, apix, shape=shape, origin=origin).data
        raw = add_noise(apply_bfactor(low, float(rng.uniform(*deg.bfactor)), apix), deg.snr, rng, kind=deg.noise)
    elif deg.task == "missing-wedge":
        raw = apply_missing_wedge(add_noise(target.data, deg.snr, rng, kind=deg.noise), deg.tilt_max)
    else:
        raise ValueError(f"unknown task {deg.task!r} (expected one of {', '.join(TASKS)})")
    return Pair(
        atoms.name, scale_positive(raw), scale_positive(target.data), atoms,
        DensityMap(raw, target.voxel_size, target.origin),
    )  # fmt: skip


def random_crops(
    pairs: Sequence[CropSource],
    size: int,
    count: int,
    rng: np.random.Generator,
    *,
    min_target: float = 0.2,
    tries: int = 50,
) -> tuple[np.ndarray, np.ndarray]:
    """``count`` random ``size³`` crops ``([count, 1, s, s, s]`` inputs, targets): a random pair each, a
    position whose target crop reaches ``min_target`` (so crops hold density) when one is found in ``tries``."""
    xs, ys = [], []
    for _ in range(count):
        p = pairs[int(rng.integers(len(pairs)))]
        n = p.x.shape
        if min(n) < size:
            raise ValueError(f"random_crops: map {p.name} of shape {n} is smaller than the crop {size}")
        z = y = x = 0
        for _ in range(max(tries, 1)):
            z, y, x = (int(rng.integers(0, m - size + 1)) for m in n)
            if p.y[z : z + size, y : y + size, x : x + size].max() >= min_target:
                break
        xs.append(p.x[z : z + size, y : y + size, x : x + size])
        ys.append(p.y[z : z + size, y : y + size, x : x + size])
    return np.stack(xs)[:, None], np.stack(ys)[:, None]
