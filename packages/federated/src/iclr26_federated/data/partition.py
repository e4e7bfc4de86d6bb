"""Open-set federated splits (FedOpenMatch, OpenReview 5UrPAW3uI1, experimental setup: K known / U unknown
classes, labels per known class at the server, Dir(α) clients).

From a labelled image set with C classes: the first K classes are *known*, the next U are *unknown*
(the rest are unused). The server keeps ``labels_per_class`` labelled images of every known class
(the label-at-server setting). All other training images of known and unknown classes form the
clients' unlabelled pool, split over M clients non-IID with Flower Datasets'
``DirichletPartitioner(partition_by="label", alpha)``. The test split keeps known and unknown classes;
unknown test images get the label K.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from iclr26_shared.data import ImageDataset
from iclr26_shared.errors import ConfigError

__all__ = ["OpenSetSplit", "dirichlet_partition", "make_open_set_split"]


def dirichlet_partition(
    labels: np.ndarray, num_partitions: int, alpha: float, *, seed: int, min_partition_size: int = 10
) -> list[np.ndarray]:
    """Split sample indices ``0..N-1`` over ``num_partitions`` clients with Flower Datasets'
    ``DirichletPartitioner`` (per-class client shares ~ Dir(alpha); re-drawn until every client has
    ``min_partition_size`` samples). Returns one sorted index array per client: disjoint and complete.
    """
    from datasets import Dataset
    from flwr_datasets.partitioner import DirichletPartitioner

    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be 1-D, got shape {labels.shape}")
    if num_partitions * min_partition_size > len(labels):
        raise ConfigError(
            "num_clients",
            num_partitions,
            f"at most {len(labels) // max(min_partition_size, 1)} clients for {len(labels)} unlabelled samples",
        )
    table = Dataset.from_dict({"label": labels.astype(np.int64), "index": np.arange(len(labels))})
    partitioner = DirichletPartitioner(
        num_partitions=num_partitions,
        partition_by="label",
        alpha=alpha,
        min_partition_size=min_partition_size,
        self_balancing=False,
        seed=seed,
    )
    partitioner.dataset = table
    try:
        with warnings.catch_warnings():
            # the partitioner warns each time it re-draws a split below min_partition_size; re-drawing is
            # the documented behaviour we rely on, and a split that never succeeds raises below
            warnings.filterwarnings("ignore", message="The specified min_partition_size", category=UserWarning)
            parts = [
                np.sort(np.asarray(partitioner.load_partition(i)["index"], dtype=np.int64))
                for i in range(num_partitions)
            ]
    except ValueError as err:  # the partitioner gives up after repeated draws below min_partition_size
        raise ConfigError(
            "dirichlet_alpha", alpha, f"a split every client can get {min_partition_size} samples from ({err})"
        ) from None
    return parts


@dataclass(frozen=True)
class OpenSetSplit:
    """A label-at-server open-set federated split.

    Attributes:
        name: Data set name.
        num_known: K.
        known_classes: Original class ids of the K known classes (mapped to ``0..K-1``).
        unknown_classes: Original class ids of the U unknown classes (mapped to K).
        server_x: Labelled server images ``uint8 [N_s, H, W(, 3)]``.
        server_y: Their labels ``int64 [N_s]`` in ``[0, K)``.
        client_x: One unlabelled image array per client.
        client_y: The hidden true labels per client in ``[0, K]`` (for analysis only; never trained on).
        client_orig: The hidden original class ids per client.
        test_x: Test images.
        test_y: Test labels in ``[0, K]`` (K = unknown).
    """

    name: str
    num_known: int
    known_classes: tuple[int, ...]
    unknown_classes: tuple[int, ...]
    server_x: np.ndarray
    server_y: np.ndarray
    client_x: tuple[np.ndarray, ...]
    client_y: tuple[np.ndarray, ...]
    client_orig: tuple[np.ndarray, ...]
    test_x: np.ndarray
    test_y: np.ndarray

    @property
    def num_clients(self) -> int:
        """M."""
        return len(self.client_x)

    @property
    def in_channels(self) -> int:
        """1 for grey images, 3 for RGB."""
        return 1 if self.server_x.ndim == 3 else 3


def make_open_set_split(
    data: ImageDataset,
    *,
    num_known: int,
    num_unknown: int,
    labels_per_class: int,
    num_clients: int,
    alpha: float,
    seed: int,
    min_partition_size: int = 10,
    max_client_pool: int = 0,
) -> OpenSetSplit:
    """Build an :class:`OpenSetSplit` (seeded: the same arguments give the same split).

    Args:
        data: The image set.
        num_known: K (classes ``0..K-1`` are known).
        num_unknown: U (classes ``K..K+U-1`` are unknown).
        labels_per_class: Labelled server images per known class.
        num_clients: M.
        alpha: Dirichlet concentration (smaller = more non-IID).
        seed: Seed of the server-label draw and of the partitioner.
        min_partition_size: Minimum unlabelled samples per client.
        max_client_pool: If > 0, a class-stratified random subset of this many images forms the pool.
    """
    c = data.num_classes
    if num_known < 2:
        raise ConfigError("known_classes", num_known, "at least 2")
    if num_unknown < 1 or num_known + num_unknown > c:
        raise ConfigError(
            "unknown_classes", num_unknown, f"between 1 and {c - num_known} ({data.name} has {c} classes)"
        )
    known = tuple(range(num_known))
    unknown = tuple(range(num_known, num_known + num_unknown))
    rng = np.random.default_rng(seed)
    server_idx = []
    for k in known:
        idx = np.flatnonzero(data.y_train == k)
        if len(idx) <= labels_per_class:
            raise ConfigError(
                "labels_per_class", labels_per_class, f"fewer than the {len(idx)} training images of class {k}"
            )
        server_idx.append(rng.choice(idx, labels_per_class, replace=False))
    server = np.sort(np.concatenate(server_idx))
    used = data.y_train < num_known + num_unknown
    used[server] = False
    pool = np.flatnonzero(used)
    if max_client_pool and max_client_pool < len(pool):
        order = rng.permutation(pool)
        by_class = [order[data.y_train[order] == k] for k in known + unknown]
        rr = [p[i] for i in range(max(map(len, by_class))) for p in by_class if i < len(p)]
        pool = np.sort(np.asarray(rr[:max_client_pool], dtype=np.int64))
    parts = dirichlet_partition(
        data.y_train[pool], num_clients, alpha, seed=seed, min_partition_size=min_partition_size
    )

    def remap(y: np.ndarray) -> np.ndarray:
        return np.where(y < num_known, y, num_known).astype(np.int64)

    test_sel = data.y_test < num_known + num_unknown
    client_idx = [pool[p] for p in parts]
    return OpenSetSplit(
        name=data.name,
        num_known=num_known,
        known_classes=known,
        unknown_classes=unknown,
        server_x=data.x_train[server],
        server_y=data.y_train[server].astype(np.int64),
        client_x=tuple(data.x_train[i] for i in client_idx),
        client_y=tuple(remap(data.y_train[i]) for i in client_idx),
        client_orig=tuple(data.y_train[i].astype(np.int64) for i in client_idx),
        test_x=data.x_test[test_sel],
        test_y=remap(data.y_test[test_sel]),
    )
