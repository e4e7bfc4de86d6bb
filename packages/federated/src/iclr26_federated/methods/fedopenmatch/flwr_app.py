"""The FedOpenMatch Flower app's metadata, shipped with the package: ``flwr run`` from an installed wheel.

``flwr run <app-dir>`` needs an app directory whose ``pyproject.toml`` holds ``[project]`` (name, version)
and ``[tool.flwr.app]`` (publisher, the ServerApp/ClientApp components and the declared run config). The
components are this package's modules (``iclr26_federated.methods.fedopenmatch.server_app:app`` and
``client_app:app``), which Flower imports from the environment it runs in (site-packages of the wheel's
venv, or the workspace's editable install): the app directory needs no source file. So the metadata lives
here, in Python, and :func:`materialize_app` writes it as a one-file app directory wherever it is needed:
``iclr26-federated fedopenmatch --engine ray`` writes it under ``<run>/flower/app/``, and a user writes one
with ``python -m iclr26_federated.methods.fedopenmatch.flwr_app DIR`` and runs ``flwr run DIR local ...``
(simulation or deployment engine, see the README).

The declared run config is generated from the config dataclasses (every :class:`FedOpenMatchConfig` field
in kebab-case with ``""`` = the preset's value, plus the common keys), so it cannot drift from the code; the
checkout's ``packages/federated/pyproject.toml`` repeats the same ``[tool.flwr.app]`` tables for
``flwr run packages/federated`` (a test checks they are equal). ``[project]`` has no ``dependencies``: the
app runs in the environment that has this package installed (Flower's runtime dependency installation,
``uv sync`` of the app's dependencies, is switched off by ``FLWR_DISABLE_RUNTIME_DEPENDENCY_INSTALLATION=1``
and would have nothing to install).

Light module: no torch, no flwr.
"""

from __future__ import annotations

import dataclasses
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import tomli_w

from iclr26_federated.methods.fedopenmatch.config import FedOpenMatchConfig

__all__ = [
    "APP_COMPONENTS",
    "APP_NAME",
    "APP_PUBLISHER",
    "COMMON_RUN_CONFIG_DEFAULTS",
    "app_pyproject",
    "declared_run_config",
    "main",
    "materialize_app",
]

#: ``[project].name`` of the app (the FAB's name: ``iclr26/iclr26-federated``).
APP_NAME = "iclr26-federated"
#: ``[tool.flwr.app].publisher``.
APP_PUBLISHER = "iclr26"
#: ``[tool.flwr.app.components]``: the installed package's ServerApp and ClientApp.
APP_COMPONENTS = {
    "serverapp": "iclr26_federated.methods.fedopenmatch.server_app:app",
    "clientapp": "iclr26_federated.methods.fedopenmatch.client_app:app",
}
#: The run-config keys besides the config fields, with their declared defaults (``utils.RunConfigCommon``).
COMMON_RUN_CONFIG_DEFAULTS: dict[str, Any] = {
    "preset": "smoke",
    "seed": 0,
    "device": "cpu",
    "out-dir": "runs",
    "run-dir": "",
}


def declared_run_config() -> dict[str, Any]:
    """``[tool.flwr.app.config]``: the common keys, then every config field in kebab-case with ``""``."""
    fields = {f.name.replace("_", "-"): "" for f in dataclasses.fields(FedOpenMatchConfig)}
    return {**COMMON_RUN_CONFIG_DEFAULTS, **fields}


def _version() -> str:
    try:
        return metadata.version("iclr26-federated")
    except metadata.PackageNotFoundError:  # imported from a source tree that is not installed
        return "0.0.0"


def app_pyproject() -> dict[str, Any]:
    """The app directory's ``pyproject.toml`` as a dict."""
    return {
        "project": {
            "name": APP_NAME,
            "version": _version(),
            "description": "FedOpenMatch (iclr26-federated) as a Flower app; the code is the installed package",
            "license": "MIT",
            "dependencies": [],
        },
        "tool": {
            "flwr": {
                "app": {
                    "publisher": APP_PUBLISHER,
                    "components": dict(APP_COMPONENTS),
                    "config": declared_run_config(),
                }
            }
        },
    }


def materialize_app(dest: Path) -> Path:
    """Write the app directory ``dest`` (created if needed): one ``pyproject.toml`` that names the installed
    components; returns ``dest``. Writing it again replaces that file (same content for the same version)."""
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "pyproject.toml").write_text(tomli_w.dumps(app_pyproject()), encoding="utf-8")
    return dest


def main(argv: list[str] | None = None) -> int:
    """``python -m iclr26_federated.methods.fedopenmatch.flwr_app DIR``: write the app directory, print it."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: python -m iclr26_federated.methods.fedopenmatch.flwr_app APP_DIR", file=sys.stderr)
        return 2
    print(materialize_app(Path(args[0])).resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
