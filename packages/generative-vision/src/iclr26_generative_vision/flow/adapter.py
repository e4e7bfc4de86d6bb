"""What DUPA's objective and the Euler sampler need from a flow model, and an adapter for any transformer.

:class:`~iclr26_generative_vision.methods.dupa.model.DUPAObjective` and
:func:`~iclr26_generative_vision.flow.sampler.euler_sample` take our :class:`~iclr26_generative_vision.nn.ddt.DDT`
natively, or any module that follows the :class:`FlowModel` protocol:

- ``flow_forward(sample, timestep, class_labels, *, features=False) -> FlowOutput``:
  ``sample`` ``[B, C, S, S]`` (the noisy image ``x_t``), ``timestep`` ``[B]`` in [0, 1] in the package's
  convention (t = 0 clean, t = 1 noise, :mod:`iclr26_generative_vision.flow.matching`), ``class_labels``
  ``[B]`` (how the condition goes in: a class index, :attr:`FlowModel.null_label` meaning ∅) → the
  velocity ``[B, C, S, S]`` (trained towards ``ε − x``) and, when ``features=True``, the tokens DUPA aligns
  ``[B, N, H]`` (the output of one block; which block is the model's choice, the paper aligns an
  intermediate block of the condition path, REPA-style).
- ``null_label``: the label index of the unconditional ∅ (classifier-free guidance in the sampler).

:class:`HookedFlowModel` makes a diffusers-style transformer follow it: a forward hook on a named block
(``model.get_submodule(block)``, REPA's way of reading an intermediate layer) captures that block's output,
and the model is called as ``model(hidden_states=x, timestep=t·time_scale, class_labels=y)`` (diffusers'
``DiTTransformer2DModel``); ``call=`` replaces that call for another signature (``SD3Transformer2DModel``
takes ``encoder_hidden_states`` / ``pooled_projections``; its ``JointTransformerBlock`` returns
``(encoder_hidden_states, hidden_states)``, so pick ``output_index=1``). A model that predicts extra
channels (DiT's learned σ, ``out_channels = 2C``) gives its first ``C`` channels as the velocity.

The user's model keeps its own weights, names and saving (``save_pretrained`` / ``from_pretrained`` for a
diffusers model): the adapter holds no parameters of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol, runtime_checkable

import torch
from torch import nn

from iclr26_shared.errors import ConfigError, DataError

__all__ = ["FlowModel", "FlowOutput", "HookedFlowModel", "check_flow_inputs"]


class FlowOutput(NamedTuple):
    """What :meth:`FlowModel.flow_forward` returns."""

    velocity: torch.Tensor
    """``[B, C, S, S]``, the package's convention (``v = ε − x``)."""
    features: torch.Tensor | None
    """``[B, N, H]`` tokens of the aligned block, or None when not asked for."""


@runtime_checkable
class FlowModel(Protocol):
    """The interface DUPA's objective and the Euler sampler need (see the module docstring)."""

    @property
    def null_label(self) -> int:
        """The class index of ∅ (unconditional)."""
        ...

    def flow_forward(
        self, sample: torch.Tensor, timestep: torch.Tensor, class_labels: torch.Tensor, *, features: bool = False
    ) -> FlowOutput:
        """Velocity (and the aligned tokens when ``features``) of ``sample`` at ``timestep`` given ``class_labels``."""
        ...


def check_flow_inputs(who: str, sample: torch.Tensor, timestep: torch.Tensor, class_labels: torch.Tensor) -> None:
    """One-line :class:`DataError` naming the argument when shapes, dtypes or devices disagree."""
    if not isinstance(sample, torch.Tensor) or sample.dim() != 4 or not sample.is_floating_point():
        got = tuple(sample.shape) if isinstance(sample, torch.Tensor) else type(sample).__name__
        raise DataError(f"{who}: sample must be a float tensor [B, C, S, S], got {got}")
    b = sample.shape[0]
    if timestep.shape != (b,) or not timestep.is_floating_point():
        raise DataError(
            f"{who}: timestep must be a float tensor [B] = [{b}] in [0, 1], "
            f"got {tuple(timestep.shape)} {timestep.dtype}"
        )
    if class_labels.shape != (b,) or class_labels.is_floating_point() or class_labels.dtype == torch.bool:
        raise DataError(
            f"{who}: class_labels must be an integer tensor [B] = [{b}], "
            f"got {tuple(class_labels.shape)} {class_labels.dtype}"
        )
    for name, t in (("timestep", timestep), ("class_labels", class_labels)):
        if t.device != sample.device:
            raise DataError(f"{who}: {name} is on {t.device} but sample is on {sample.device}")


