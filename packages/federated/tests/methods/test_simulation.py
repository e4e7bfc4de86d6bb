"""End to end on Flower's simulation engine (Ray backend): 2 virtual clients, 1 round, one failing."""

import os

import pytest

from iclr26_federated.methods.fedopenmatch.spec import SPEC
from iclr26_shared.testing import smoke_run


@pytest.mark.slow
def test_ray_simulation_two_clients_one_round(tmp_path) -> None:
    os.environ.setdefault("FLWR_DISABLE_UPDATE_CHECK", "1")
    _, results = smoke_run(
        SPEC,
        tmp_path,
        engine="ray",
        num_rounds=1,
        variants=("fedopenmatch",),
        fail_client=1,
        ray_cpus=2,
    )
    (job,) = results["jobs"]
    assert results["engine"] == "ray" and results["simulation_wall_s"] > 0
    assert job["participants"] == [1]  # client 1 raised inside a Ray actor; the round went on
    assert len(results["failures"]) == 1 and "injected failure" in results["failures"][0]["reason"]
    assert len(job["history"]) == 2  # round 0 and round 1 evaluated
