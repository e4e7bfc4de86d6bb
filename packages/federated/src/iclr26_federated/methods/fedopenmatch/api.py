"""FedOpenMatch on your own network and your own partitioned data: :func:`fit`.

``fit`` runs the *same* ClientApp (``client_app.app``), :class:`~.strategy.FedOpenMatchStrategy` and
server loop (:func:`~.train.federate`) as ``iclr26-federated fedopenmatch`` and ``flwr run``, through the
in-process Grid (:class:`~.utils.InlineGrid`), on

* your network: a feature extractor (any ``nn.Module`` mapping images ``[B, C, H, W]`` in ``[-1, 1]`` to
  features ``[B, D]``), which ``fit`` wraps into an :class:`~iclr26_federated.nn.models.OpenSetNet` with
  the inlier head h_c (K logits) and the OVA head h_d (2K logits); or an ``OpenSetNet`` of your own;
* your data: the server's labelled images (labels ``0..K-1``), one unlabelled image set per client
  (a list of arrays / tensors / Hugging Face datasets, or a Flower Datasets partitioner with its data set
  assigned: one partition per client) and a test set whose labels are ``0..K-1`` for known classes and
  ``K`` for anything unknown. Images are ``uint8 [N, H, W]`` (grey) or ``[N, H, W, 3]`` (RGB).

Every knob is a :class:`~.config.FedOpenMatchConfig` field (``known_classes`` and ``num_clients`` are
taken from the data); ``variant`` picks an ablation or a baseline (``no-la``, ``fedavg-openmatch``, ...).

``fit`` hands the data and the network to the ClientApp the way ``flwr run`` does, as files named in the
job's config: :func:`save_data` writes the data file (``data_file``) and the network is saved whole
(``model_file``) in a temporary folder, removed afterwards. :func:`save_data` is also how you point
``flwr run`` (``--run-config "data-file='...'"``) or the CLI (``--data-file``) at your data, and
:func:`save_node_data` writes one SuperNode's own images (``--node-config "data-file='...'"``).
"""

from __future__ import annotations

import dataclasses
import logging
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from iclr26_federated.data.augment import normalize
from iclr26_federated.methods.fedopenmatch.config import FedOpenMatchConfig, job_params
from iclr26_federated.nn.models import OpenSetNet
from iclr26_shared.seeding import global_rng

__all__ = ["FitResult", "fit", "save_data", "save_node_data", "to_images"]


@dataclass(frozen=True)
class FitResult:
    """What :func:`fit` returns.

    Attributes:
        model: The final global :class:`OpenSetNet` (eval mode, on the requested device); predict with
            ``iclr26_federated.nn.metrics.openmatch_predict(*model(x))`` (K = "unknown").
        history: One row per round (0 = after the server's warm-up): the test metrics ``open_bacc``,
            ``closed_acc``, ``unknown_recall``, ``known_recall`` and the clients' pseudo-label pass rate.
        final: The last row's test metrics.
        failures: Client failures (the round went on without them).
    """

    model: OpenSetNet
    history: list[dict[str, Any]]
    final: dict[str, float]
    failures: list[dict[str, Any]]


def to_images(data: Any, image_column: str = "image") -> np.ndarray:
    """``uint8 [N, H, W(, 3)]`` from an array, a tensor, a list of PIL images / arrays, or a Hugging Face
    dataset (its ``image_column``). Accepted values: integers in [0, 255] (uint8 or any integer type), or
    **floats in [-1, 1]**, the range the extractor receives (``normalize``: ``x / 127.5 − 1``); floats are
    stored as ``round((x + 1) · 127.5)``, i.e. quantised to the uint8 grid (images in [0, 1]: pass
    ``2 · x − 1``). Anything else is a ``ValueError`` in one line naming the range it found."""
    if hasattr(data, "column_names"):  # a datasets.Dataset (e.g. a flwr-datasets partition)
        if image_column not in data.column_names:
            raise ValueError(f"the data set has no {image_column!r} column (columns: {data.column_names})")
        column = data.with_format("numpy")[image_column]
        data = column if isinstance(column, np.ndarray) and column.dtype != object else [np.asarray(x) for x in column]
    if isinstance(data, torch.Tensor):
        data = data.detach().cpu().numpy()
    arr = np.stack([np.asarray(x) for x in data]) if isinstance(data, list | tuple) else np.asarray(data)
    shape_ok = arr.ndim in (3, 4) and (arr.ndim == 3 or arr.shape[-1] == 3)
    lo, hi = (float(arr.min()), float(arr.max())) if arr.size and arr.dtype != object else (0.0, 0.0)
    if shape_ok and np.issubdtype(arr.dtype, np.floating):
        if not (np.isfinite(lo) and np.isfinite(hi) and lo >= -1.0 and hi <= 1.0):
            raise ValueError(
                f"float images must lie in [-1, 1] (the extractor's input range; uint8 in [0, 255] also works), "
                f"got values in [{lo:g}, {hi:g}]"
            )
        return np.rint((arr.astype(np.float64) + 1.0) * 127.5).astype(np.uint8)
    if not shape_ok or not np.issubdtype(arr.dtype, np.integer) or lo < 0 or hi > 255:
        raise ValueError(
            "images must be uint8/integers in [0, 255] or floats in [-1, 1], shaped [N, H, W] or [N, H, W, 3]; "
            f"got {arr.dtype} {list(arr.shape)}" + (f" with values in [{lo:g}, {hi:g}]" if arr.size else "")
        )
    return arr.astype(np.uint8, copy=False)


