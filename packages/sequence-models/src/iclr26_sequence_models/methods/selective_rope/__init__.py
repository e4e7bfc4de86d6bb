"""Selective RoPE (Movahedi et al., *Selective Rotary Position Embedding*, ICLR 2026): config, spec,
model builder, tasks, training and claims (public names imported lazily, no torch at import)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_sequence_models.methods.selective_rope.claims import claims, report
    from iclr26_sequence_models.methods.selective_rope.config import PRESETS, SelectiveRopeConfig
    from iclr26_sequence_models.methods.selective_rope.spec import SPEC
    from iclr26_sequence_models.methods.selective_rope.train import run

_EXPORTS: dict[str, str] = {
    "SPEC": "iclr26_sequence_models.methods.selective_rope.spec",
    "PRESETS": "iclr26_sequence_models.methods.selective_rope.config",
    "SelectiveRopeConfig": "iclr26_sequence_models.methods.selective_rope.config",
    "run": "iclr26_sequence_models.methods.selective_rope.train",
    "claims": "iclr26_sequence_models.methods.selective_rope.claims",
    "report": "iclr26_sequence_models.methods.selective_rope.claims",
}

__all__ = ["PRESETS", "SPEC", "SelectiveRopeConfig", "claims", "report", "run"]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
