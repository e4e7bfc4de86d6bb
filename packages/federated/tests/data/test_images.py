"""Image-set names: offline defaults load; the opt-in CIFAR-100 reader validates its files."""

import numpy as np
import pytest

from iclr26_federated.data.images import load_cifar100, load_images
from iclr26_shared.errors import DataError


def test_unknown_name_and_missing_cifar100_give_clear_errors(tmp_path, monkeypatch) -> None:
    with pytest.raises(DataError, match="unknown data set 'svhn'"):
        load_images("svhn")
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    with pytest.raises(DataError, match="cifar-100-binary"):
        load_images("cifar100")


def test_cifar100_binary_reader(tmp_path, monkeypatch) -> None:
    folder = tmp_path / "cifar-100-binary"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for name, n in (("train.bin", 4), ("test.bin", 2)):
        rec = np.zeros((n, 3074), dtype=np.uint8)
        rec[:, 0] = 3  # coarse label (ignored)
        rec[:, 1] = np.arange(n) * 30  # fine labels 0, 30, 60, 90
        rec[:, 2:] = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
        rec.tofile(folder / name)
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    data = load_cifar100()
    assert data.x_train.shape == (4, 32, 32, 3) and data.y_train.tolist() == [0, 30, 60, 90]
    assert data.num_classes == 100
    (folder / "test.bin").write_bytes(b"\x00" * 100)
    with pytest.raises(DataError, match="multiple of 3074"):
        load_cifar100()
