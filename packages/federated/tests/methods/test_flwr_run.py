"""The same app under ``flwr run`` against a local simulation SuperLink (started and always stopped here)."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2]


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.slow
def test_flwr_run_local_simulation(tmp_path) -> None:
    bin_dir = Path(sys.executable).parent
    http_port, control_port = 39291, 39293
    home = tmp_path / "flwr-home"
    (home / "local-superlink").mkdir(parents=True)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "FLWR_HOME": str(home),
        "FLWR_DISABLE_UPDATE_CHECK": "1",
        "FLWR_DISABLE_RUNTIME_DEPENDENCY_INSTALLATION": "1",
        "FLWR_LOCAL_SUPERLINK_HTTP_API_PORT": str(http_port),
        "FLWR_LOCAL_CONTROL_API_PORT": str(control_port),
        "OMP_NUM_THREADS": "1",
    }
    if _port_open(http_port) or _port_open(control_port):
        pytest.skip("the test's SuperLink ports are in use")
    # Start the SuperLink ourselves: flwr 1.42 waits only 15 s for its own, too little on a busy machine.
    link = subprocess.Popen(
        [str(bin_dir / "flower-superlink"), "--insecure", "--simulation", "--isolation", "subprocess"]
        + ["--control-api-address", f"127.0.0.1:{control_port}", "--host", "127.0.0.1", "--port", str(http_port)]
        + ["--database", str(home / "local-superlink" / "state.db")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 180
        while not _port_open(http_port):  # flwr 1.42 serves the Control API over this HTTP port too
            assert link.poll() is None, "flower-superlink exited"
            assert time.monotonic() < deadline, "flower-superlink did not start in 180 s"
            time.sleep(1)
        out = tmp_path / "runs"
        res = subprocess.run(
            [str(bin_dir / "flwr"), "run", str(PACKAGE), "local", "--stream"]
            + ["--federation-config", "num-supernodes=2 client-resources-num-cpus=1"]
            + ["--run-config", f"out-dir='{out}' num-rounds=1 variants='fedopenmatch'"],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
        (run_dir,) = (out / "fedopenmatch").iterdir()
        assert (run_dir / "results.json").is_file(), res.stdout[-4000:] + res.stderr[-2000:]
        results = json.loads((run_dir / "results.json").read_text())
        assert results["engine"] == "flwr-run"
        assert [j["participants"] for j in results["jobs"]] == [[2]]
    finally:
        os.killpg(link.pid, signal.SIGTERM)  # the SuperLink's session: superlink, superexec, simulation
        try:
            link.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(link.pid, signal.SIGKILL)
            link.wait()
