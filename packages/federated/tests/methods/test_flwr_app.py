"""The packaged Flower app: the app directory ``flwr run`` gets from an installed wheel (no source tree).

The ``flwr run`` runs on it (simulation: ``test_flwr_run.py``, ``test_simulation.py``; deployment:
``test_deployment.py``, all ``-m slow``) use this same directory: :func:`~.utils.flwr_run` writes it by
default. Here, fast: what it holds, and that Flower's own loaders accept it and find the installed
components through it.
"""

from __future__ import annotations

import tomllib
import zipfile
from io import BytesIO
from pathlib import Path

import pytest

from iclr26_federated.methods.fedopenmatch.flwr_app import (
    APP_COMPONENTS,
    COMMON_RUN_CONFIG_DEFAULTS,
    app_pyproject,
    declared_run_config,
    main,
    materialize_app,
)

PACKAGE = Path(__file__).resolve().parents[2]  # packages/federated
CHECKOUT = PACKAGE.parents[1]


# flwr 1.42's FAB builder uses pathspec's deprecated "gitwildmatch" (library noise)
@pytest.mark.filterwarnings("ignore:GitWildMatchPattern:DeprecationWarning")
def test_the_app_dir_is_one_pyproject_naming_the_installed_components(tmp_path: Path) -> None:
    from flwr.cli.build import build_fab_from_disk
    from flwr.cli.config_utils import load_and_validate
    from flwr.supercore.object_ref import load_app

    from iclr26_federated.methods.fedopenmatch import client_app, server_app

    app = materialize_app(tmp_path / "app")
    assert sorted(p.name for p in app.iterdir()) == ["pyproject.toml"]
    text = (app / "pyproject.toml").read_text()
    # nothing in it points into the checkout (or anywhere on disk): a wheel's user has no source tree
    assert str(CHECKOUT) not in text and str(PACKAGE) not in text and "/" not in text
    data = tomllib.loads(text)
    assert data["tool"]["flwr"]["app"]["components"] == APP_COMPONENTS
    assert "dependencies" in data["project"] and not data["project"]["dependencies"]
    # Flower's own checks, as `flwr run` makes them (check_module: the components import from here)
    config, _ = load_and_validate(app / "pyproject.toml", check_module=True)
    assert config["tool"]["flwr"]["app"]["config"] == declared_run_config()
    fab = build_fab_from_disk(app)
    with zipfile.ZipFile(BytesIO(fab)) as z:
        assert sorted(z.namelist()) == [".info/CONTENT", "pyproject.toml"]  # no code travels: it is installed
    # what the SuperLink's and SuperNode's runtimes do with the installed FAB directory
    assert load_app(APP_COMPONENTS["serverapp"], ValueError, app) is server_app.app
    assert load_app(APP_COMPONENTS["clientapp"], ValueError, app) is client_app.app
    # writing it again is harmless (the CLI writes it into every run)
    assert materialize_app(app) == app and (app / "pyproject.toml").read_text() == text


def test_the_checkout_pyproject_repeats_the_packaged_app_tables() -> None:
    """``flwr run packages/federated`` (the README's checkout usage) runs the same app with the same keys."""
    from iclr26_federated.methods.fedopenmatch.utils import COMMON_RUN_CONFIG

    checkout = tomllib.loads((PACKAGE / "pyproject.toml").read_text())
    assert checkout["tool"]["flwr"]["app"] == app_pyproject()["tool"]["flwr"]["app"]
    assert list(checkout["tool"]["flwr"]["app"]["config"]) == list(declared_run_config())  # same order too
    assert tuple(COMMON_RUN_CONFIG_DEFAULTS) == COMMON_RUN_CONFIG
    assert app_pyproject()["project"]["name"] == checkout["project"]["name"]


def test_python_m_flwr_app_writes_the_app_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "my-app")]) == 0
    assert capsys.readouterr().out.strip() == str((tmp_path / "my-app").resolve())
    assert (tmp_path / "my-app" / "pyproject.toml").is_file()
    assert main([]) == 2 and "usage:" in capsys.readouterr().err
