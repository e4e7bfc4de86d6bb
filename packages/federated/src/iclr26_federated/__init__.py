"""iclr26 federated: FedOpenMatch as a Flower app on Flower's simulation engine.

Light at import time (``iclr26 list`` imports every domain): the names below load lazily (PEP 562); the
Flower app modules are imported on demand, e.g.
``from iclr26_federated.methods.fedopenmatch import client_app, server_app, strategy``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from iclr26_federated.methods.fedopenmatch import (
        PRESETS,
        SPEC,
        VARIANTS,
        FedOpenMatchConfig,
        JobParams,
        job_params,
    )

__all__ = ["PRESETS", "SPEC", "VARIANTS", "FedOpenMatchConfig", "JobParams", "job_params"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module("iclr26_federated.methods.fedopenmatch"), name)
