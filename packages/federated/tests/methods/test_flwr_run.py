"""The same app under ``flwr run`` against a local simulation SuperLink (started and always stopped here)."""

import json

import pytest

from iclr26_federated.methods.fedopenmatch.utils import flwr_run, log_tail, start_superlink
from iclr26_shared.errors import ConfigError


@pytest.mark.slow
def test_flwr_run_local_simulation(tmp_path) -> None:
    home = tmp_path / "flwr-home"
    link, port = start_superlink(home, tmp_path / "superlink.log", simulation=True)
    try:
        out = tmp_path / "runs"
        log = tmp_path / "flwr-run.log"
        code = flwr_run(
            home,
            port,
            {"out-dir": str(out), "num-rounds": 1, "variants": "fedopenmatch"},
            log,
            federation_config="num-supernodes=2 client-resources-num-cpus=1",
            timeout=600,
        )
        assert code == 0, log_tail(log)
        (run_dir,) = (out / "fedopenmatch").iterdir()
        assert (run_dir / "results.json").is_file(), log_tail(log)
        results = json.loads((run_dir / "results.json").read_text())
        assert results["engine"] == "flwr-run"
        assert [j["participants"] for j in results["jobs"]] == [[2]]
        assert "preset: smoke" in (run_dir / "report.md").read_text()  # the run config's preset, not "custom"
        assert "clients answered per round: [2] of 2" in log.read_text()
        # an undeclared key is a one-line error naming it (flwr run itself says only "Invalid run configuration")
        with pytest.raises(ConfigError, match="'no-such-key'.*declared in"):
            flwr_run(home, port, {"no-such-key": 1}, tmp_path / "bad.log", timeout=300)
    finally:
        link.stop()
    assert not link.alive()
