"""iclr26 generative-vision: S²-Guidance (DUPA, ELViS, Causal Delta Embeddings to come).

Public API (loaded lazily, so that importing the package does not import diffusers)::

    from iclr26_generative_vision import S2Guidance, guided_sample, ClassConditionalDiT
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "S2Guidance": "iclr26_generative_vision.guidance.s2",
    "BlockMaskSampler": "iclr26_generative_vision.guidance.masks",
    "guided_sample": "iclr26_generative_vision.guidance.sampler",
    "make_guider": "iclr26_generative_vision.guidance.factory",
    "GuiderSettings": "iclr26_generative_vision.guidance.factory",
    "register_skippable_block": "iclr26_generative_vision.guidance.blocks",
    "ClassConditionalDiT": "iclr26_generative_vision.nn.dit",
    "ResidualMLPDenoiser": "iclr26_generative_vision.nn.resmlp",
    "GaussianMixture": "iclr26_generative_vision.data.gmm",
    "ExactGMMDenoiser": "iclr26_generative_vision.data.gmm",
    "toy_mixture": "iclr26_generative_vision.data.gmm",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'iclr26_generative_vision' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
