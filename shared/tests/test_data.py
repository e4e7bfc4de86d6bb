"""Named data sets and the shared image sets: real offline defaults, opt-in sets, clear errors."""

import gzip
from pathlib import Path

import numpy as np
import pytest

from iclr26_shared import data
from iclr26_shared.errors import DataError


def _write_idx(path: Path, arr: np.ndarray) -> None:
    header = bytes([0, 0, 8, arr.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
    with gzip.open(path, "wb") as fh:
        fh.write(header + arr.astype(np.uint8).tobytes())


def test_digits_ship_offline_with_a_stratified_split() -> None:
    ds = data.load_dataset("digits")
    assert ds.image_shape == (8, 8) and ds.num_classes == 10
    assert len(ds.x_train) + len(ds.x_test) == 1797
    assert ds.x_train.dtype == np.uint8 and ds.x_train.max() == 255
    assert set(np.bincount(ds.y_test)) <= {35, 36, 37, 38}  # about 20% of each class


def test_mnist_5k_ships_offline() -> None:
    ds = data.load_image_dataset("mnist-5k")
    assert ds.image_shape == (28, 28)
    assert len(ds.x_train) == 4000 and len(ds.x_test) == 1000
    assert np.bincount(ds.y_train).tolist() == [400] * 10
    small = ds.subset(n_train=50, n_test=20, seed=1)
    assert len(small.x_train) == 50 and np.bincount(small.y_train).tolist() == [5] * 10


def test_fashion_mnist_is_opt_in_with_a_clear_offline_message(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    monkeypatch.setattr(data, "FASHION_MNIST_DEBIAN", tmp_path / "absent")
    with pytest.raises(DataError, match="apt-get install dataset-fashion-mnist") as err:
        data.load_image_dataset("fashion-mnist")
    assert str(err.value).count(str(tmp_path / "fashion-mnist")) == 1  # $ICLR26_DATA is also the cache
    with pytest.raises(DataError) as checked:  # the same message, without reading anything
        data.check_dataset("fashion-mnist")
    assert str(checked.value) == str(err.value)
    root = tmp_path / "fashion-mnist"
    root.mkdir()
    rng = np.random.default_rng(0)
    _write_idx(root / "train-images-idx3-ubyte.gz", rng.integers(0, 256, (20, 28, 28)))
    _write_idx(root / "train-labels-idx1-ubyte.gz", np.arange(20) % 10)
    _write_idx(root / "t10k-images-idx3-ubyte.gz", rng.integers(0, 256, (10, 28, 28)))
    _write_idx(root / "t10k-labels-idx1-ubyte.gz", np.arange(10))
    data.check_dataset("fashion-mnist")  # now present: no error
    ds = data.load_image_dataset("fashion-mnist")
    assert ds.x_train.shape == (20, 28, 28) and ds.classes[0] == "T-shirt/top"
    _write_idx(root / "t10k-labels-idx1-ubyte.gz", np.full(10, 12))
    with pytest.raises(DataError, match=r"labels must lie in \[0, 10\)"):
        data.load_image_dataset("fashion-mnist")


def test_read_idx_rejects_bad_files(tmp_path: Path) -> None:
    bad = tmp_path / "x.idx"
    bad.write_bytes(b"\x00\x00\x09\x01" + (3).to_bytes(4, "big") + b"abc")
    with pytest.raises(DataError, match="x.idx: not an unsigned-byte IDX"):
        data.read_idx(bad)
    bad.write_bytes(b"\x00\x00\x08\x01" + (5).to_bytes(4, "big") + b"abc")
    with pytest.raises(DataError, match="header says"):
        data.read_idx(bad)
    bad.write_bytes(b"\x00\x00\x08\x03" + (5).to_bytes(4, "big"))
    with pytest.raises(DataError, match="header of 3 dimensions needs 16 bytes"):
        data.read_idx(str(bad))


def test_read_idx_names_a_bad_gzip_file_in_one_line(tmp_path: Path) -> None:
    import gzip
    import zlib

    good = gzip.compress(b"\x00\x00\x08\x01" + (3).to_bytes(4, "big") + b"abc")
    gz = tmp_path / "labels-idx1-ubyte.gz"
    gz.write_bytes(good)
    assert data.read_idx(gz).tolist() == [97, 98, 99]
    body = bytearray(good)
    body[12:16] = b"\xff\xff\xff\xff"  # corrupt deflate data behind a valid gzip header
    cases = {
        "junk (not gzip)": b"this is not gzip at all",
        "corrupt deflate": bytes(body),
        "cut off": good[:-10],
        "empty": b"",
    }
    for name, blob in cases.items():
        gz.write_bytes(blob)
        if name == "corrupt deflate":  # the case that used to escape as zlib.error
            with pytest.raises(zlib.error):
                gzip.decompress(blob)
        with pytest.raises(DataError) as err:
            data.read_idx(gz)
        msg = str(err.value)
        assert msg.startswith(f"{gz}: ") and "\n" not in msg, (name, msg)
    with pytest.raises(DataError, match="cannot read IDX file"):
        data.read_idx(tmp_path / "missing.gz")


def test_cifar10_is_opt_in_and_validates_batches(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    with pytest.raises(DataError, match="CIFAR-10 not found"):
        data.load_image_dataset("cifar10")
    root = tmp_path / "cifar-10-batches-bin"
    root.mkdir()
    rec = np.zeros((4, 3073), np.uint8)
    rec[:, 0] = [0, 1, 2, 3]
    for n in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
        rec.tofile(root / n)
    ds = data.load_image_dataset("cifar10")
    assert ds.x_train.shape == (20, 32, 32, 3) and ds.y_test.tolist() == [0, 1, 2, 3]
    (root / "test_batch.bin").write_bytes(b"\x00" * 100)
    with pytest.raises(DataError, match="test_batch.bin: size 100"):
        data.load_image_dataset("cifar10")


def test_registry_and_package_lookup() -> None:
    assert {"digits", "mnist-5k", "fashion-mnist", "cifar10"} <= set(data.available_datasets())
    assert data.available_datasets()["digits"].offline and not data.available_datasets()["cifar10"].offline
    with pytest.raises(DataError, match="unknown data set 'nope'"):
        data.load_dataset("nope")
    with pytest.raises(DataError, match="'no_such_pkg_xyz' is not installed"):
        data.package_dir("no_such_pkg_xyz")
    with pytest.raises(DataError, match="missing from the installed package"):
        data.package_dir("numpy", "no-such-file")
    with pytest.raises(ValueError, match="already registered"):
        data.register_dataset("digits", lambda: None, description="x", offline=True)


def test_download_failure_names_the_hint(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="do this instead"):
        data.download("http://127.0.0.1:9/none", tmp_path / "f", what="X", hint="do this instead", timeout=2)


def test_fake_image_dataset_is_valid_and_separable() -> None:
    from iclr26_shared.testing import fake_image_dataset

    ds = fake_image_dataset(n_train=16, n_test=8, shape=(8, 8), num_classes=4)
    assert ds.x_train.shape == (16, 8, 8) and ds.num_classes == 4
    means = [ds.x_train[ds.y_train == c][:, 2 * c : 2 * c + 2].mean() for c in range(4)]
    others = [ds.x_train[ds.y_train != c][:, 2 * c : 2 * c + 2].mean() for c in range(4)]
    assert all(m > o + 100 for m, o in zip(means, others, strict=True))


def test_cifar100_binary_reader(tmp_path: Path, monkeypatch) -> None:
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
    ds = data.load_cifar100()
    assert ds.x_train.shape == (4, 32, 32, 3) and ds.y_train.tolist() == [0, 30, 60, 90]
    assert ds.num_classes == 100
    (folder / "test.bin").write_bytes(b"\x00" * 100)
    with pytest.raises(DataError, match="multiple of 3074"):
        data.load_cifar100()


def test_one_registry_serves_image_sets_and_image_tensors() -> None:
    from iclr26_shared.data import available_datasets
    from iclr26_shared.images import load_image_tensors

    images = available_datasets("image")
    assert {"digits", "mnist-5k", "fashion-mnist", "cifar10", "cifar100"} <= set(images)
    assert images["digits"].offline and not images["cifar10"].offline
    sym = load_image_tensors("digits", n_train=100, n_test=50, scale="symmetric")
    assert sym.x_train.shape == (100, 1, 8, 8) and sym.x_test.shape == (50, 1, 8, 8)
    assert float(sym.x_train.min()) >= -1.0 and float(sym.x_train.max()) <= 1.0 and sym.size == 8
    std = load_image_tensors("digits", n_train=100, n_test=50)
    assert abs(float(std.x_train.mean())) < 1e-4 and std.image_shape == (1, 8, 8) and std.num_classes == 10


def test_check_dataset_names_what_is_missing_for_every_opt_in_set(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    data.check_dataset("digits")  # offline defaults have nothing to check
    data.check_dataset("mnist-5k")
    for name, words in (("cifar10", "CIFAR-10 not found"), ("cifar100", "CIFAR-100 not found")):
        with pytest.raises(DataError, match=words):
            data.check_dataset(name)
    with pytest.raises(DataError, match="unknown data set 'imagenet'; known: .*cifar10"):
        data.check_dataset("imagenet")
    (tmp_path / "cifar-100-binary").mkdir()
    for f in ("train.bin", "test.bin"):
        (tmp_path / "cifar-100-binary" / f).write_bytes(b"")
    data.check_dataset("cifar100")
