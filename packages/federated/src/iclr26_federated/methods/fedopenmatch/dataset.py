"""Data of a FedOpenMatch job (Flower baselines' ``dataset.py``): the open-set split, cached per process.

The server and every ClientApp rebuild the same split from the job's parameters (data set, K, U,
labels per class, M, α, seed), so only model weights travel in messages. Inside one process (the
in-process Grid, or one Ray actor serving several virtual clients) a split is built once.

A user's own data and network (:func:`~.api.fit`) are registered here under a key that the job carries
(``JobParams.source``); the ClientApp and the server then read them instead of the built-in ones. The
registry lives in this process: ``fit`` runs its clients through the in-process Grid.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from iclr26_federated.data.images import load_images
from iclr26_federated.data.partition import OpenSetSplit, make_open_set_split
from iclr26_shared.data import ImageDataset

if TYPE_CHECKING:
    from iclr26_federated.methods.fedopenmatch.config import JobParams

__all__ = ["Source", "client_partition", "load_split", "register_source", "source", "unregister_source"]


@dataclass(frozen=True)
class Source:
    """A user's data (an :class:`OpenSetSplit`) and initial network (an ``OpenSetNet``)."""

    split: OpenSetSplit
    model: Any


_SOURCES: dict[str, Source] = {}


def register_source(split: OpenSetSplit, model: Any) -> str:
    """Register a user's split and network; returns the key to put in ``JobParams.source``."""
    key = uuid.uuid4().hex
    _SOURCES[key] = Source(split, model)
    return key


def unregister_source(key: str) -> None:
    """Forget a registered source (no error if absent)."""
    _SOURCES.pop(key, None)


def source(key: str) -> Source:
    """The registered source ``key``; a ``ValueError`` saying where it lives when this process has none."""
    try:
        return _SOURCES[key]
    except KeyError:
        raise ValueError(
            f"data/model source {key!r} is not registered in this process: a user's own data and model "
            "(fedopenmatch.fit) run their clients in the process that called fit (in-process Grid)"
        ) from None


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
    """The job's :class:`OpenSetSplit`: the registered user split (``params.source``), or the built-in
    data set's split (the split seed is the job seed)."""
    if params.source:
        return source(params.source).split
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


def client_partition(params: JobParams, partition_id: int) -> np.ndarray:
    """The unlabelled images of client ``partition_id`` (``uint8 [N_m, H, W(, 3)]``)."""
    split = load_split(params)
    if not 0 <= partition_id < split.num_clients:
        raise ValueError(f"partition id {partition_id} outside [0, {split.num_clients})")
    return split.client_x[partition_id]
