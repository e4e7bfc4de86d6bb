"""S²-Guidance (Stochastic Self-Guidance, arXiv 2508.12880) as a diffusers guider.

Per denoising step ``t`` (Alg. 1)::

    m_t ~ p(m)                                     # fresh random ~10% of the blocks, never block 0
    D_u, D_c, D̂_c = D(x_t|∅), D(x_t|c), D(x_t|c; θ ⊙ m_t)
    D̃ = D_u + λ (D_c − D_u) − ω (D̂_c − D_c)      # Eq. 4 (formulation="eq4", the default)
    x_{t−1} = SchedulerStep(D̃, x_t, t)

``formulation="appendix"`` uses the Bayesian derivation of Appendix A (Eqs. 18–20), ``D̃ = D_u + λ(D_c − D_u) −
ω D̂_c``, which contradicts Eq. 4 / Alg. 1 and is only offered for comparison. ``num_subnetworks = N > 1``
is naive S² (Eq. 3): ``N`` masks per step and ``−(ω/N) Σ_i (D̂_c,m_i − D_c)``, at ``2 + N`` forward passes.
The predictions may live in any space (ε, v or x₀); the guider only combines them. Every prediction is
``[B, ...]``, shaped like the model output.

The guider follows diffusers' guider protocol (diffusers 0.42, marked experimental there): the caller runs
``set_state → prepare_inputs → (prepare_models, denoiser forward, cleanup_models) per batch → __call__``.
The batches are ``[cond, uncond, cond-skip_1 … cond-skip_N]`` (``uncond`` only while CFG is active, the
skip batches only inside the S² interval); the skip batches run the conditional inputs with diffusers'
layer-skip hooks on the drawn blocks, so a dropped block is the identity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

import annotated_types as at
import torch
from diffusers.configuration_utils import register_to_config
from diffusers.guiders.guider_utils import BaseGuidance, GuiderOutput, rescale_noise_cfg
from diffusers.hooks.hooks import HookRegistry
from diffusers.hooks.layer_skip import LayerSkipConfig, _apply_layer_skip_hook

from iclr26_generative_vision.guidance.blocks import find_blocks
from iclr26_generative_vision.guidance.masks import BlockMaskSampler
from iclr26_shared.config import NonNegFloat, PosInt, UnitFloat, validate
from iclr26_shared.errors import ConfigError

if TYPE_CHECKING:
    from diffusers.modular_pipelines.modular_pipeline import BlockState

__all__ = ["FORMULATIONS", "Formulation", "S2Guidance"]

#: ``eq4``: Eq. 4 / Alg. 1 (default); ``appendix``: Appendix A's ``−ω·D̂`` without ``+ω·D_c``.
FORMULATIONS = ("eq4", "appendix")
Formulation = Literal["eq4", "appendix"]

_HOOK_NAME = "S2Guidance_skip"


def _finite(x: float) -> bool:
    """a finite number"""
    return math.isfinite(x)


@dataclass(frozen=True)
class _S2Args:
    """The numeric arguments of :class:`S2Guidance`, validated in one place (``iclr26_shared.config``)."""

    guidance_scale: Annotated[float, at.Predicate(_finite)]
    s2_scale: Annotated[NonNegFloat, at.Predicate(_finite)]
    drop_ratio: Annotated[float, at.Interval(gt=0, lt=1)]
    s2_start: Annotated[float, at.Interval(ge=0, lt=1)]
    s2_stop: UnitFloat
    num_subnetworks: PosInt
    formulation: Formulation
    guidance_rescale: Annotated[NonNegFloat, at.Predicate(_finite)]

    def __post_init__(self) -> None:
        validate(self)
        if self.s2_stop < self.s2_start:
            raise ConfigError("s2_stop", self.s2_stop, f"a number >= s2_start = {self.s2_start:g}")


def _step_range(start: float, stop: float, num_steps: int | None, step: int | None) -> bool:
    """``int(start·n) <= step < int(stop·n)`` (always true before ``set_state``)."""
    if num_steps is None or step is None:
        return True
    return int(start * num_steps) <= step < int(stop * num_steps)


class S2Guidance(BaseGuidance):
    """Stochastic Self-Guidance: CFG minus ``ω`` times the shift of a randomly pruned conditional model.

    Args:
        guidance_scale: CFG scale ``λ`` (diffusers convention: 1.0 disables CFG).
        s2_scale: ``ω`` (paper: 0.25; a larger ω over-corrects, Fig. 7b). 0 turns S² off (plain CFG).
        drop_ratio: Fraction of blocks dropped per mask, in (0, 1) (paper: ~10%, at least one block).
        s2_start: Fraction of the denoising steps after which S² starts (paper: central 80% → 0.1).
        s2_stop: Fraction of the denoising steps after which S² stops (paper: 0.9).
        exclude_blocks: Blocks never dropped (paper: block 0, "structurally critical").
        num_subnetworks: ``N`` masks per step; 1 is S² (Eq. 4), N > 1 naive S² (Eq. 3).
        fixed_blocks: Drop these blocks at every step instead of drawing masks (an ablation; with N = 1 this
            is Skip-Layer Guidance with the same layers).
        fqn: Name of the block stack in the denoiser (``"auto"``: diffusers' discovery).
        formulation: ``"eq4"`` (default) or ``"appendix"`` (see the module docstring).
        seed: Seed of the mask generator (``None``: from torch's global RNG).
        guidance_rescale: diffusers' CFG rescale factor (0 = off, as in the paper).
        use_original_formulation: diffusers' switch: ``D_c + λ(D_c − D_u)`` instead of Eq. 1.
        start: Fraction of steps after which CFG starts (CFG applies at all steps by default).
        stop: Fraction of steps after which CFG stops.
        enabled: diffusers' on/off switch.
    """

    _input_predictions = ["pred_cond", "pred_uncond", "pred_cond_skip"]

    @register_to_config
    def __init__(
        self,
        guidance_scale: float = 7.5,
        s2_scale: float = 0.25,
        drop_ratio: float = 0.1,
        s2_start: float = 0.1,
        s2_stop: float = 0.9,
        exclude_blocks: Sequence[int] = (0,),
        num_subnetworks: int = 1,
        fixed_blocks: Sequence[int] | None = None,
        fqn: str = "auto",
        formulation: Formulation = "eq4",
        seed: int | None = None,
        guidance_rescale: float = 0.0,
        use_original_formulation: bool = False,
        start: float = 0.0,
        stop: float = 1.0,
        enabled: bool = True,
    ) -> None:
        _S2Args(guidance_scale, s2_scale, drop_ratio, s2_start, s2_stop, num_subnetworks, formulation, guidance_rescale)
        if fixed_blocks is not None and len(fixed_blocks) == 0:
            raise ConfigError("fixed_blocks", list(fixed_blocks), "None or a non-empty list of block indices")
        try:
            super().__init__(start, stop, enabled)
        except ValueError as err:
            raise ConfigError("start/stop", (start, stop), f"0 <= start < 1 and start <= stop <= 1 ({err})") from None
        self.guidance_scale = float(guidance_scale)
        self.s2_scale = float(s2_scale)
        self.s2_start = float(s2_start)
        self.s2_stop = float(s2_stop)
        self.num_subnetworks = num_subnetworks
        self.fixed_blocks = None if fixed_blocks is None else tuple(int(b) for b in fixed_blocks)
        self.fqn = fqn
        self.formulation = formulation
        self.guidance_rescale = float(guidance_rescale)
        self.use_original_formulation = use_original_formulation
        self.mask_sampler = BlockMaskSampler(drop_ratio, exclude_blocks, seed)
        self._step_masks: list[tuple[int, ...]] | None = None
        self._hooked = False
        #: ``(step, mask)`` of every mask applied, in order (for inspection and tests).
        self.mask_history: list[tuple[int | None, tuple[int, ...]]] = []

    # ----------------------------------------------------------------------------------------------
    # state
    # ----------------------------------------------------------------------------------------------

    @property
    def skip_names(self) -> list[str]:
        """Identifiers of the skip batches: ``pred_cond_skip`` (N = 1) or ``pred_cond_skip_{i}``."""
        if self.num_subnetworks == 1:
            return ["pred_cond_skip"]
        return [f"pred_cond_skip_{i}" for i in range(self.num_subnetworks)]

    def set_state(self, step: int, num_inference_steps: int, timestep: torch.LongTensor) -> None:
        """Start denoising step ``step``: the next skip batch draws a fresh mask."""
        super().set_state(step, num_inference_steps, timestep)
        self._step_masks = None

    def reseed(self, seed: int | None) -> None:
        """Restart the mask stream and forget the history."""
        self.mask_sampler.reseed(seed)
        self.mask_history.clear()
        self._step_masks = None

    def _is_cfg_enabled(self) -> bool:
        if not self._enabled:
            return False
        scale_off = math.isclose(self.guidance_scale, 0.0 if self.use_original_formulation else 1.0)
        return _step_range(self._start, self._stop, self._num_inference_steps, self._step) and not scale_off

    def _is_s2_enabled(self) -> bool:
        if not self._enabled or math.isclose(self.s2_scale, 0.0):
            return False
        return _step_range(self.s2_start, self.s2_stop, self._num_inference_steps, self._step)

    @property
    def num_conditions(self) -> int:
        """Forward passes this step: cond, (uncond), (N skip passes)."""
        return 1 + int(self._is_cfg_enabled()) + (self.num_subnetworks if self._is_s2_enabled() else 0)

    @property
    def is_conditional(self) -> bool:
        """Whether the batch being prepared uses the conditional inputs (all but the uncond batch)."""
        return not (self._is_cfg_enabled() and self._count_prepared == 2)

    def _skip_index(self) -> int | None:
        """Which skip batch (0-based) is being prepared, or None for the cond/uncond batches."""
        first = 2 + int(self._is_cfg_enabled())  # 1-based count of the first skip batch
        if not self._is_s2_enabled() or self._count_prepared < first:
            return None
        return self._count_prepared - first

    def _masks_for_step(self, num_blocks: int) -> list[tuple[int, ...]]:
        if self._step_masks is None:
            if self.fixed_blocks is not None:
                bad = [b for b in self.fixed_blocks if not -num_blocks <= b < num_blocks]
                if bad:
                    raise ConfigError("fixed_blocks", list(self.fixed_blocks), f"indices below {num_blocks}")
                mask = tuple(sorted(b % num_blocks for b in self.fixed_blocks))
                self._step_masks = [mask] * self.num_subnetworks
            else:
                self._step_masks = [self.mask_sampler.sample(num_blocks) for _ in range(self.num_subnetworks)]
        return self._step_masks

    # ----------------------------------------------------------------------------------------------
    # model preparation (hooks) and inputs
    # ----------------------------------------------------------------------------------------------

    def prepare_models(self, denoiser: torch.nn.Module) -> None:
        """Before each batch: on a skip batch, drop this step's drawn blocks (identity hooks)."""
        self._count_prepared += 1
        j = self._skip_index()
        if j is None:
            return
        fqn, blocks = find_blocks(denoiser, self.fqn)
        mask = self._masks_for_step(len(blocks))[j]
        self.mask_history.append((self._step, mask))
        config = LayerSkipConfig(list(mask), fqn=fqn, skip_attention=True, skip_ff=True, dropout=1.0)
        _apply_layer_skip_hook(denoiser, config, name=_HOOK_NAME)
        self._hooked = True

    def cleanup_models(self, denoiser: torch.nn.Module) -> None:
        """After each batch: remove the skip hooks again."""
        if self._hooked:
            HookRegistry.check_if_exists_or_initialize(denoiser).remove_hook(_HOOK_NAME, recurse=True)
            self._hooked = False

    def _batch_plan(self) -> tuple[list[int], list[str]]:
        indices, names = [0], ["pred_cond"]
        if self._is_cfg_enabled():
            indices.append(1)
            names.append("pred_uncond")
        if self._is_s2_enabled():
            indices += [0] * self.num_subnetworks
            names += self.skip_names
        return indices, names

    # diffusers' own guiders take a dict here too (the base class annotates a BlockState)
    def prepare_inputs(self, data: dict[str, Any]) -> list[BlockState]:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Split ``{name: tensor or (cond, uncond)}`` into the batches of this step."""
        return [self._prepare_batch(data, i, name) for i, name in zip(*self._batch_plan(), strict=True)]

    def prepare_inputs_from_block_state(
        self, data: BlockState, input_fields: dict[str, str | tuple[str, str]]
    ) -> list[BlockState]:
        """Modular-pipeline variant of :meth:`prepare_inputs`."""
        return [
            self._prepare_batch_from_block_state(input_fields, data, i, name)
            for i, name in zip(*self._batch_plan(), strict=True)
        ]

    # ----------------------------------------------------------------------------------------------
    # combination
    # ----------------------------------------------------------------------------------------------

    def forward(
        self, pred_cond: torch.Tensor, pred_uncond: torch.Tensor | None = None, **skip_preds: torch.Tensor
    ) -> GuiderOutput:
        """Combine the predictions (Eq. 4, or Eq. 3 for N > 1, or the appendix variant)."""
        if self._is_cfg_enabled():
            if pred_uncond is None:
                raise ValueError("S2Guidance: CFG is active but pred_uncond is missing")
            base = pred_cond if self.use_original_formulation else pred_uncond
            pred = base + self.guidance_scale * (pred_cond - pred_uncond)
        else:
            pred = pred_cond
        if self._is_s2_enabled():
            missing = [n for n in self.skip_names if n not in skip_preds]
            if missing:
                raise ValueError(f"S2Guidance: S² is active but {missing} are missing")
            skip_mean = torch.stack([skip_preds[n] for n in self.skip_names]).mean(dim=0)
            if self.formulation == "eq4":
                pred = pred - self.s2_scale * (skip_mean - pred_cond)
            else:
                pred = pred - self.s2_scale * skip_mean
        if self.guidance_rescale > 0.0:
            pred = rescale_noise_cfg(pred, pred_cond, self.guidance_rescale)
        return GuiderOutput(pred=pred, pred_cond=pred_cond, pred_uncond=pred_uncond)
