"""Guiders by name, for experiments that compare them at the same CFG scale ``λ``.

* ``cond``: conditional model only (diffusers ``ClassifierFreeGuidance`` with λ = 1, one pass);
* ``cfg``: classifier-free guidance, Eq. 1 (``ClassifierFreeGuidance``);
* ``s2``: S²-Guidance, Eq. 4 (:class:`S2Guidance`, one random mask per step);
* ``naive-s2``: naive S², Eq. 3 (:class:`S2Guidance` with ``num_subnetworks = N``);
* ``slg``: diffusers ``SkipLayerGuidance`` with fixed layers and scale ω on the S² interval;
* ``autoguidance``: diffusers ``AutoGuidance`` (its "bad model" is the unconditional branch with the same
  fixed layers dropped: ``D̃ = D_weak + λ(D_c − D_weak)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from diffusers.guiders.auto_guidance import AutoGuidance
from diffusers.guiders.classifier_free_guidance import ClassifierFreeGuidance
from diffusers.guiders.guider_utils import BaseGuidance
from diffusers.guiders.skip_layer_guidance import SkipLayerGuidance

from iclr26_generative_vision.guidance.s2 import Formulation, S2Guidance
from iclr26_shared.errors import ConfigError

__all__ = ["GUIDER_NAMES", "GuiderSettings", "make_guider"]

GUIDER_NAMES = ("cond", "cfg", "s2", "naive-s2", "slg", "autoguidance")


@dataclass(frozen=True)
class GuiderSettings:
    """Shared settings of the compared guiders (see :class:`S2Guidance` for the meaning of each)."""

    guidance_scale: float = 7.5
    s2_scale: float = 0.25
    drop_ratio: float = 0.1
    s2_start: float = 0.1
    s2_stop: float = 0.9
    exclude_blocks: tuple[int, ...] = (0,)
    naive_n: int = 4
    formulation: Formulation = "eq4"
    fixed_blocks: tuple[int, ...] | None = None
    seed: int = 0


def default_fixed_blocks(num_blocks: int) -> list[int]:
    """Layers dropped by the fixed-layer baselines (SLG, AutoGuidance) when none are given: the middle one."""
    return [num_blocks // 2]


def make_guider(name: str, settings: GuiderSettings, num_blocks: int, fqn: str = "auto") -> BaseGuidance:
    """A fresh guider ``name`` (one of :data:`GUIDER_NAMES`) for a denoiser with ``num_blocks`` blocks."""
    fixed: Sequence[int] = settings.fixed_blocks or default_fixed_blocks(num_blocks)
    s = settings
    if name == "cond":
        return ClassifierFreeGuidance(guidance_scale=1.0)
    if name == "cfg":
        return ClassifierFreeGuidance(guidance_scale=s.guidance_scale)
    if name in ("s2", "naive-s2"):
        return S2Guidance(
            guidance_scale=s.guidance_scale,
            s2_scale=s.s2_scale,
            drop_ratio=s.drop_ratio,
            s2_start=s.s2_start,
            s2_stop=s.s2_stop,
            exclude_blocks=list(s.exclude_blocks),
            num_subnetworks=1 if name == "s2" else s.naive_n,
            fqn=fqn,
            formulation=s.formulation,
            seed=s.seed,
        )
    if name == "slg":
        return SkipLayerGuidance(
            guidance_scale=s.guidance_scale,
            skip_layer_guidance_scale=s.s2_scale,
            skip_layer_guidance_start=s.s2_start,
            skip_layer_guidance_stop=s.s2_stop,
            # diffusers 0.42.1 builds LayerSkipConfig(int) from `skip_layer_guidance_layers` and then fails on
            # len(int); a config dict with the index list works.
            skip_layer_config={"indices": list(fixed), "fqn": fqn},
        )
    if name == "autoguidance":
        config = {"indices": list(fixed), "fqn": fqn, "dropout": 1.0}  # same diffusers 0.42.1 bug as above
        return AutoGuidance(guidance_scale=s.guidance_scale, auto_guidance_config=config)
    raise ConfigError("guiders", name, "one of " + ", ".join(GUIDER_NAMES))
