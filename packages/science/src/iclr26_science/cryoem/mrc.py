"""MRC/CCP4 density maps through :mod:`mrcfile`: voxel size, origin and axis order, with validation.

A :class:`DensityMap` holds ``data`` as a float32 array indexed ``[z, y, x]`` (sections, rows, columns in
the standard MRC axis order ``mapc, mapr, maps = 1, 2, 3``), the voxel size in Å per axis ``(x, y, z)``
and the origin in Å ``(x, y, z)`` of voxel ``[0, 0, 0]``. A file stored in another axis order is permuted
on read, so every array this package handles has the same layout.

Bad files raise :class:`~iclr26_shared.errors.DataError` with one line naming the file and what was
expected (missing file, truncated or malformed header, complex or unknown mode, not a volume, NaN/inf
voxels, zero voxel size); the command line turns it into ``error: ...`` and exit code 2.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mrcfile
import numpy as np

from iclr26_shared.errors import DataError

__all__ = ["REAL_MODES", "DensityMap", "read_map", "write_map"]

#: MRC modes of real-valued voxels that maps may use (0 int8, 1 int16, 2 float32, 6 uint16, 12 float16).
REAL_MODES = (0, 1, 2, 6, 12)


@dataclass(frozen=True)
class DensityMap:
    """A 3-D density map.

    Attributes:
        data: ``[nz, ny, nx]`` float32 voxel values.
        voxel_size: Å per voxel along ``(x, y, z)``.
        origin: Å position ``(x, y, z)`` of voxel ``[0, 0, 0]``'s centre.
    """

    data: np.ndarray
    voxel_size: tuple[float, float, float]
    origin: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        if self.data.ndim != 3:
            raise DataError(f"density map: expected a 3-D array, got shape {self.data.shape}")
        if min(self.data.shape) < 1:
            raise DataError(f"density map: empty array of shape {self.data.shape}")
        if not all(np.isfinite(v) and v > 0 for v in self.voxel_size):
            raise DataError(f"density map: voxel size must be positive and finite, got {self.voxel_size}")
        if not np.isfinite(self.data).all():
            raise DataError(f"density map: {int((~np.isfinite(self.data)).sum())} NaN/inf voxels")

    @property
    def apix(self) -> float:
        """The isotropic voxel size in Å (raises :class:`DataError` if the voxels are not cubes)."""
        x, y, z = self.voxel_size
        if not (np.isclose(x, y, rtol=1e-5) and np.isclose(x, z, rtol=1e-5)):
            raise DataError(f"density map: anisotropic voxels {self.voxel_size} Å (resample to cubes first)")
        return float(x)

    @property
    def shape(self) -> tuple[int, int, int]:
        """``(nz, ny, nx)``."""
        nz, ny, nx = self.data.shape
        return int(nz), int(ny), int(nx)


def write_map(path: str | Path, density: DensityMap) -> Path:
    """Write ``density`` as a mode-2 (float32) MRC file (overwrites); returns the path."""
    path = Path(path)
    with mrcfile.new(path, overwrite=True) as m:
        m.set_data(np.ascontiguousarray(density.data, dtype=np.float32))
        m.voxel_size = tuple(float(v) for v in density.voxel_size)
        header: Any = m.header
        header.origin.x, header.origin.y, header.origin.z = density.origin
    return path


def read_map(path: str | Path) -> DensityMap:
    """Read and validate an MRC/CCP4 map (see the module docstring for what is checked)."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such map file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with mrcfile.open(path, mode="r", permissive=True) as m:
                header: Any = m.header
                data = m.data
                if data is None:
                    raise DataError(f"{path}: not an MRC/CCP4 map (unreadable header or unknown mode)")
                mode = int(header.mode)
                if mode not in REAL_MODES:
                    raise DataError(f"{path}: MRC mode {mode} is not a real-valued map (expected one of {REAL_MODES})")
                nx, ny, nz = int(header.nx), int(header.ny), int(header.nz)
                if data.ndim != 3 or m.is_volume_stack() or m.is_image_stack() or nz < 2:
                    raise DataError(f"{path}: expected one 3-D volume, got data of shape {data.shape}")
                if data.shape != (nz, ny, nx):
                    raise DataError(f"{path}: header says {nz}×{ny}×{nx} voxels, data has {data.shape}")
                axes = (int(header.mapc), int(header.mapr), int(header.maps))
                if sorted(axes) != [1, 2, 3]:
                    raise DataError(f"{path}: axis order (mapc, mapr, maps) = {axes} is not a permutation of 1, 2, 3")
                vs = m.voxel_size
                voxel = (float(vs.x), float(vs.y), float(vs.z))
                origin = (float(header.origin.x), float(header.origin.y), float(header.origin.z))
                start = (int(header.nxstart), int(header.nystart), int(header.nzstart))
                arr = np.array(data, dtype=np.float32)
    except DataError:
        raise
    except (ValueError, OSError, EOFError) as err:
        raise DataError(f"{path}: not a valid MRC/CCP4 map ({str(err).splitlines()[0]})") from None
    # data axes are (section, row, column) = axes (maps, mapr, mapc); bring them to (z, y, x)
    file_axes = (axes[2], axes[1], axes[0])  # axis label (1=x, 2=y, 3=z) of each data dimension
    arr = np.ascontiguousarray(np.transpose(arr, [file_axes.index(a) for a in (3, 2, 1)]))
    if not np.isfinite(arr).all():
        raise DataError(f"{path}: {int((~np.isfinite(arr)).sum())} NaN/inf voxels")
    if not all(v > 0 for v in voxel):
        raise DataError(f"{path}: voxel size {voxel} Å must be positive (cell dimensions missing from the header?)")
    if origin == (0.0, 0.0, 0.0) and any(start):  # CCP4 convention: the origin is given by the start indices
        col_row_sec = (start[0], start[1], start[2])
        by_axis = {axes[i]: col_row_sec[i] for i in range(3)}
        origin = (by_axis[1] * voxel[0], by_axis[2] * voxel[1], by_axis[3] * voxel[2])
    return DensityMap(arr, voxel, origin)
