"""Helpers of the FedOpenMatch app (Flower baselines' ``utils.py``).

* :class:`InlineGrid` — a :class:`flwr.serverapp.Grid` that delivers each message to a ClientApp in this
  process, one after another. It runs the *same* ServerApp, strategy and ClientApp as Flower's
  simulation engine, without Ray: fast tests, the smoke preset, and the loop baseline of the benchmark.
  A ClientApp that raises yields an error reply, as in Flower's simulation engine.
* :func:`config_from_run_config` — Flower's ``context.run_config`` (kebab-case keys from
  ``[tool.flwr.app.config]`` or ``--run-config``) → a typed :class:`FedOpenMatchConfig`.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from flwr.app import Context, Error, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.common.constant import SUPERLINK_NODE_ID
from flwr.serverapp import Grid
from flwr.supercore.run import Run
from flwr.supercore.task_identity import TaskIdentity

from iclr26_federated.methods.fedopenmatch.config import PRESETS, FedOpenMatchConfig
from iclr26_shared.config import config_from_dict, config_to_dict
from iclr26_shared.errors import ConfigError

__all__ = ["CLIENT_APP_RAISED_EXCEPTION", "InlineGrid", "config_from_run_config"]

#: Flower's ``ErrorCode.CLIENT_APP_RAISED_EXCEPTION``.
CLIENT_APP_RAISED_EXCEPTION = 2


class InlineGrid(Grid):
    """Deliver messages to ``client_app`` in-process; node ids ``1..M`` map to partition ids ``0..M-1``.

    Attributes:
        client_seconds: Wall time of every ClientApp call, in order.
    """

    def __init__(self, client_app: ClientApp, num_nodes: int, run_id: int = 1) -> None:
        if num_nodes < 1:
            raise ValueError("num_nodes must be >= 1")
        self.client_app = client_app
        self._run = Run.create_empty(run_id)
        # Flower stamps new messages with the process's task identity; its runtimes set it, so do we.
        if TaskIdentity._run_id is None:
            TaskIdentity.task_id = 1
            TaskIdentity.run_id = run_id
            TaskIdentity.node_id = SUPERLINK_NODE_ID
        self._contexts = {
            node_id: Context(
                run_id=run_id,
                node_id=node_id,
                node_config={"partition-id": node_id - 1, "num-partitions": num_nodes},
                state=RecordDict(),
                run_config={},
            )
            for node_id in range(1, num_nodes + 1)
        }
        self._replies: dict[str, Message] = {}
        self.client_seconds: list[float] = []

    def set_run(self, run: Run) -> None:
        """Set the run."""
        self._run = run

    @property
    def run(self) -> Run:
        """The run."""
        return self._run

    def create_message(
        self, content: RecordDict, message_type: str, dst_node_id: int, group_id: str, ttl: float | None = None
    ) -> Message:
        """A message to one node."""
        return Message(content, dst_node_id, message_type, ttl=ttl, group_id=group_id)

    def get_node_ids(self) -> Iterable[int]:
        """Node ids ``1..M``."""
        return list(self._contexts)

    def push_messages(self, messages: Iterable[Message]) -> Iterable[str]:
        """Run the ClientApp on every message now; keep the replies for :meth:`pull_messages`."""
        ids = []
        for msg in messages:
            node = msg.metadata.dst_node_id
            if node not in self._contexts:
                raise ValueError(f"message for unknown node {node}")
            msg_id = uuid.uuid4().hex
            msg.metadata.__dict__["_message_id"] = msg_id  # what Flower's own grids do
            t0 = time.perf_counter()
            try:
                reply = self.client_app(msg, self._contexts[node])
            except Exception as err:  # reported as an error reply, like Flower's simulation engine
                reason = f"{type(err)}:<'{err}'>"
                reply = Message(Error(code=CLIENT_APP_RAISED_EXCEPTION, reason=reason), reply_to=msg)
            self.client_seconds.append(time.perf_counter() - t0)
            self._replies[msg_id] = reply
            ids.append(msg_id)
        return ids

    def pull_messages(self, message_ids: Iterable[str]) -> Iterable[Message]:
        """The replies to ``message_ids`` (each returned once)."""
        return [self._replies.pop(i) for i in message_ids if i in self._replies]

    def send_and_receive(self, messages: Iterable[Message], *, timeout: float | None = None) -> Iterable[Message]:
        """Push, then pull every reply."""
        return list(self.pull_messages(list(self.push_messages(messages))))


def config_from_run_config(run_config: Mapping[str, Any]) -> tuple[FedOpenMatchConfig, dict[str, Any]]:
    """Typed config from Flower's run config.

    Keys are the config fields in kebab-case (``num-rounds``), plus ``preset`` (the base preset, default
    ``quick``), and the common flags ``seed``, ``device``, ``out-dir``. ``variants`` is a comma-separated
    string. Returns ``(config, common)`` with ``common = {"seed", "device", "out_dir"}``; unknown keys or
    bad values raise :class:`ConfigError` naming the key.
    """
    values = {str(k).replace("-", "_"): v for k, v in run_config.items()}
    preset = str(values.pop("preset", "quick"))
    if preset not in PRESETS:
        raise ConfigError("preset", preset, "one of " + ", ".join(PRESETS))
    common = {
        "seed": int(values.pop("seed", 0)),
        "device": str(values.pop("device", "auto")),
        "out_dir": str(values.pop("out_dir", "runs")),
    }
    names = {f.name for f in dataclasses.fields(FedOpenMatchConfig)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(unknown[0].replace("_", "-"), values[unknown[0]], "a FedOpenMatch config key")
    if isinstance(values.get("variants"), str):
        values["variants"] = [v.strip() for v in values["variants"].split(",") if v.strip()]
    base = config_to_dict(PRESETS[preset])
    base.update(values)
    return config_from_dict(FedOpenMatchConfig, base), common