def _clients(clients: Any, image_column: str) -> tuple[np.ndarray, ...]:
    if hasattr(clients, "load_partition") and hasattr(clients, "num_partitions"):  # a flwr-datasets Partitioner
        parts = [clients.load_partition(i) for i in range(clients.num_partitions)]
    elif isinstance(clients, Sequence):
        parts = list(clients)
    else:
        raise ValueError("clients must be a list of per-client image sets or a flwr-datasets Partitioner")
    if len(parts) < 2:
        raise ValueError(f"FedOpenMatch needs at least 2 clients, got {len(parts)}")
    return tuple(to_images(p, image_column) for p in parts)


def _labels(y: Any, low: int, high: int, what: str) -> np.ndarray:
    arr = np.asarray(y.numpy() if isinstance(y, torch.Tensor) else y).astype(np.int64)
    if arr.ndim != 1 or (arr.size and (arr.min() < low or arr.max() > high)):
        raise ValueError(f"{what} labels must be integers in [{low}, {high}], got range [{arr.min()}, {arr.max()}]")
    return arr


def fit(
    model: nn.Module,
    server_data: tuple[Any, Any],
    clients: Any,
    test_data: tuple[Any, Any],
    *,
    num_known: int,
    config: FedOpenMatchConfig | None = None,
    variant: str = "fedopenmatch",
    seed: int = 0,
    device: str | torch.device = "cpu",
    image_column: str = "image",
    verbose: bool = False,
) -> FitResult:
    """Train ``model`` with FedOpenMatch on the server's labelled set and the clients' unlabelled sets.

    Args:
        model: A feature extractor (wrapped into an ``OpenSetNet`` with K-way inlier and OVA heads) or an
            ``OpenSetNet``. It is copied: the one you pass is left untouched.
        server_data: ``(images, labels)``: the labelled set D_s, labels in ``[0, K)``.
        clients: One unlabelled image set per client (list), or a flwr-datasets ``Partitioner``.
        test_data: ``(images, labels)``, labels in ``[0, K]`` (K = unknown).
        num_known: K.
        config: Every other knob (rounds, steps, thresholds, LA, LCR, ...); default
            ``FedOpenMatchConfig()`` (10 rounds).
        variant: ``fedopenmatch`` or an ablation/baseline of :data:`~.config.VARIANTS`.
        seed: Seed of the clients' augmentations and batch order and of the server's batches.
        device: Where the server and the clients train.
        image_column: The image column of Hugging Face data sets.
        verbose: Show Flower's per-round log lines.

    The caller's global random states (torch's CPU and initialised CUDA generators, numpy's, Python's)
    and the ``flwr`` logger's level are as they were when ``fit`` returns or raises.
    """
    flwr_log = logging.getLogger("flwr")
    level = flwr_log.level  # before flwr is imported: importing it sets its logger to DEBUG
    try:
        with global_rng():
            return _fit(
                model, server_data, clients, test_data, num_known, config, variant, seed, device, image_column, verbose
            )
    finally:
        flwr_log.setLevel(level)


