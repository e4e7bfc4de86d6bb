"""FedOpenMatch's ClientApp (Flower Message API): adapts messages to :func:`model.train_client`.

A train message carries ``arrays`` (the global weights) and ``config`` (the job's :class:`JobParams`
plus Flower's ``server-round``). The client rebuilds its unlabelled partition from the job's split
parameters and its ``partition-id`` (``context.node_config``), or reads it from a user's data file (the
node config's ``data-file``, else the job's ``data_file``: :func:`~.dataset.client_data`), trains, and
replies with its weights and a MetricRecord holding ``num-examples`` (FedAvg's weight), the losses and
the pseudo-label statistics (fractions, so FedAvg's weighted mean is the fraction over all clients'
images; no ids, which would be averaged too). The client's ``partition-id`` travels in a separate
ConfigRecord (``"client"``), which FedAvg ignores and the strategy uses to aggregate replies in a fixed
order.
"""

from __future__ import annotations

import torch
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp

from iclr26_federated.methods.fedopenmatch.config import JobParams
from iclr26_federated.methods.fedopenmatch.dataset import client_data
from iclr26_federated.methods.fedopenmatch.model import make_model, train_client

__all__ = ["app", "client_generator", "node_partition", "train"]

app = ClientApp()


def client_generator(seed: int, partition_id: int, server_round: int) -> torch.Generator:
    """The seeded RNG of one client in one round (augmentations and batch order)."""
    return torch.Generator().manual_seed(seed * 1_000_003 + partition_id * 10_007 + server_round)


def node_partition(context: Context, params: JobParams) -> int:
    """This SuperNode's ``partition-id``, checked against the run: an integer in ``[0, num_clients)`` and,
    where the node declares ``num-partitions``, the same client count as the run (a SuperNode started for
    another federation would otherwise train on the wrong data or on none). Raises ``ValueError`` with one
    line naming the ``--node-config`` key; the server records it as that client's failure for the round."""
    cfg = context.node_config
    n = params.num_clients
    fix = f"start the SuperNode with --node-config 'partition-id=<0..{n - 1}> num-partitions={n}'"
    if "partition-id" not in cfg:
        raise ValueError(f"SuperNode node-config has no 'partition-id'; {fix}")
    raw = cfg["partition-id"]
    if isinstance(raw, bool) or not isinstance(raw, int | str) or not str(raw).lstrip("-").isdigit():
        raise ValueError(f"SuperNode node-config partition-id = {raw!r}: expected an integer; {fix}")
    pid = int(raw)
    declared = cfg.get("num-partitions")
    if declared is not None and str(declared) != str(n):
        raise ValueError(f"SuperNode node-config num-partitions = {declared!r} but this run has {n} clients; {fix}")
    if not 0 <= pid < n:
        raise ValueError(f"SuperNode node-config partition-id = {pid} is outside [0, {n}); {fix}")
    return pid


@app.train()
def train(msg: Message, context: Context) -> Message:
    """Local FedOpenMatch (or baseline) training of one client for one round."""
    config = msg.content["config"]
    params = JobParams.from_record(dict(config))
    server_round = int(config["server-round"])  # type: ignore[arg-type]
    pid = node_partition(context, params)
    if pid == params.fail_client and server_round == params.fail_round:
        raise RuntimeError(f"client {pid}: injected failure in round {server_round} (fail_client test hook)")
    device = torch.device(params.device if params.device == "cpu" or torch.cuda.is_available() else "cpu")
    data = client_data(params, pid, context.node_config)
    model = make_model(params, data.in_channels)
    model.load_state_dict(msg.content.array_records["arrays"].to_torch_state_dict())
    metrics = train_client(
        model,
        data.images,
        params,
        client_generator(params.seed, pid, server_round),
        device,
        server_round=server_round,
        # pseudo-label precision only (never trained on); a user's own clients come without labels
        true_labels=data.labels,
    )
    content = RecordDict(
        {
            "arrays": ArrayRecord(model.cpu().state_dict()),
            "metrics": MetricRecord({**metrics}),
            "client": ConfigRecord({"partition-id": pid}),
        }
    )
    return Message(content=content, reply_to=msg)
