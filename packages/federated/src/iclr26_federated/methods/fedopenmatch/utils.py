"""Helpers of the FedOpenMatch app (Flower baselines' ``utils.py``).

* :class:`InlineGrid` — a :class:`flwr.serverapp.Grid` that delivers each message to a ClientApp in this
  process, one after another. It runs the *same* ServerApp, strategy and ClientApp as Flower's
  simulation engine, without Ray: fast tests, the smoke preset, and the loop baseline of the benchmark.
  A ClientApp that raises yields an error reply, as in Flower's simulation engine.
* :func:`config_from_run_config` — Flower's ``context.run_config`` (kebab-case keys from
  ``[tool.flwr.app.config]`` or ``--run-config``) → a typed :class:`FedOpenMatchConfig` and the
  :class:`RunConfigCommon` keys, both through the shared typed parser (``config_from_dict``);
  :func:`run_config_from_config` is its inverse and :func:`write_run_config` writes it as the TOML file
  that ``flwr run --run-config <file>.toml`` reads (``tomli_w``).
* Flower processes for ``flwr run`` (the supported way to run a Flower app in flwr 1.42):
  :class:`FlowerProcess` starts ``flower-superlink`` / ``flower-supernode`` on free ports in their own
  process group, stops them by PID, and gives each a reaper process that kills the group when this
  process dies (SIGKILL included); :func:`flwr_run` submits this package's app to a SuperLink: by default
  the app directory that :func:`~.flwr_app.materialize_app` writes (one ``pyproject.toml`` naming the
  installed components), so it works from an installed wheel as from the checkout.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Annotated, Any, Literal

import annotated_types as at
import tomli_w
from flwr.app import Context, Error, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.common.constant import SUPERLINK_NODE_ID
from flwr.serverapp import Grid
from flwr.supercore.run import Run
from flwr.supercore.task_identity import TaskIdentity

from iclr26_federated.methods.fedopenmatch.config import PRESETS, FedOpenMatchConfig
from iclr26_shared.config import config_from_dict, config_to_dict, validate
from iclr26_shared.errors import ConfigError

__all__ = [
    "CLIENT_APP_RAISED_EXCEPTION",
    "COMMON_RUN_CONFIG",
    "FlowerProcess",
    "InlineGrid",
    "check_run_config_keys",
    "config_from_run_config",
    "declared_run_config",
    "flower_env",
    "flwr_run",
    "free_port",
    "RunConfigCommon",
    "run_config_from_config",
    "write_run_config",
    "start_superlink",
    "start_supernode",
]


@dataclasses.dataclass(frozen=True)
class RunConfigCommon:
    """The run-config keys besides the config fields (``[tool.flwr.app.config]`` declares both)."""

    preset: Literal["smoke", "quick", "full"] = "smoke"
    """The preset whose values the config fields left at "" take."""
    seed: Annotated[int, at.Interval(ge=0, lt=2**63)] = 0
    """Base seed of the run."""
    device: str = "auto"
    """Device of the server (auto, cpu, cuda, cuda:N)."""
    out_dir: str = "runs"
    """Root of a new run directory (a user's own ``flwr run``)."""
    run_dir: str = ""
    """Set by the CLI's ``ray`` engine: write into this existing run directory instead of a new one."""

    def __post_init__(self) -> None:
        validate(self)


#: Run-config keys besides the config fields, in kebab-case.
COMMON_RUN_CONFIG = tuple(f.name.replace("_", "-") for f in dataclasses.fields(RunConfigCommon))

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


def _kebab(name: str) -> str:
    return name.replace("_", "-")


def config_from_run_config(run_config: Mapping[str, Any]) -> tuple[FedOpenMatchConfig, RunConfigCommon]:
    """Typed config from Flower's run config.

    Keys are the config fields and the :class:`RunConfigCommon` fields in kebab-case (``num-rounds``), every
    one declared in ``[tool.flwr.app.config]``; a field's ``""`` means "the preset's value". ``variants`` is
    a comma-separated string (Flower's run config holds scalars only). Both halves go through the shared
    typed parser, so an unknown key or a bad value raises :class:`ConfigError` naming it.
    """
    fields = {_kebab(f.name): f.name for f in dataclasses.fields(FedOpenMatchConfig)}
    common_fields = {_kebab(f.name): f.name for f in dataclasses.fields(RunConfigCommon)}
    values: dict[str, Any] = {}
    common: dict[str, Any] = {}
    for key, value in run_config.items():
        key = str(key)
        if key in common_fields:
            if value != "":
                common[common_fields[key]] = value
        elif key in fields:
            if value != "":
                values[fields[key]] = value
        else:
            known = ", ".join(sorted(fields) + list(COMMON_RUN_CONFIG))
            raise ConfigError(key, value, f"a declared run-config key ({known})")
    if isinstance(values.get("variants"), str):
        values["variants"] = [v.strip() for v in values["variants"].split(",") if v.strip()]
    head = config_from_dict(RunConfigCommon, common)
    base = config_to_dict(PRESETS[head.preset]) | values
    return config_from_dict(FedOpenMatchConfig, base), head


def run_config_from_config(cfg: FedOpenMatchConfig, common: RunConfigCommon | None = None) -> dict[str, Any]:
    """Every field of ``cfg`` (and of ``common``, when given) as a run-config entry: kebab-case keys,
    tuples as comma strings; the inverse of :func:`config_from_run_config`."""
    out: dict[str, Any] = {}
    for part in (common, cfg):
        for key, value in (config_to_dict(part) if part is not None else {}).items():
            out[_kebab(key)] = ",".join(str(v) for v in value) if isinstance(value, list | tuple) else value
    return out


def write_run_config(values: Mapping[str, Any], path: Path) -> Path:
    """Write ``values`` as the TOML file ``flwr run --run-config <path>`` reads (keys checked against
    ``[tool.flwr.app.config]`` first: :func:`check_run_config_keys`); returns ``path``."""
    check_run_config_keys(values)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tomli_w.dumps(dict(values)), encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------------
# Flower processes (flwr run, SuperLink, SuperNodes)
# --------------------------------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something listens on ``host:port``."""
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def flower_env(home: Path, **extra: str) -> dict[str, str]:
    """Environment for Flower's executables: this venv's bin first on PATH, ``FLWR_HOME``, no update check,
    no runtime dependency installation (the app runs in this environment), one thread per process."""
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "FLWR_HOME": str(home),
        "FLWR_DISABLE_UPDATE_CHECK": "1",
        "FLWR_DISABLE_RUNTIME_DEPENDENCY_INSTALLATION": "1",
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
        **extra,
    }
    return env


