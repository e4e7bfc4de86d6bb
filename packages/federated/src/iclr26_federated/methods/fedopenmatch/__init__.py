"""FedOpenMatch (open-set semi-supervised FL, label-at-server; OpenReview 5UrPAW3uI1) as a Flower app.

The Flower app files (``client_app.py``, ``server_app.py``, ``strategy.py``) and the torch modules load on
first use; this package exposes only the light names, lazily (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_federated.methods.fedopenmatch.api import FitResult, fit, save_data, save_node_data
    from iclr26_federated.methods.fedopenmatch.config import (
        PRESETS,
        VARIANTS,
        FedOpenMatchConfig,
        JobParams,
        job_params,
    )
    from iclr26_federated.methods.fedopenmatch.spec import SPEC

__all__ = [
    "PRESETS",
    "SPEC",
    "VARIANTS",
    "FedOpenMatchConfig",
    "FitResult",
    "JobParams",
    "fit",
    "job_params",
    "save_data",
    "save_node_data",
]

_WHERE = {name: "config" for name in ("PRESETS", "VARIANTS", "FedOpenMatchConfig", "JobParams", "job_params")}
_WHERE["SPEC"] = "spec"
_WHERE |= {"fit": "api", "FitResult": "api", "save_data": "api", "save_node_data": "api"}

__getattr__, __dir__ = lazy_exports(__name__, {k: f"{__name__}.{v}" for k, v in _WHERE.items()}, __all__)
