"""Open-set federated splits: Flower Datasets' Dirichlet partitioner, known/unknown mix, seeding."""

from typing import Any

import numpy as np
import pytest

from iclr26_federated.data.partition import dirichlet_partition, make_open_set_split
from iclr26_shared.data import ImageDataset
from iclr26_shared.errors import ConfigError


def _images(n_per_class: int = 60, classes: int = 8) -> ImageDataset:
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(classes), n_per_class)
    x = rng.integers(0, 256, (len(y), 6, 6), dtype=np.uint8)
    yt = np.repeat(np.arange(classes), 10)
    xt = rng.integers(0, 256, (len(yt), 6, 6), dtype=np.uint8)
    return ImageDataset("toy", x, y.astype(np.int64), xt, yt.astype(np.int64), tuple(map(str, range(classes))))


def test_dirichlet_partition_disjoint_complete_seeded() -> None:
    labels = np.repeat(np.arange(5), 40)
    parts = dirichlet_partition(labels, 4, 0.3, seed=3, min_partition_size=5)
    flat = np.concatenate(parts)
    assert len(flat) == len(labels) and len(np.unique(flat)) == len(labels)  # disjoint + complete
    assert all(len(p) >= 5 for p in parts)
    again = dirichlet_partition(labels, 4, 0.3, seed=3, min_partition_size=5)
    assert all(np.array_equal(a, b) for a, b in zip(parts, again, strict=True))
    other = dirichlet_partition(labels, 4, 0.3, seed=4, min_partition_size=5)
    assert not all(np.array_equal(a, b) for a, b in zip(parts, other, strict=True))
    # non-IID: at alpha = 0.3 some client's label histogram is far from uniform
    hist = np.stack([np.bincount(labels[p], minlength=5) / len(p) for p in parts])
    assert hist.max() > 0.4


def test_open_set_split_known_unknown_mix() -> None:
    data = _images()
    s = make_open_set_split(
        data, num_known=4, num_unknown=3, labels_per_class=5, num_clients=3, alpha=0.5, seed=1, min_partition_size=5
    )
    assert s.known_classes == (0, 1, 2, 3) and s.unknown_classes == (4, 5, 6)
    assert np.array_equal(np.bincount(s.server_y, minlength=4), [5, 5, 5, 5])
    orig = np.concatenate(s.client_orig)
    # every non-server training image of the 7 used classes goes to exactly one client; class 7 is unused
    assert len(orig) == 7 * 60 - 20
    assert set(np.unique(orig)) == set(range(7))
    assert set(np.unique(np.concatenate(s.client_y))) == {0, 1, 2, 3, 4}  # unknowns mapped to K = 4
    assert set(np.unique(s.test_y)) == {0, 1, 2, 3, 4} and len(s.test_y) == 70
    # server images are not in any client's pool: compare raw bytes
    server_rows = {r.tobytes() for r in s.server_x}
    assert not any(r.tobytes() in server_rows for cx in s.client_x for r in cx)
    same = make_open_set_split(
        data, num_known=4, num_unknown=3, labels_per_class=5, num_clients=3, alpha=0.5, seed=1, min_partition_size=5
    )
    assert np.array_equal(same.server_x, s.server_x)
    assert all(np.array_equal(a, b) for a, b in zip(same.client_x, s.client_x, strict=True))


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"num_known": 1}, "known_classes"),
        ({"num_unknown": 5}, "unknown_classes"),
        ({"labels_per_class": 60}, "labels_per_class"),
        ({"num_clients": 100}, "num_clients"),
    ],
)
def test_bad_split_arguments_name_the_field(kwargs: dict, field: str) -> None:
    base: dict[str, Any] = dict(
        num_known=4, num_unknown=3, labels_per_class=5, num_clients=3, alpha=0.5, seed=1, min_partition_size=5
    )
    base.update(kwargs)
    with pytest.raises(ConfigError, match=field):
        make_open_set_split(_images(), **base)