class FlowerProcess:
    """A Flower executable in its own process group (and session), output appended to ``log``;
    :meth:`stop` ends it and the children it spawned (same process group) by its PID.

    A small reaper process (:mod:`.reaper`) holds the read end of a pipe whose write end only this
    process has: when this process dies without calling :meth:`stop` (SIGKILL, a crash), the pipe closes
    and the reaper sends SIGTERM, then SIGKILL, to the Flower process group, so no ``flower-superlink``,
    ``flwr run`` or ``flower-supernode`` outlives the run that started it.

    Args:
        args: Executable name (found in this venv's bin) and arguments.
        env: Environment (see :func:`flower_env`).
        log: File that receives stdout and stderr.
        grace: Seconds between the reaper's SIGTERM and SIGKILL.
    """

    def __init__(self, args: Sequence[str], env: Mapping[str, str], log: Path, *, grace: float = 20.0) -> None:
        exe = Path(sys.executable).parent / args[0]
        self.args = [str(exe) if exe.exists() else args[0], *args[1:]]
        self.log = log
        log.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[bytes] = open(log, "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            self.args, env=dict(env), stdout=self._fh, stderr=subprocess.STDOUT, start_new_session=True
        )
        # the pipe's write end is non-inheritable (PEP 446): only this process holds it
        self.reaper = subprocess.Popen(
            [sys.executable, "-m", "iclr26_federated.methods.fedopenmatch.reaper", str(self.proc.pid), str(grace)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        """The process id (also its process group id)."""
        return self.proc.pid

    def alive(self) -> bool:
        """Whether the process still runs."""
        return self.proc.poll() is None

    def wait_port(self, port: int, timeout: float) -> None:
        """Wait until ``port`` accepts connections; raises RuntimeError (with the log's tail) otherwise."""
        deadline = time.monotonic() + timeout
        while not port_open(port):
            if not self.alive():
                raise RuntimeError(f"{self.args[0]} exited with {self.proc.returncode}:\n{log_tail(self.log)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.args[0]} did not open port {port} in {timeout:.0f} s:\n{log_tail(self.log)}")
            time.sleep(0.5)

    def stop(self, timeout: float = 30.0) -> None:
        """End the process, its process group and every descendant (:func:`~.reaper.terminate_tree`:
        SIGTERM, SIGKILL to what is left after ``timeout`` s), then dismiss the reaper; idempotent."""
        from iclr26_federated.methods.fedopenmatch.reaper import terminate_tree

        try:
            if self.alive() or _group_alive(self.proc.pid):
                terminate_tree(self.proc.pid, timeout)
            self.proc.wait()
        finally:
            self._fh.close()
            self._dismiss_reaper()

    def _dismiss_reaper(self) -> None:
        stdin = self.reaper.stdin
        if stdin is not None and not stdin.closed:
            try:
                stdin.write(b"x")
                stdin.close()
            except OSError:  # the reaper is gone already
                pass
        try:
            self.reaper.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.reaper.kill()
            self.reaper.wait()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def log_tail(path: Path, chars: int = 3000) -> str:
    """The last ``chars`` characters of a log file ("" if absent)."""
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return ""


def start_superlink(home: Path, log: Path, *, simulation: bool, timeout: float = 180.0) -> tuple[FlowerProcess, int]:
    """``flower-superlink --insecure`` on a free port (flwr 1.42 serves its Runtime, Control and Fleet APIs
    over one HTTP port), ``--simulation`` for Flower's Simulation Runtime; returns ``(process, port)`` once
    the port answers."""
    port = free_port()
    args = ["flower-superlink", "--insecure", "--isolation", "subprocess"]
    args += ["--simulation"] if simulation else []
    args += ["--host", "127.0.0.1", "--port", str(port), "--database", str(home / "state.db")]
    home.mkdir(parents=True, exist_ok=True)
    link = FlowerProcess(args, flower_env(home), log)
    try:
        link.wait_port(port, timeout)
    except BaseException:
        link.stop()
        raise
    return link, port


def start_supernode(
    home: Path,
    superlink_port: int,
    partition_id: int,
    num_partitions: int,
    log: Path,
    *,
    data_file: Path | None = None,
    timeout: float = 180.0,
) -> FlowerProcess:
    """``flower-supernode --insecure`` connected to the SuperLink on ``superlink_port`` with the node config
    ``partition-id``/``num-partitions`` (what the ClientApp reads) and, when given, ``data-file`` (this node's
    own images, ``fedopenmatch.save_node_data``), its own runtime port and FLWR_HOME; returns once its port
    answers. Raises ``ValueError`` when ``partition_id`` is outside ``[0, num_partitions)``."""
    if num_partitions < 1 or not 0 <= partition_id < num_partitions:
        raise ValueError(f"partition-id {partition_id} outside [0, num-partitions = {num_partitions})")
    port = free_port()
    node_config = f"partition-id={partition_id} num-partitions={num_partitions}"
    if data_file is not None:
        node_config += f" data-file='{data_file.resolve()}'"
    args = ["flower-supernode", "--insecure", "--superlink", f"127.0.0.1:{superlink_port}"]
    args += ["--node-config", node_config]
    args += ["--isolation", "subprocess", "--host", "127.0.0.1", "--port", str(port)]
    node_home = home / f"supernode-{partition_id}"
    node_home.mkdir(parents=True, exist_ok=True)
    node = FlowerProcess(args, flower_env(node_home), log)
    try:
        node.wait_port(port, timeout)
    except BaseException:
        node.stop()
        raise
    return node


def declared_run_config(app_dir: Path | None = None) -> dict[str, Any]:
    """``[tool.flwr.app.config]``: the packaged app's (:func:`~.flwr_app.declared_run_config`, generated from
    the config fields), or that of the ``pyproject.toml`` in ``app_dir`` when given."""
    if app_dir is None:
        from iclr26_federated.methods.fedopenmatch.flwr_app import declared_run_config as packaged

        return packaged()
    import tomllib

    data = tomllib.loads((app_dir / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(data["tool"]["flwr"]["app"]["config"])


def check_run_config_keys(run_config: Mapping[str, Any], app_dir: Path | None = None) -> None:
    """Raise :class:`ConfigError` naming the first key of ``run_config`` that ``[tool.flwr.app.config]``
    (the packaged app's, or ``app_dir``'s) does not declare. ``flwr run`` refuses such a key too, but says
    only "Invalid run configuration" (the reason is in the SuperLink's log)."""
    declared = declared_run_config(app_dir)
    where = "the app" if app_dir is None else str(app_dir / "pyproject.toml")
    for key, value in run_config.items():
        if key not in declared:
            raise ConfigError(key, value, f"a key declared in [tool.flwr.app.config] of {where}")


def flwr_run(
    home: Path,
    port: int,
    run_config: Mapping[str, Any],
    log: Path,
    *,
    federation_config: str | None = None,
    app_dir: Path | None = None,
    timeout: float | None = None,
    poll: Callable[[], None] | None = None,
) -> int:
    """``flwr run <app_dir> local --stream --run-config <log dir>/run-config.toml`` against the SuperLink on
    ``port`` (its "local" connection points there through ``FLWR_LOCAL_*`` ports); output appended to
    ``log``; ``poll()`` is called every second while it runs (progress); returns the exit code.

    ``app_dir`` defaults to the packaged app, written to ``<log dir>/app`` (:func:`~.flwr_app.materialize_app`):
    its components are the installed package's modules, so no source tree is needed."""
    check_run_config_keys(run_config, app_dir)
    if app_dir is None:
        from iclr26_federated.methods.fedopenmatch.flwr_app import materialize_app

        app_dir = materialize_app(log.parent / "app")
    env = flower_env(
        home,
        FLWR_LOCAL_SUPERLINK_HTTP_API_PORT=str(port),
        FLWR_LOCAL_CONTROL_API_PORT=str(port),
    )
    config_file = write_run_config(run_config, log.parent / "run-config.toml")
    args = ["flwr", "run", str(app_dir), "local", "--stream", "--run-config", str(config_file)]
    if federation_config:
        args += ["--federation-config", federation_config]
    proc = FlowerProcess(args, env, log)
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        while proc.alive():
            if poll is not None:
                poll()
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"flwr run did not finish in {timeout:.0f} s:\n{log_tail(log)}")
            time.sleep(1.0)
        if poll is not None:
            poll()
        return int(proc.proc.returncode)
    finally:
        proc.stop()
