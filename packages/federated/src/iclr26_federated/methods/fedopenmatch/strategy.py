"""FedOpenMatch's server strategy: Flower's FedAvg plus the server fine-tune, failure records and timing.

Per round r (``Strategy.start`` drives it):

1. ``configure_train``: the current global weights w_r go to the sampled clients with the job's config
   (FedAvg's sampling; no clients for ``labeled-only``);
2. clients train on their unlabelled data with frozen per-round pseudo-labels;
3. ``aggregate_train``: FedAvg, ``w ← Σ_m (n_m / Σ n) w_m`` over the clients that replied (a client that
   raised or did not answer is logged and left out; more than ``max_failed_fraction`` of the sampled
   clients failing stops the run with :class:`RoundFailedError`), then the server
   fine-tune on the labelled set D_s: ``w_{r+1} = server_update(w, r)``.

Replies are summed in partition order, not in arrival order: float addition is not associative, and
with Flower's simulation engine the arrival order changes from run to run, so summing as they came
made the same seeded command give different numbers (0.840 vs 0.849 open-set balanced accuracy on
the quick preset's seed 0).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from flwr.app import ArrayRecord, ConfigRecord, Message, MetricRecord
from flwr.serverapp import Grid
from flwr.serverapp.strategy import FedAvg

__all__ = ["FedOpenMatchStrategy", "RoundFailedError", "reply_order"]


class RoundFailedError(RuntimeError):
    """More clients failed in a round than the strategy's ``max_failed_fraction`` tolerates."""


def reply_order(msg: Message) -> tuple[int, int]:
    """Sort key of a client reply: its ``partition-id`` (the ``"client"`` ConfigRecord our ClientApp
    sends), then the sending node id (random per run; only for replies without a partition id)."""
    pid = -1
    if not msg.has_error() and "client" in msg.content.config_records:
        raw = msg.content.config_records["client"].get("partition-id", -1)
        pid = raw if isinstance(raw, int) and not isinstance(raw, bool) else -1
    return pid, int(msg.metadata.src_node_id)


class FedOpenMatchStrategy(FedAvg):
    """FedAvg with a server update after aggregation.

    Args:
        server_update: ``(aggregated ArrayRecord, round) -> ArrayRecord`` (the server fine-tune on D_s).
        federated: False runs no client training (the labeled-only baseline): only ``server_update``.
        max_failed_fraction: A round in which more than this fraction of the sampled clients fail (an error
            reply or no reply) raises :class:`RoundFailedError`; below it the answers are averaged.
        node_wait_s: How long to wait for ``min_available_nodes`` nodes before raising (FedAvg's sampling
            would wait forever, e.g. when Ray's node failed to start).
        **kwargs: Passed to :class:`flwr.serverapp.strategy.FedAvg`.

    Attributes:
        failures: One ``{"round", "node_id", "reason"}`` per failed client reply.
        round_seconds: Wall time of each round (sending, client training, aggregation, server update).
        participants: Number of clients whose update was aggregated, per round.
        train_metrics: The clients' aggregated MetricRecord (``num-examples``-weighted means), per round.
    """

    def __init__(
        self,
        server_update: Callable[[ArrayRecord, int], ArrayRecord],
        *,
        federated: bool = True,
        max_failed_fraction: float = 0.5,
        node_wait_s: float = 600.0,
        **kwargs: Any,
    ) -> None:
        if not 0.0 <= max_failed_fraction < 1.0:
            raise ValueError(f"max_failed_fraction must be in [0, 1), got {max_failed_fraction}")
        super().__init__(**kwargs)
        self.max_failed_fraction = max_failed_fraction
        self._sent = 0
        self.node_wait_s = node_wait_s
        self.server_update = server_update
        self.federated = federated
        self.failures: list[dict[str, Any]] = []
        self.round_seconds: dict[int, float] = {}
        self.participants: dict[int, int] = {}
        self.train_metrics: dict[int, dict[str, float]] = {}
        self._current: ArrayRecord | None = None
        self._t0: float = 0.0

    def configure_train(
        self, server_round: int, arrays: ArrayRecord, config: ConfigRecord, grid: Grid
    ) -> Iterable[Message]:
        """FedAvg's sampling and messages (none for labeled-only); remembers the current weights."""
        self._t0 = time.perf_counter()
        self._current = arrays
        self._sent = 0
        if not self.federated:
            return []
        deadline = time.monotonic() + self.node_wait_s
        while len(list(grid.get_node_ids())) < self.min_available_nodes:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"only {len(list(grid.get_node_ids()))} of {self.min_available_nodes} client nodes connected "
                    f"after {self.node_wait_s:.0f} s (did the simulation backend start?)"
                )
            time.sleep(0.5)
        messages = list(super().configure_train(server_round, arrays, config, grid))
        self._sent = len(messages)
        return messages

    def aggregate_train(
        self, server_round: int, replies: Iterable[Message]
    ) -> tuple[ArrayRecord | None, MetricRecord | None]:
        """FedAvg over the successful replies, then the server update."""
        replies = list(replies)
        for msg in replies:
            if msg.has_error():
                self.failures.append(
                    {"round": server_round, "node_id": int(msg.metadata.src_node_id), "reason": str(msg.error.reason)}
                )
        answered = sum(not m.has_error() for m in replies)
        sampled = max(self._sent, len(replies))
        failed = sampled - answered  # error replies and clients that never answered
        if failed and failed > self.max_failed_fraction * sampled:
            raise RoundFailedError(
                f"round {server_round}: {failed} of {sampled} sampled clients failed, more "
                f"than max_failed_fraction = {self.max_failed_fraction} (first reason: "
                f"{self.failures[-1]['reason'] if self.failures else 'no reply'})"
            )
        replies.sort(key=reply_order)  # a fixed summation order: the same seed gives the same weights
        arrays, metrics = super().aggregate_train(server_round, replies) if replies else (None, None)
        self.participants[server_round] = answered
        if metrics is not None:
            self.train_metrics[server_round] = {k: float(v) for k, v in metrics.items()}  # pyright: ignore[reportArgumentType]
        base = arrays if arrays is not None else self._current
        if base is None:
            raise RuntimeError("aggregate_train called before configure_train")
        updated = self.server_update(base, server_round)
        self.round_seconds[server_round] = time.perf_counter() - self._t0
        return updated, metrics
