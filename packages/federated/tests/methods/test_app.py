"""The Flower app in-process: strategy aggregation, failing clients, the ClientApp, the smoke CLI."""

import json
from typing import Any

import pytest
import torch
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MessageType, MetricRecord, RecordDict
from flwr.clientapp import ClientApp

from iclr26_federated import cli
from iclr26_federated.methods.fedopenmatch.config import PRESETS, job_params
from iclr26_federated.methods.fedopenmatch.dataset import client_partition, load_split
from iclr26_federated.methods.fedopenmatch.model import make_model
from iclr26_federated.methods.fedopenmatch.strategy import FedOpenMatchStrategy, RoundFailedError
from iclr26_federated.methods.fedopenmatch.utils import InlineGrid
from iclr26_shared.testing import assert_close, assert_valid_run_dir, run_cli

_toy = ClientApp()


@_toy.train()
def _toy_train(msg: Message, context: Context) -> Message:
    pid = int(context.node_config["partition-id"])
    if pid == 2:
        raise RuntimeError("client 2 is broken")
    w = msg.content.array_records["arrays"].to_torch_state_dict()["w"] + float(pid + 1)
    metrics = MetricRecord({"num-examples": float(10 * (pid + 1)), "loss": float(pid)})
    return Message(RecordDict({"arrays": ArrayRecord({"w": w}), "metrics": metrics}), reply_to=msg)


def test_strategy_is_a_weighted_average_then_server_update_and_reports_failures() -> None:
    grid = InlineGrid(_toy, 3)
    strategy = FedOpenMatchStrategy(
        lambda arrays, rnd: ArrayRecord({"w": arrays.to_torch_state_dict()["w"] * 2}),
        fraction_evaluate=0.0,
        min_train_nodes=3,
        min_available_nodes=3,
    )
    result = strategy.start(
        grid=grid, initial_arrays=ArrayRecord({"w": torch.zeros(3, dtype=torch.float64)}), num_rounds=2
    )
    # round 1: clients 0 (w=1, n=10) and 1 (w=2, n=20) reply, client 2 raises -> (10·1 + 20·2)/30, then ×2
    r1 = 2 * (10 * 1 + 20 * 2) / 30
    # round 2: from r1: (10·(r1+1) + 20·(r1+2))/30, then ×2
    r2 = 2 * (10 * (r1 + 1) + 20 * (r1 + 2)) / 30
    assert_close(result.arrays.to_torch_state_dict()["w"], torch.full((3,), r2, dtype=torch.float64))
    assert [f["round"] for f in strategy.failures] == [1, 2]
    assert all("client 2 is broken" in f["reason"] for f in strategy.failures)
    assert strategy.participants == {1: 2, 2: 2}
    assert result.train_metrics_clientapp[1]["loss"] == pytest.approx((10 * 0 + 20 * 1) / 30)


def test_a_round_with_more_failed_clients_than_tolerated_stops_the_run() -> None:
    grid = InlineGrid(_toy, 3)  # client 2 of 3 always raises: 1/3 failed
    kwargs: dict[str, Any] = dict(fraction_evaluate=0.0, min_train_nodes=3, min_available_nodes=3)
    strict = FedOpenMatchStrategy(lambda arrays, rnd: arrays, max_failed_fraction=0.25, **kwargs)
    with pytest.raises(RoundFailedError, match=r"round 1: 1 of 3 sampled clients failed.*client 2 is broken"):
        strict.start(grid=grid, initial_arrays=ArrayRecord({"w": torch.zeros(3)}), num_rounds=1)
    tolerant = FedOpenMatchStrategy(lambda arrays, rnd: arrays, max_failed_fraction=0.34, **kwargs)
    tolerant.start(grid=grid, initial_arrays=ArrayRecord({"w": torch.zeros(3)}), num_rounds=1)
    assert tolerant.participants == {1: 2}
    with pytest.raises(ValueError, match="max_failed_fraction"):
        FedOpenMatchStrategy(lambda arrays, rnd: arrays, max_failed_fraction=1.0)


