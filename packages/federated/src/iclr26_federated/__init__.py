"""iclr26 federated: FedOpenMatch as a Flower app on Flower's simulation engine.

Light at import time (``iclr26 list`` imports every domain): the config, presets and MethodSpec load
here; the Flower app modules are imported on demand, e.g.
``from iclr26_federated.methods.fedopenmatch import client_app, server_app, strategy``.
"""

from iclr26_federated.methods.fedopenmatch import PRESETS, SPEC, VARIANTS, FedOpenMatchConfig, JobParams, job_params

__all__ = ["PRESETS", "SPEC", "VARIANTS", "FedOpenMatchConfig", "JobParams", "job_params"]
