"""Restore a whole cryo-EM map with a trained network (CryoLVM / EMReady inference, paper App. D.2).

``restore(map, model)``:

1. read the map (an MRC path or a :class:`~iclr26_science.cryoem.mrc.DensityMap`);
2. resample it to the voxel size the network was trained at (``model.apix``; trilinear, cell-centred, so
   voxel ``i`` of the result sits at ``origin − a/2 + (i + ½)·a'`` for input/output voxel sizes ``a``/``a'``);
3. scale it as in training (:func:`~iclr26_science.cryoem.pairs.scale_positive`: the 99.9 % quantile of the
   positive density → 1, clipped to ``[0, 1]``);
4. zero-pad every edge to at least one tile and to a multiple of the network's ``2^L`` down-sampling;
5. run Gaussian-weighted tiled inference (:func:`~iclr26_science.cryoem.tiling.tiled_inference`, tiles of
   ``model.crop`` voxels every ``stride``) and crop the padding off;
6. return the restored map on the resampled grid (and write it as MRC when ``out`` is given).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

import numpy as np
import torch

from iclr26_science.cryoem.mrc import DensityMap, read_map, write_map
from iclr26_science.cryoem.pairs import scale_positive
from iclr26_science.cryoem.scunet import SCUNet3D
from iclr26_science.cryoem.tiling import tiled_inference
from iclr26_shared.errors import DataError

__all__ = ["VOXEL_RANGE", "checked_apix", "resample", "restore"]


def _linear_along(x: np.ndarray, axis: int, positions: np.ndarray) -> np.ndarray:
    """Linear interpolation of ``x`` along ``axis`` at fractional voxel indices ``positions`` (clamped to the
    first/last voxel outside ``[0, n − 1]``, as ``F.interpolate(align_corners=False)`` does)."""
    n = x.shape[axis]
    p = np.clip(positions, 0.0, n - 1)
    i0 = np.minimum(np.floor(p).astype(np.int64), n - 1)
    i1 = np.minimum(i0 + 1, n - 1)
    shape = [1] * x.ndim
    shape[axis] = len(p)
    w = (p - i0).reshape(shape)
    return np.take(x, i0, axis=axis) * (1 - w) + np.take(x, i1, axis=axis) * w


#: Voxel sizes (Å) a cryo-EM map can plausibly have; outside them the header is wrong (cell dimensions in
#: nm, missing, or copied from another map) and a network would see the wrong scale.
VOXEL_RANGE = (0.2, 20.0)


def checked_apix(density: DensityMap, where: str) -> float:
    """``density``'s isotropic voxel size, or a one-line DataError naming ``where`` and what was expected
    (cubic voxels within :data:`VOXEL_RANGE`)."""
    x, y, z = density.voxel_size
    if not (math.isclose(x, y, rel_tol=1e-5) and math.isclose(x, z, rel_tol=1e-5)):
        raise DataError(f"{where}: anisotropic voxels {density.voxel_size} Å (x, y, z); expected cubic voxels "
                        "(resample the map to cubes first)")  # fmt: skip
    lo, hi = VOXEL_RANGE
    if not lo <= x <= hi:
        raise DataError(f"{where}: voxel size {x:g} Å is outside {lo:g}–{hi:g} Å per voxel, the range of cryo-EM "
                        "maps (are the header's cell dimensions in Å, not nm, and present?)")  # fmt: skip
    return float(x)


def resample(density: DensityMap, apix: float) -> DensityMap:
    """``density`` on a grid of ``apix`` Å voxels covering the same box (trilinear, cell-centred): output
    voxel ``i`` sits at ``origin − a/2 + (i + ½)·apix`` for input voxel size ``a``, i.e. at input index
    ``(i + ½)·apix/a − ½``, for ``round(n·a/apix)`` voxels per axis (the last one clamped to the box edge when
    ``n·a`` is not a multiple of ``apix``). Separable linear interpolation along each axis."""
    src = density.apix
    if math.isclose(src, apix, rel_tol=1e-6):
        return density
    y = np.asarray(density.data, dtype=np.float64)
    for axis, n in enumerate(density.data.shape):
        out_n = max(1, round(n * src / apix))
        y = _linear_along(y, axis, (np.arange(out_n) + 0.5) * apix / src - 0.5)
    origin = tuple(float(o - src / 2 + apix / 2) for o in density.origin)
    return DensityMap(y.astype(np.float32), (apix, apix, apix), origin)  # pyright: ignore[reportArgumentType]


@torch.no_grad()
def restore(
    density: DensityMap | str | Path,
    model: SCUNet3D,
    *,
    apix: float | None = None,
    tile: int | None = None,
    stride: int | None = None,
    weighting: Literal["gaussian", "uniform"] = "gaussian",
    batch: int = 4,
    device: str | torch.device = "cpu",
    out: str | Path | None = None,
) -> DensityMap:
    """Restore ``density`` with ``model`` (see the module docstring for the steps).

    Args:
        density: The map, or the path of an MRC/CCP4 file.
        model: A trained :class:`SCUNet3D` (e.g. ``iclr26_shared.load_model(run_dir)`` of a cryolvm run, or
            ``SCUNet3D.from_pretrained(folder)``).
        apix: Voxel size to restore at (default ``model.apix``, the training voxel size; else the map's).
        tile: Tile edge in voxels (default ``model.crop``, else 48), rounded up to a multiple of ``2^L``.
        stride: Tile start spacing (default ``tile // 2``).
        weighting: Overlap fusion (``gaussian`` paper, ``uniform`` EMReady).
        batch: Tiles per forward pass.
        device: Where to run the network.
        out: Write the result as a mode-2 MRC file here too.

    Returns:
        The restored map ``[nz, ny, nx]`` at ``apix`` Å (values on the network's ``[0, 1]`` scale).
    """
    m = read_map(density) if isinstance(density, str | Path) else density
    source = checked_apix(m, str(density) if isinstance(density, str | Path) else "restore: the map")
    target_apix = apix or model.apix or source
    m = resample(m, float(target_apix))
    f = 2**model.levels
    t = int(tile or model.crop or 48)
    t = -(-t // f) * f
    stride = int(stride or max(1, t // 2))
    if not 0 < stride <= t:
        raise DataError(f"restore: stride must be in [1, tile = {t}], got {stride}")
    x = scale_positive(m.data)
    shape = x.shape
    padded = tuple(max(t, -(-n // f) * f) for n in shape)
    vol = np.zeros(padded, dtype=np.float32)
    vol[: shape[0], : shape[1], : shape[2]] = x
    dev = torch.device(device)
    model = model.to(dev).eval()
    y = tiled_inference(model, torch.from_numpy(vol)[None].to(dev), t, stride, weighting=weighting, batch=batch)
    data = y[0, : shape[0], : shape[1], : shape[2]].float().cpu().numpy()
    result = DensityMap(np.ascontiguousarray(data), m.voxel_size, m.origin)
    if out is not None:
        write_map(out, result)
    return result