def test_labeled_only_strategy_sends_nothing_and_still_updates() -> None:
    grid = InlineGrid(_toy, 2)
    strategy = FedOpenMatchStrategy(
        lambda arrays, rnd: ArrayRecord({"w": arrays.to_torch_state_dict()["w"] + 1}),
        federated=False,
        fraction_evaluate=0.0,
    )
    result = strategy.start(grid=grid, initial_arrays=ArrayRecord({"w": torch.zeros(2)}), num_rounds=3)
    assert torch.equal(result.arrays.to_torch_state_dict()["w"], torch.full((2,), 3.0))
    assert grid.client_seconds == []


def test_client_app_trains_on_its_partition_in_process() -> None:
    from iclr26_federated.methods.fedopenmatch.client_app import app

    params = job_params(PRESETS["smoke"], "fedopenmatch", 0)
    split = load_split(params)
    model = make_model(params, split.in_channels)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    grid = InlineGrid(app, 2)
    content = RecordDict(
        {"arrays": ArrayRecord(model.state_dict()), "config": ConfigRecord({**params.to_record(), "server-round": 1})}
    )
    (reply,) = grid.send_and_receive([Message(content, 2, MessageType.TRAIN)])
    assert not reply.has_error(), reply.error.reason if reply.has_error() else ""
    assert reply.content["metrics"]["num-examples"] == len(client_partition(params, 1))
    after = reply.content.array_records["arrays"].to_torch_state_dict()
    assert set(after) == set(before)
    assert any(not torch.equal(after[k], before[k]) for k in before)


def test_smoke_cli_with_a_failing_client_finishes_and_reports(tmp_path, capfd) -> None:
    res = run_cli(
        cli.main,
        [
            "fedopenmatch",
            "--preset",
            "smoke",
            "--device",
            "cpu",
            "--out-dir",
            str(tmp_path),
            "--quiet",
            "--fail-client",
            "1",
        ],
    )
    assert res.code == 0, res.err
    (run_dir,) = (tmp_path / "fedopenmatch").iterdir()
    results = assert_valid_run_dir(run_dir)
    assert set(results["variants"]) == {"fedopenmatch", "labeled-only"}
    fails = results["failures"]
    assert len(fails) == 1 and fails[0]["variant"] == "fedopenmatch" and fails[0]["round"] == 1
    assert "injected failure" in fails[0]["reason"]
    job = next(j for j in results["jobs"] if j["variant"] == "fedopenmatch")
    assert job["participants"] == [1, 2]
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    assert {r["round"] for r in rows} == {0, 1, 2}
    # per-round pseudo-label diagnostics; client ids are not averaged into the round metrics
    assert {"pl_pass_rate", "pl_precision", "pl_conf"} <= set(next(r for r in rows if r["round"] == 1))
    assert all("partition-id" not in m and "pl_pass_rate" in m for m in job["client_metrics"].values())
    # Flower's known noise (strategy banners, the fraction_evaluate warning) is in the run's log only
    assert "fraction_evaluate" in (run_dir / "flower" / "flower.log").read_text()
    assert "fraction_evaluate" not in capfd.readouterr().err + res.err
    assert (run_dir / "figures" / "open_bacc_per_round.png").is_file()
    assert "Client failures (reported, run continued): 1" in (run_dir / "report.md").read_text()
    # --resume of an interrupted run (results.json missing) reuses the checkpointed jobs: nothing reruns
    (run_dir / "results.json").unlink()
    args = ["fedopenmatch", "--preset", "smoke", "--device", "cpu", "--out-dir", str(tmp_path), "--quiet"]
    res = run_cli(cli.main, [*args, "--fail-client", "1", "--resume"])
    assert res.code == 0, res.err
    again = assert_valid_run_dir(run_dir)
    assert again["jobs"] == results["jobs"]
    assert len((run_dir / "metrics.jsonl").read_text().splitlines()) == len(rows)


def test_bad_cli_config_exits_2_with_one_line(tmp_path) -> None:
    res = run_cli(cli.main, ["fedopenmatch", "--preset", "smoke", "--tau-neg", "0.99", "--out-dir", str(tmp_path)])
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "tau_neg" in res.err


