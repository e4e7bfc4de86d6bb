"""The shared offline image sets (``iclr26_shared.data``) as ``[N, C, S, S]`` tensors in [−1, 1]."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from iclr26_shared.data import load_image_dataset
from iclr26_shared.errors import DataError

__all__ = ["ImageTensors", "load_image_tensors"]


@dataclass(frozen=True)
class ImageTensors:
    """Images ``x`` ``[N, C, S, S]`` (float32, [−1, 1]) with labels ``y`` ``[N]`` (int64), train and test."""

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    num_classes: int

    @property
    def channels(self) -> int:
        """``C``."""
        return self.x_train.shape[1]

    @property
    def size(self) -> int:
        """``S``."""
        return self.x_train.shape[-1]


def _to_tensor(x: np.ndarray) -> torch.Tensor:
    t = torch.from_numpy(x.astype(np.float32) / 127.5 - 1.0)
    return t[:, None] if t.ndim == 3 else t.permute(0, 3, 1, 2).contiguous()


def load_image_tensors(name: str, max_train: int | None = None, seed: int = 0) -> ImageTensors:
    """Load ``name`` (``digits``, ``mnist-5k`` offline; ``fashion-mnist`` opt-in) as tensors.

    ``max_train`` keeps a class-stratified subset of the training split (test split capped likewise).
    """
    ds = load_image_dataset(name)
    if ds.x_train.ndim != 3 or ds.x_train.shape[1] != ds.x_train.shape[2]:
        raise DataError(f"{name}: expected square grey images [N, S, S], got {ds.x_train.shape}")
    if max_train is not None:
        ds = ds.subset(max_train, max_train, seed=seed)
    return ImageTensors(
        name,
        _to_tensor(ds.x_train),
        torch.from_numpy(ds.y_train.astype(np.int64)),
        _to_tensor(ds.x_test),
        torch.from_numpy(ds.y_test.astype(np.int64)),
        ds.num_classes,
    )
