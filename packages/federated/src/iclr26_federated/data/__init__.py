"""Data of the federated package: image sets, open-set federated splits, augmentations."""

from iclr26_federated.data.augment import normalize, strong_view, weak_view
from iclr26_federated.data.images import DATASETS, OFFLINE_DATASETS, load_cifar100, load_images
from iclr26_federated.data.partition import OpenSetSplit, dirichlet_partition, make_open_set_split

__all__ = [
    "DATASETS",
    "OFFLINE_DATASETS",
    "OpenSetSplit",
    "dirichlet_partition",
    "load_cifar100",
    "load_images",
    "make_open_set_split",
    "normalize",
    "strong_view",
    "weak_view",
]