def test_strategy_gives_up_when_too_few_nodes_connect() -> None:
    strategy = FedOpenMatchStrategy(lambda a, r: a, node_wait_s=0.2, min_available_nodes=3, fraction_evaluate=0.0)
    with pytest.raises(RuntimeError, match="only 2 of 3 client nodes"):
        strategy.start(grid=InlineGrid(_toy, 2), initial_arrays=ArrayRecord({"w": torch.zeros(1)}), num_rounds=1)


@pytest.mark.parametrize(
    ("node_config", "expected"),
    [
        ({"partition-id": 5, "num-partitions": 2}, "partition-id = 5 is outside [0, 2)"),
        ({"partition-id": 1, "num-partitions": 4}, "num-partitions = 4 but this run has 2 clients"),
        ({"partition-id": "x"}, "partition-id = 'x': expected an integer"),
        ({"num-partitions": 2}, "has no 'partition-id'"),
    ],
)
def test_a_supernode_with_a_bad_partition_is_a_clear_client_failure(node_config, expected) -> None:
    from iclr26_federated.methods.fedopenmatch.client_app import app

    params = job_params(PRESETS["smoke"], "fedopenmatch", 0)
    assert params.num_clients == 2
    model = make_model(params, load_split(params).in_channels)
    grid = InlineGrid(app, 1)
    grid._contexts[1].node_config.clear()
    grid._contexts[1].node_config.update(node_config)
    content = RecordDict(
        {"arrays": ArrayRecord(model.state_dict()), "config": ConfigRecord({**params.to_record(), "server-round": 1})}
    )
    (reply,) = grid.send_and_receive([Message(content, 1, MessageType.TRAIN)])
    assert reply.has_error()
    reason = str(reply.error.reason)
    assert expected in reason and "--node-config 'partition-id=<0..1> num-partitions=2'" in reason


def _reply(pid: int, node_id: int, w: torch.Tensor, n: float) -> Message:
    instruction = Message(RecordDict(), dst_node_id=node_id, message_type=MessageType.TRAIN)
    content = RecordDict(
        {
            "arrays": ArrayRecord({"w": w}),
            "metrics": MetricRecord({"num-examples": n}),
            "client": ConfigRecord({"partition-id": pid}),
        }
    )
    return Message(content, reply_to=instruction)


def test_aggregation_does_not_depend_on_the_order_replies_arrive_in() -> None:
    # float32 sums of these updates change with the summation order; the simulation engine's arrival
    # order changes from run to run, so the strategy must sum in partition order
    InlineGrid(_toy, 1)  # sets the task identity Flower stamps on new messages (as its runtimes do)
    gen = torch.Generator().manual_seed(0)
    ws = [torch.randn(4096, generator=gen) * 10.0**k for k in (4, 0, -4, 2)]
    ns = [7.0, 3.0, 11.0, 5.0]
    node_ids = [912_345, 17, 40_000_001, 5_555]  # random per run in Flower: not a usable order
    replies = [_reply(pid, node_ids[pid], ws[pid], ns[pid]) for pid in range(4)]

    def aggregate(order: list[int]) -> torch.Tensor:
        strategy = FedOpenMatchStrategy(lambda arrays, rnd: arrays, fraction_evaluate=0.0)
        strategy._current = ArrayRecord({"w": torch.zeros(4096)})
        arrays, _ = strategy.aggregate_train(1, [replies[i] for i in order])
        assert arrays is not None
        return arrays.to_torch_state_dict()["w"]

    first = aggregate([0, 1, 2, 3])
    for order in ([3, 2, 1, 0], [2, 0, 3, 1], [1, 3, 0, 2]):
        assert torch.equal(aggregate(order), first)
    # the premise: summing in another order really gives other float32 bits
    weights = [n / sum(ns) for n in ns]

    def summed(order: tuple[int, ...]) -> torch.Tensor:
        total = torch.zeros(4096)
        for i in order:
            total += ws[i] * weights[i]
        return total

    assert not torch.equal(summed((0, 1, 2, 3)), summed((3, 2, 1, 0)))
