"""FedOpenMatch as a Flower app (``client_app.py``, ``server_app.py``, ``strategy.py``, ``model.py``,
``dataset.py``, ``utils.py``) plus the workspace contract (``config.py``, ``train.py``, ``claims.py``).

Only the light modules are imported here; the Flower/torch modules load on first use.
"""

from iclr26_federated.methods.fedopenmatch.config import PRESETS, VARIANTS, FedOpenMatchConfig, JobParams, job_params
from iclr26_federated.methods.fedopenmatch.spec import SPEC

__all__ = ["PRESETS", "SPEC", "VARIANTS", "FedOpenMatchConfig", "JobParams", "job_params"]
