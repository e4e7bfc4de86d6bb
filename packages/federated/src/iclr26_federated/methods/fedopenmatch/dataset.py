"""Data of a FedOpenMatch job (Flower baselines' ``dataset.py``): the open-set split, cached per process.

The server and every ClientApp rebuild the same split from the job's parameters (data set, K, U,
labels per class, M, α, seed), so only model weights travel in messages. Inside one process (the
in-process Grid, or one Ray actor serving several virtual clients) a split is built once.

A user's own data reaches the ClientApps through Flower's own config, as a *file path*, never as a Python
object: a .npz data file (``fedopenmatch.save_data``: ``num_known``, ``server_x``/``server_y``,
``test_x``/``test_y``, the clients' ``unlabelled`` images and, optionally, ``client_sizes``) named by

* the run config's ``data-file`` (the config field ``data_file``, which travels to the clients in the train
  message): the server reads its labelled and test sets, each ClientApp its partition ``partition-id`` of
  ``unlabelled``, cut by Flower Datasets (``SizePartitioner(client_sizes)``: client i's images are the
  i-th block; without ``client_sizes``, ``IidPartitioner(num_clients)``);
* a SuperNode's node config ``data-file`` (``--node-config "partition-id=0 num-partitions=2
  data-file='/data/node0.npz'"``): that node's own images (``fedopenmatch.save_node_data``; all of its
  ``unlabelled``, or partition ``partition-id`` when the file has ``client_sizes``); it replaces the run
  config's file on that node.

Every process reads the file itself (cached by path and modification time), so the same paths work in the
in-process Grid, on Ray's virtual clients and on separate SuperNodes.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from iclr26_federated.data.images import load_images
from iclr26_federated.data.partition import OpenSetSplit, make_open_set_split
from iclr26_shared.data import ImageDataset
from iclr26_shared.errors import ConfigError, DataError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from flwr_datasets.partitioner import Partitioner

    from iclr26_federated.methods.fedopenmatch.config import JobParams

__all__ = [
    "ClientData",
    "SERVER_KEYS",
    "client_data",
    "client_partition",
    "load_split",
    "read_data_file",
]

#: The arrays a data file needs for the server (``unlabelled`` and ``client_sizes`` are the clients').
SERVER_KEYS = ("num_known", "server_x", "server_y", "test_x", "test_y")


@dataclass(frozen=True)
class ClientData:
    """One client's unlabelled images and, for the built-in data sets only, their hidden true labels
    (pseudo-label precision; never trained on)."""

    images: np.ndarray
    labels: np.ndarray | None

    @property
    def in_channels(self) -> int:
        """1 for grey images, 3 for RGB."""
        return 1 if self.images.ndim == 3 else 3


@lru_cache(maxsize=4)
def _read_npz(path: str, mtime_ns: int) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def read_data_file(path: str, what: str = "data_file") -> dict[str, np.ndarray]:
    """The arrays of the data file ``path`` (cached per process by path and modification time); a
    :class:`DataError` naming ``what`` (the config field or node-config key) when it is absent or not a
    .npz file."""
    p = Path(path).expanduser()
    try:
        mtime = p.stat().st_mtime_ns
    except OSError:
        raise DataError(f"{what} = {path!r}: no such file (write one with fedopenmatch.save_data)") from None
    try:
        return _read_npz(str(p.resolve()), mtime)
    except (OSError, ValueError, zipfile.BadZipFile) as err:
        raise DataError(f"{what} = {path!r} is not a readable .npz data file: {err}") from None


def _file_images(data: Mapping[str, np.ndarray], key: str, path: str, what: str) -> np.ndarray:
    arr = data[key]
    if arr.dtype != np.uint8 or arr.ndim not in (3, 4) or (arr.ndim == 4 and arr.shape[-1] != 3):
        raise DataError(
            f"{what} = {path!r}: {key} must be uint8 images [N, H, W] or [N, H, W, 3], "
            f"got {arr.dtype} {list(arr.shape)}"
        )
    return arr


def _user_split(params: JobParams) -> OpenSetSplit:
    """The server's part of ``params.data_file``: labelled and test sets (no client images)."""
    path = params.data_file
    data = read_data_file(path)
    missing = [k for k in SERVER_KEYS if k not in data]
    if missing:
        raise DataError(f"data_file = {path!r} has no {missing} (write it with fedopenmatch.save_data)")
    k = int(data["num_known"])
    if k != params.known_classes:
        raise ConfigError("known_classes", params.known_classes, f"{k}, the num_known of data_file {path!r}")
    sizes = data.get("client_sizes")
    if sizes is not None and len(sizes) != params.num_clients:
        raise ConfigError("num_clients", params.num_clients, f"{len(sizes)}, the clients of data_file {path!r}")
    server_y, test_y = data["server_y"].astype(np.int64), data["test_y"].astype(np.int64)
    if server_y.size and (server_y.min() < 0 or server_y.max() >= k) or test_y.size and test_y.max() > k:
        raise DataError(f"data_file = {path!r}: server_y must be in [0, {k}) and test_y in [0, {k}]")
    return OpenSetSplit(
        name="user",
        num_known=k,
        known_classes=tuple(range(k)),
        unknown_classes=(),
        server_x=_file_images(data, "server_x", path, "data_file"),
        server_y=server_y,
        client_x=(),
        client_y=(),
        client_orig=(),
        test_x=_file_images(data, "test_x", path, "data_file"),
        test_y=test_y,
    )