def _fit(
    model: nn.Module,
    server_data: tuple[Any, Any],
    clients: Any,
    test_data: tuple[Any, Any],
    num_known: int,
    config: FedOpenMatchConfig | None,
    variant: str,
    seed: int,
    device: str | torch.device,
    image_column: str,
    verbose: bool,
) -> FitResult:
    dev = torch.device(device)
    with tempfile.TemporaryDirectory(prefix="fedopenmatch-fit-") as tmp:
        data_file = save_data(
            Path(tmp) / "data.npz", server_data, clients, test_data, num_known=num_known, image_column=image_column
        )
        with np.load(data_file) as arrays:
            server_x, num_clients = arrays["server_x"], len(arrays["client_sizes"])
        net = model if isinstance(model, OpenSetNet) else _wrap(model, num_known, server_x)
        model_file = Path(tmp) / "model.pt"
        torch.save(_copy(net), model_file)
        cfg = dataclasses.replace(
            config or FedOpenMatchConfig(),
            known_classes=num_known,
            num_clients=num_clients,
            engine="inline",
            data_file=str(data_file),
        )
        from iclr26_federated.methods.fedopenmatch.client_app import app as client_app
        from iclr26_federated.methods.fedopenmatch.train import federate
        from iclr26_federated.methods.fedopenmatch.utils import InlineGrid

        logging.getLogger("flwr").setLevel(logging.INFO if verbose else logging.ERROR)  # banners, per-round lines
        params = job_params(cfg, variant, seed, device=str(dev), model_file=str(model_file))
        record, trained = federate(InlineGrid(client_app, cfg.num_clients), params, dev)
    return FitResult(trained.eval(), record["history"], record["final"], record["failures"])


def save_data(
    path: str | Path,
    server_data: tuple[Any, Any],
    clients: Any,
    test_data: tuple[Any, Any],
    *,
    num_known: int,
    image_column: str = "image",
) -> Path:
    """Write your data as the data file that the app's ``data_file`` config field (``data-file`` in
    ``flwr run --run-config``, ``--data-file`` on the CLI) names; returns its path.

    The file (.npz, no pickles) holds ``num_known``, ``server_x``/``server_y``, ``test_x``/``test_y``, the
    clients' images one after another in ``unlabelled`` and ``client_sizes`` (client i's images are the
    i-th block: Flower Datasets' ``SizePartitioner`` gives each ClientApp its own by ``partition-id``).
    Arguments as in :func:`fit`; ``clients`` is a list of per-client image sets or a flwr-datasets
    ``Partitioner`` with its data set assigned, or None for a server-only file (deployment: every SuperNode
    brings its own images, :func:`save_node_data`). Bad data is a ``ValueError`` in one line.
    """
    server_x = to_images(server_data[0], image_column)
    server_y = _labels(server_data[1], 0, num_known - 1, "server")
    test_x = to_images(test_data[0], image_column)
    test_y = _labels(test_data[1], 0, num_known, "test")
    client_x = () if clients is None else _clients(clients, image_column)
    if len(server_x) != len(server_y) or len(test_x) != len(test_y):
        raise ValueError("server_data and test_data need as many labels as images")
    if num_known < 2:
        raise ValueError(f"num_known must be at least 2 (the OVA loss needs a negative class), got {num_known}")
    shapes = {x.shape[1:] for x in (server_x, test_x, *client_x)}
    if len(shapes) != 1:
        raise ValueError(f"every image set needs the same image shape, got {sorted(map(list, shapes))}")
    if any(len(x) == 0 for x in client_x):
        raise ValueError(f"every client needs at least one image, got sizes {[len(x) for x in client_x]}")
    arrays = {"num_known": np.int64(num_known), "server_x": server_x, "server_y": server_y}
    arrays |= {"test_x": test_x, "test_y": test_y}
    if client_x:
        arrays["unlabelled"] = np.concatenate(client_x)
        arrays["client_sizes"] = np.asarray([len(x) for x in client_x], dtype=np.int64)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as fh:  # a file object: np.savez would append ".npz" to a name without it
        np.savez(fh, **arrays)
    return out


def save_node_data(path: str | Path, images: Any, image_column: str = "image") -> Path:
    """Write one SuperNode's own unlabelled images (``unlabelled``) as the file its
    ``--node-config "data-file='...'"`` names (the node trains on all of them); returns its path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as fh:
        np.savez(fh, unlabelled=to_images(images, image_column))
    return out


def _copy(net: OpenSetNet) -> OpenSetNet:
    import copy

    return copy.deepcopy(net).cpu()


def _wrap(extractor: nn.Module, num_known: int, server_x: np.ndarray) -> OpenSetNet:
    """``OpenSetNet(extractor, K)`` with D read off one forward pass on two server images."""
    dim = getattr(extractor, "out_dim", None)
    if dim is None:
        with torch.no_grad():
            was = extractor.training
            feats = extractor.eval()(normalize(torch.from_numpy(server_x[:2])))
            extractor.train(was)
        if feats.ndim != 2:
            raise ValueError(f"the extractor must return features [B, D], got shape {list(feats.shape)}")
        dim = int(feats.shape[1])
    return OpenSetNet(extractor, num_known, feature_dim=int(dim))
