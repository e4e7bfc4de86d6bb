"""The map-input preamble shared by :func:`~iclr26_science.cryoem.pretrain.pretrain` and
:func:`~iclr26_science.cryoem.finetune.fine_tune` (private): a list of maps, each a DensityMap or an MRC path
read with ``mrcfile``, its voxel size checked (0.2-20 Å, isotropic); every failure is one DataError line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from iclr26_science.cryoem.mrc import DensityMap, read_map
from iclr26_science.cryoem.restore import checked_apix
from iclr26_shared.errors import DataError


def map_list(maps: Any, call: str, name: str) -> Sequence[Any]:
    """``maps`` as a non-empty list of maps; a single map (path, DensityMap, array) or an empty list is a
    one-line DataError naming ``call`` and ``name``."""
    if isinstance(maps, str | Path | DensityMap | np.ndarray | torch.Tensor) or not isinstance(maps, Sequence):
        raise DataError(f"{call}: {name} must be a list of maps (DensityMaps, MRC paths or arrays), one per map")
    if not maps:
        raise DataError(f"{call}: no maps given ({name} is empty)")
    return maps


def read_checked(m: Any, where: str) -> DensityMap | None:
    """An MRC path (read) or a DensityMap, with its voxel size checked (:func:`checked_apix`); None for
    anything else (a bare array or tensor, which the caller handles or refuses)."""
    if isinstance(m, str | Path):
        m = read_map(m)
    if isinstance(m, DensityMap):
        checked_apix(m, where)
        return m
    return None
