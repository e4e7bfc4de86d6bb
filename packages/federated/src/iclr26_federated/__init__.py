"""iclr26 federated: FedOpenMatch as a Flower app on Flower's simulation engine.

Light at import time (``iclr26 list`` imports every domain): the names below load lazily (PEP 562); the
Flower app modules are imported on demand, e.g.
``from iclr26_federated.methods.fedopenmatch import client_app, server_app, strategy``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

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

_WHERE = dict.fromkeys(__all__, "iclr26_federated.methods.fedopenmatch")
__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
