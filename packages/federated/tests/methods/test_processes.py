"""No orphaned Flower process: a run killed by SIGTERM or SIGKILL leaves nothing behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

#: A parent that starts a FlowerProcess (a stand-in executable that also forks a grandchild, as the
#: SuperLink forks its simulation) and then waits, like the CLI during `flwr run`.
_PARENT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from iclr26_federated.methods.fedopenmatch.utils import FlowerProcess
    log = Path(sys.argv[1])
    p = FlowerProcess(["sh", "-c", "sleep 300 & sleep 300"], {"PATH": "/usr/bin:/bin"}, log, grace=2.0)
    print(p.pid, flush=True)
    time.sleep(300)
    """
)


def _group_members(pgid: int) -> list[psutil.Process]:
    out = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                out.append(proc)
        except (psutil.Error, ProcessLookupError, PermissionError):
            continue
    return out


def _wait_gone(pgid: int, timeout: float) -> list[psutil.Process]:
    deadline = time.monotonic() + timeout
    left = _group_members(pgid)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = _group_members(pgid)
    return left


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_parent_leaves_no_flower_process(tmp_path: Path, sig: signal.Signals) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, str(tmp_path / "x.log")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        pgid = int(parent.stdout.readline())
        deadline = time.monotonic() + 30
        while len(_group_members(pgid)) < 3 and time.monotonic() < deadline:  # sh and its two sleeps
            time.sleep(0.1)
        assert len(_group_members(pgid)) >= 2
        parent.send_signal(sig)
        parent.wait(30)
        left = _wait_gone(pgid, 30)
        assert not left, f"left behind after {sig.name}: {[p.cmdline() for p in left]}"
    finally:
        parent.kill()
        parent.wait()


def test_stop_ends_the_group_and_dismisses_the_reaper(tmp_path: Path) -> None:
    from iclr26_federated.methods.fedopenmatch.utils import FlowerProcess

    p = FlowerProcess(["sh", "-c", "sleep 300 & sleep 300"], {"PATH": "/usr/bin:/bin"}, tmp_path / "x.log")
    time.sleep(0.5)
    p.stop(timeout=5)
    assert not _wait_gone(p.pid, 10)
    assert p.reaper.returncode == 0  # told to exit (a byte on its stdin), it touched nothing
