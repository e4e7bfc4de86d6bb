"""Ending a Flower process and everything it started (light: psutil only, no torch or flwr).

Flower's simulation runtime does not keep its processes in one process group: the SuperLink starts
``flwr-simulation``, which starts Ray (``gcs_server``, ``raylet``, the dashboard, the ``ClientAppActor``
workers), some of them in sessions of their own. :func:`terminate_tree` therefore ends the process
*tree* (every descendant found while it works) as well as the process group.

``python -m iclr26_federated.methods.fedopenmatch.reaper PID GRACE`` is the reaper that
:class:`~.utils.FlowerProcess` starts beside each Flower process: it blocks on its stdin, whose write end
only the parent holds. EOF means the parent died without stopping the process (SIGKILL, a crash): the
reaper then calls :func:`terminate_tree`. A byte on stdin means the parent stopped it itself: the reaper
exits without touching anything.
"""

from __future__ import annotations

import os
import signal
import sys
import time

import psutil

__all__ = ["terminate_tree"]


def _descendants(procs: dict[int, psutil.Process]) -> None:
    for p in list(procs.values()):
        try:
            for child in p.children(recursive=True):
                procs.setdefault(child.pid, child)
        except psutil.Error:
            continue


def _alive(procs: dict[int, psutil.Process]) -> list[psutil.Process]:
    out = []
    for p in procs.values():
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.Error:
            continue
    return out


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def terminate_tree(pid: int, grace: float = 20.0) -> None:
    """SIGTERM to process ``pid`` (and its process group, whose id is ``pid``: Flower processes are
    started as group leaders); after up to ``grace``/2 s SIGTERM to every descendant still running; after
    ``grace`` s in all SIGKILL to whatever is left. Descendants are collected before the first signal and
    again while waiting (a process whose parent dies is re-parented and could not be found afterwards)."""
    procs: dict[int, psutil.Process] = {}
    try:
        procs[pid] = psutil.Process(pid)
    except psutil.Error:
        pass
    _descendants(procs)
    _killpg(pid, signal.SIGTERM)  # the leader first: the SuperLink stops its simulation itself
    deadline = time.monotonic() + grace
    root = procs.get(pid)
    while root is not None and root in _alive(procs) and time.monotonic() < deadline - grace / 2:
        _descendants(procs)
        time.sleep(0.2)
    for p in _alive(procs):  # then whatever it left: flwr-simulation, Ray's processes and actors
        try:
            p.terminate()
        except psutil.Error:
            continue
    while time.monotonic() < deadline:
        _descendants(procs)
        if not _alive(procs):
            break
        time.sleep(0.2)
    _descendants(procs)
    _killpg(pid, signal.SIGKILL)
    for p in _alive(procs):
        try:
            p.kill()
        except psutil.Error:
            continue
    psutil.wait_procs(list(procs.values()), timeout=5)


def main(argv: list[str]) -> int:
    """The reaper: ``argv = [PID, GRACE]``."""
    pid, grace = int(argv[0]), float(argv[1])
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if sys.stdin.buffer.read(1):  # the parent stopped the process itself
        return 0
    terminate_tree(pid, grace)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