@lru_cache(maxsize=4)
def _partitioner(path: str, mtime_ns: int, num_partitions: int, what: str) -> Partitioner | None:
    """Flower Datasets' partitioner of the file's ``unlabelled`` images: ``SizePartitioner(client_sizes)``,
    else ``IidPartitioner(num_partitions)``; None for a node's own file without ``client_sizes``."""
    from datasets import Dataset
    from flwr_datasets.partitioner import IidPartitioner, SizePartitioner

    data = _read_npz(path, mtime_ns)
    sizes = data.get("client_sizes")
    if sizes is None and num_partitions == 0:
        return None
    pool = _file_images(data, "unlabelled", path, what)
    if sizes is not None:
        sizes = [int(n) for n in sizes]
        if sum(sizes) != len(pool) or min(sizes, default=0) < 1:
            raise DataError(f"{what} = {path!r}: client_sizes {sizes} must be >= 1 and sum to {len(pool)} images")
        partitioner: Partitioner = SizePartitioner(sizes)
    else:
        partitioner = IidPartitioner(num_partitions=num_partitions)
    partitioner.dataset = Dataset.from_dict({"image": pool})
    return partitioner


def _file_client(path: str, partition_id: int, num_partitions: int, what: str) -> np.ndarray:
    """Partition ``partition_id`` of the file's ``unlabelled`` images (``num_partitions = 0``: a node's own
    file, all of them unless it has ``client_sizes``)."""
    data = read_data_file(path, what)
    if "unlabelled" not in data:
        hint = "" if num_partitions == 0 else "; or give each SuperNode its own --node-config data-file=..."
        raise DataError(f"{what} = {path!r} has no 'unlabelled' client images{hint}")
    p = Path(path).expanduser().resolve()
    partitioner = _partitioner(str(p), p.stat().st_mtime_ns, num_partitions, what)
    if partitioner is None:
        return _file_images(data, "unlabelled", path, what)
    if not 0 <= partition_id < partitioner.num_partitions:
        n = partitioner.num_partitions
        raise DataError(f"{what} = {path!r} has {n} partitions, none with partition-id {partition_id}")
    images = partitioner.load_partition(partition_id).with_format("numpy")["image"]
    return np.asarray(images, dtype=np.uint8)


@lru_cache(maxsize=4)
def _split(
    dataset: str,
    known: int,
    unknown: int,
    labels_per_class: int,
    num_clients: int,
    alpha: float,
    min_partition_size: int,
    max_client_pool: int,
    seed: int,
) -> OpenSetSplit:
    return make_open_set_split(
        _images(dataset),
        num_known=known,
        num_unknown=unknown,
        labels_per_class=labels_per_class,
        num_clients=num_clients,
        alpha=alpha,
        seed=seed,
        min_partition_size=min_partition_size,
        max_client_pool=max_client_pool,
    )


@lru_cache(maxsize=2)
def _images(dataset: str) -> ImageDataset:
    return load_images(dataset)


def load_split(params: JobParams) -> OpenSetSplit:
    """The job's :class:`OpenSetSplit`: the built-in data set's split (the split seed is the job seed), or,
    with ``params.data_file``, the server's part of the user's data file (labelled and test sets; its client
    images are read by the ClientApps, :func:`client_data`)."""
    if params.data_file:
        return _user_split(params)
    return _split(
        params.dataset,
        params.known_classes,
        params.unknown_classes,
        params.labels_per_class,
        params.num_clients,
        params.dirichlet_alpha,
        params.min_partition_size,
        params.max_client_pool,
        params.seed,
    )


def client_data(params: JobParams, partition_id: int, node_config: Mapping[str, Any] | None = None) -> ClientData:
    """The unlabelled images of client ``partition_id`` (``uint8 [N_m, H, W(, 3)]``): from the SuperNode's
    own ``data-file`` (node config), else partition ``partition_id`` of the job's ``data_file``, else of
    the built-in split."""
    node_file = (node_config or {}).get("data-file")
    if node_file:
        return ClientData(_file_client(str(node_file), partition_id, 0, "SuperNode node-config data-file"), None)
    if params.data_file:
        return ClientData(_file_client(params.data_file, partition_id, params.num_clients, "data_file"), None)
    split = load_split(params)
    if not 0 <= partition_id < split.num_clients:
        raise ValueError(f"partition id {partition_id} outside [0, {split.num_clients})")
    return ClientData(split.client_x[partition_id], split.client_y[partition_id] if split.client_y else None)


def client_partition(params: JobParams, partition_id: int) -> np.ndarray:
    """The unlabelled images of client ``partition_id`` (:func:`client_data` without a node config)."""
    return client_data(params, partition_id).images
