"""The shared image sets (:mod:`iclr26_shared.data`) as float tensors ``[N, C, H, W]`` ready for training.

One helper for every package: ``scale="symmetric"`` maps uint8 to [−1, 1] (``x / 127.5 − 1``, for
generative models); ``scale="standardize"`` maps to [0, 1] and then standardises each channel with the
training split's mean and standard deviation (for classifiers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

from iclr26_shared.data import load_image_dataset
from iclr26_shared.errors import DataError

__all__ = ["ImageTensors", "load_image_tensors"]


@dataclass(frozen=True)
class ImageTensors:
    """Train and test tensors of one image set.

    Attributes:
        name: Data set name.
        x_train: ``[N, C, H, W]`` float32.
        y_train: ``[N]`` int64 in ``[0, K)``.
        x_test: ``[N', C, H, W]`` float32 (scaled with the training statistics).
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
    def channels(self) -> int:
        """``C``."""
        return int(self.x_train.shape[1])

    @property
    def size(self) -> int:
        """``W`` (the side of square images)."""
        return int(self.x_train.shape[-1])

    @property
    def image_shape(self) -> tuple[int, int, int]:
        """``(C, H, W)``."""
        c, h, w = self.x_train.shape[1:]
        return int(c), int(h), int(w)


def _nchw(x: np.ndarray) -> np.ndarray:
    return x[:, None] if x.ndim == 3 else x.transpose(0, 3, 1, 2)


def load_image_tensors(
    name: str,
    *,
    n_train: int = 0,
    n_test: int = 0,
    seed: int = 0,
    scale: Literal["symmetric", "standardize"] = "standardize",
    require_all_classes: bool = True,
) -> ImageTensors:
    """Load the image set ``name`` as tensors; ``n_train``/``n_test`` > 0 keep a class-stratified subset
    (0 = all). Raises :class:`DataError` when the set is unavailable or a class is missing from training."""
    ds = load_image_dataset(name)
    if n_train or n_test:
        ds = ds.subset(n_train or None, n_test or None, seed=seed)
    if scale == "symmetric":
        xtr = torch.from_numpy(np.ascontiguousarray(_nchw(ds.x_train.astype(np.float32) / 127.5 - 1.0)))
        xte = torch.from_numpy(np.ascontiguousarray(_nchw(ds.x_test.astype(np.float32) / 127.5 - 1.0)))
    elif scale == "standardize":
        xtr = torch.from_numpy(np.ascontiguousarray(_nchw(ds.x_train.astype(np.float32) / 255.0)))
        xte = torch.from_numpy(np.ascontiguousarray(_nchw(ds.x_test.astype(np.float32) / 255.0)))
        mean = xtr.mean(dim=(0, 2, 3), keepdim=True)
        std = xtr.std(dim=(0, 2, 3), keepdim=True).clamp_min(1e-6)
        xtr, xte = (xtr - mean) / std, (xte - mean) / std
    else:
        raise ValueError(f"scale must be 'symmetric' or 'standardize', got {scale!r}")
    ytr = torch.from_numpy(ds.y_train.astype(np.int64))
    yte = torch.from_numpy(ds.y_test.astype(np.int64))
    missing = sorted(set(range(ds.num_classes)) - set(ytr.tolist()))
    if require_all_classes and missing:
        raise DataError(f"{name}: the training subset has no images of class(es) {missing}; use a larger n_train")
    return ImageTensors(name, xtr, ytr, xte, yte, ds.num_classes)
