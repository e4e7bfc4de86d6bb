"""A user's own data reaches the ClientApps through Flower's config as a file path (run config
``data-file``, a SuperNode's node config ``data-file``), never as a Python object in one process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from flwr.app import ArrayRecord, ConfigRecord, Message, MessageType, RecordDict

from iclr26_federated import cli
from iclr26_federated.methods.fedopenmatch import save_data, save_node_data
from iclr26_federated.methods.fedopenmatch.config import job_params
from iclr26_federated.methods.fedopenmatch.dataset import client_data, load_split
from iclr26_federated.methods.fedopenmatch.model import make_model
from iclr26_federated.methods.fedopenmatch.utils import InlineGrid, config_from_run_config
from iclr26_shared.errors import ConfigError, DataError
from iclr26_shared.testing import assert_valid_run_dir, run_cli

K = 3


def _data(rng: np.random.Generator) -> dict[str, Any]:
    """Random 8x8 grey images for the server and the test set; client i's images are all filled with the
    value 10 * (i + 1), so where an image came from is visible in its pixels."""

    def imgs(n: int, value: int | None = None) -> np.ndarray:
        if value is not None:
            return np.full((n, 8, 8), value, dtype=np.uint8)
        return rng.integers(0, 256, (n, 8, 8), dtype=np.uint8)

    return {
        "server": (imgs(3 * K), np.repeat(np.arange(K), 3)),
        "clients": [imgs(7, 10), imgs(11, 20)],
        "test": (imgs(12), np.arange(12) % (K + 1)),
    }


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    d = _data(np.random.default_rng(0))
    return save_data(tmp_path / "mine.data", d["server"], d["clients"], d["test"], num_known=K)


def _params(run_config: dict[str, Any]) -> Any:
    """The job the ServerApp builds from Flower's run config (as ``flwr run --run-config`` delivers it)."""
    cfg, _ = config_from_run_config({"preset": "smoke", **run_config})
    return job_params(cfg, "fedopenmatch", 0)


def _train_reply(params: Any, node_config: dict[str, Any] | None = None) -> Message:
    """One train message to the ClientApp on node 2 (``partition-id`` 1), through the in-process Grid."""
    from iclr26_federated.methods.fedopenmatch.client_app import app

    model = make_model(params, 1)
    grid = InlineGrid(app, 2)
    grid._contexts[2].node_config.update(node_config or {})
    content = RecordDict(
        {"arrays": ArrayRecord(model.state_dict()), "config": ConfigRecord({**params.to_record(), "server-round": 1})}
    )
    (reply,) = grid.send_and_receive([Message(content, 2, MessageType.TRAIN)])
    return reply


def test_the_data_file_of_the_run_config_is_what_the_client_app_trains_on(data_file: Path) -> None:
    params = _params({"data-file": str(data_file), "known-classes": K})
    # the server's side: the file's labelled and test sets
    split = load_split(params)
    d = _data(np.random.default_rng(0))
    assert np.array_equal(split.server_x, d["server"][0]) and np.array_equal(split.test_y, d["test"][1])
    # each client's side: its own block of the file, cut by Flower Datasets' SizePartitioner
    for pid, expected in enumerate(d["clients"]):
        got = client_data(params, pid)
        assert np.array_equal(got.images, expected) and got.labels is None
    reply = _train_reply(params)
    assert not reply.has_error(), reply.error.reason if reply.has_error() else ""
    assert reply.content["metrics"]["num-examples"] == 11  # client 1's 11 images, not the built-in split's


def test_a_supernode_s_own_data_file_in_its_node_config_replaces_the_run_s(data_file: Path, tmp_path: Path) -> None:
    node_file = save_node_data(tmp_path / "node1.npz", np.full((5, 8, 8), 99, dtype=np.uint8))
    params = _params({"data-file": str(data_file), "known-classes": K})
    got = client_data(params, 1, {"partition-id": 1, "data-file": str(node_file)})
    assert got.images.shape == (5, 8, 8) and (got.images == 99).all()
    reply = _train_reply(params, {"data-file": str(node_file)})
    assert not reply.has_error(), reply.error.reason if reply.has_error() else ""
    assert reply.content["metrics"]["num-examples"] == 5
    # a node file that is absent is that client's failure, in one line naming the node-config key
    reply = _train_reply(params, {"data-file": str(tmp_path / "absent.npz")})
    assert reply.has_error() and "node-config data-file" in str(reply.error.reason)


def test_a_data_file_without_client_sizes_is_split_iid_by_flower_datasets(tmp_path: Path) -> None:
    d = _data(np.random.default_rng(1))
    pool = np.concatenate(d["clients"])
    path = tmp_path / "pool.npz"
    np.savez(path, num_known=K, server_x=d["server"][0], server_y=d["server"][1], test_x=d["test"][0],
             test_y=d["test"][1], unlabelled=pool)  # fmt: skip
    params = _params({"data-file": str(path), "known-classes": K})
    parts = [client_data(params, pid).images for pid in range(2)]
    assert [len(p) for p in parts] == [9, 9]
    assert np.array_equal(np.concatenate(parts), pool)  # IidPartitioner: disjoint and complete


def test_bad_data_files_are_one_line_errors_naming_the_field(data_file: Path, tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"data_file = '.*absent.npz': no such file"):
        load_split(_params({"data-file": str(tmp_path / "absent.npz"), "known-classes": K}))
    with pytest.raises(ConfigError, match=r"'known_classes' = 6: expected 3, the num_known of data_file"):
        load_split(_params({"data-file": str(data_file)}))
    with pytest.raises(ConfigError, match=r"'num_clients' = 4: expected 2, the clients of data_file"):
        load_split(_params({"data-file": str(data_file), "known-classes": K, "num-clients": 4}))
    (tmp_path / "junk.npz").write_text("not a zip")
    with pytest.raises(DataError, match="not a readable .npz data file"):
        load_split(_params({"data-file": str(tmp_path / "junk.npz"), "known-classes": K}))
    with pytest.raises(ValueError, match="every client needs at least one image"):
        d = _data(np.random.default_rng(0))
        save_data(tmp_path / "x.npz", d["server"], [d["clients"][0], d["clients"][0][:0]], d["test"], num_known=K)


def test_the_cli_runs_on_a_data_file(data_file: Path, tmp_path: Path) -> None:
    base = ["fedopenmatch", "--preset", "smoke", "--device", "cpu", "--out-dir", str(tmp_path / "runs"), "--quiet"]
    res = run_cli(cli.main, [*base, "--data-file", str(data_file), "--known-classes", "3"])
    assert res.code == 0, res.err
    (run_dir,) = (tmp_path / "runs" / "fedopenmatch").iterdir()
    results = assert_valid_run_dir(run_dir)
    assert results["test_class_counts"] == [3, 3, 3, 3]  # the file's 12 test images, K + 1 classes
    job = next(j for j in results["jobs"] if j["variant"] == "fedopenmatch")
    assert job["participants"] == [2, 2] and not results["failures"]
    res = run_cli(cli.main, [*base, "--data-file", str(tmp_path / "absent.npz"), "--known-classes", "3"])
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "data_file" in res.err
