"""RESTRAIN (Yu et al., *RESTRAIN: From Spurious Votes to Signals — Self-Training RL with Self-Penalization*,
ICLR 2026): config, spec, policy builder, training and claims (public names imported lazily)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_sequence_models.methods.restrain.claims import claims, report
    from iclr26_sequence_models.methods.restrain.config import PRESETS, RestrainConfig, RestrainTrainConfig
    from iclr26_sequence_models.methods.restrain.spec import SPEC
    from iclr26_sequence_models.methods.restrain.train import run, train_label_free

_EXPORTS: dict[str, str] = {
    "train_label_free": "iclr26_sequence_models.methods.restrain.train",
    "SPEC": "iclr26_sequence_models.methods.restrain.spec",
    "PRESETS": "iclr26_sequence_models.methods.restrain.config",
    "RestrainConfig": "iclr26_sequence_models.methods.restrain.config",
    "RestrainTrainConfig": "iclr26_sequence_models.methods.restrain.config",
    "run": "iclr26_sequence_models.methods.restrain.train",
    "claims": "iclr26_sequence_models.methods.restrain.claims",
    "report": "iclr26_sequence_models.methods.restrain.claims",
}

__all__ = ["PRESETS", "SPEC", "RestrainConfig", "RestrainTrainConfig", "claims", "report", "run", "train_label_free"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