def _default_call(model: nn.Module, sample: torch.Tensor, timestep: torch.Tensor, class_labels: torch.Tensor) -> Any:
    return model(hidden_states=sample, timestep=timestep, class_labels=class_labels)


class HookedFlowModel(nn.Module):
    """A :class:`FlowModel` around a diffusers-style transformer; the aligned tokens come from a forward hook.

    Args:
        model: The user's transformer (e.g. ``diffusers.DiTTransformer2DModel``); its parameters stay its own.
        block: Dotted name of the block whose output DUPA aligns (``"transformer_blocks.1"``: the second
            block of a diffusers DiT); a name the model lacks is a one-line :class:`ConfigError`.
        null_label: Class index of ∅ (diffusers' DiT: ``num_embeds_ada_norm``, its label table's extra row).
        time_scale: The model's timestep is ``t · time_scale`` (diffusers' DiT embeds timesteps of a
            1000-step schedule; 1000 maps t ∈ [0, 1] onto that range).
        call: ``call(model, sample, timestep, class_labels)`` → the model's output (default:
            ``model(hidden_states=…, timestep=…, class_labels=…)``); the output may be a tensor, a tuple
            (first element) or an object with ``.sample``.
        output_index: Which element of the block's output, when it returns a tuple, holds the image tokens.
    """

    def __init__(
        self,
        model: nn.Module,
        block: str,
        *,
        null_label: int,
        time_scale: float = 1000.0,
        call: Callable[[nn.Module, torch.Tensor, torch.Tensor, torch.Tensor], Any] | None = None,
        output_index: int = 0,
    ) -> None:
        super().__init__()
        if not isinstance(model, nn.Module):
            raise ConfigError("model", type(model).__name__, "a torch.nn.Module")
        try:
            target = model.get_submodule(block)
        except AttributeError:
            blocks = [n for n, m in model.named_modules() if n and n.count(".") <= 1 and isinstance(m, nn.Module)]
            from iclr26_shared.errors import did_you_mean

            raise ConfigError(
                "block", block, f"a submodule name of {type(model).__name__}{did_you_mean(block, blocks)}"
            ) from None
        self.model, self.block, self.output_index = model, block, output_index
        self._null_label, self.time_scale = int(null_label), float(time_scale)
        self._call = call or _default_call
        self._captured: torch.Tensor | None = None
        self._capture = False
        target.register_forward_hook(self._hook)

    @property
    def null_label(self) -> int:
        """The class index of ∅."""
        return self._null_label

    def _hook(self, module: nn.Module, args: Any, output: Any) -> None:
        if not self._capture:
            return
        out = output[self.output_index] if isinstance(output, tuple | list) else output
        if not isinstance(out, torch.Tensor):
            raise DataError(
                f"HookedFlowModel: block {self.block!r} returned {type(out).__name__}, not a tensor (output_index)"
            )
        if out.dim() == 4:  # a convolutional block [B, H, h, w] → tokens [B, h·w, H]
            out = out.flatten(2).transpose(1, 2)
        if out.dim() != 3:
            raise DataError(f"HookedFlowModel: block {self.block!r} gave {tuple(out.shape)}, expected tokens [B, N, H]")
        self._captured = out

    def flow_forward(
        self, sample: torch.Tensor, timestep: torch.Tensor, class_labels: torch.Tensor, *, features: bool = False
    ) -> FlowOutput:
        """The velocity (the model output's first ``C`` channels) and, with ``features``, the hooked tokens."""
        check_flow_inputs("HookedFlowModel", sample, timestep, class_labels)
        self._capture, self._captured = features, None
        try:
            out = self._call(self.model, sample, timestep * self.time_scale, class_labels)
        finally:
            self._capture = False
        out = getattr(out, "sample", out)
        out = out[0] if isinstance(out, tuple | list) else out
        c = sample.shape[1]
        if (
            not isinstance(out, torch.Tensor)
            or out.shape[0] != sample.shape[0]
            or out.shape[2:] != sample.shape[2:]
            or out.shape[1] < c
        ):
            got = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
            raise DataError(
                f"HookedFlowModel: the model returned {got}, expected a velocity [B, >= {c}, S, S] "
                f"like sample {tuple(sample.shape)}"
            )
        captured, self._captured = self._captured, None
        if features and captured is None:
            raise DataError(f"HookedFlowModel: block {self.block!r} did not run in the model's forward")
        return FlowOutput(out[:, :c], captured)

    def forward(self, sample: torch.Tensor, timestep: torch.Tensor, class_labels: torch.Tensor) -> torch.Tensor:
        """The velocity alone."""
        return self.flow_forward(sample, timestep, class_labels).velocity
