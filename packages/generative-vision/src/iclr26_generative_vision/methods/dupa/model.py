"""The models of ``dupa`` built from its config: the DDT, the projector and the per-variant training loss.

:class:`DUPAObjective` holds a DDT and (for ``dupa``) the projector ``z_φ`` in one module, so one
``DistributedDataParallel`` wrapper covers both and its ``forward`` returns the loss terms of a batch of
``K·B`` path rows (path-major, see :func:`iclr26_generative_vision.flow.dupa.draw_paths`)::

    L = (1/K) Σ_k mean‖v_θ(x_{t_k}, t_k) − (ε_k − x)‖² + λ L_DUPA(z_φ(h_{t_1}), …, z_φ(h_{t_K}))

The model is our :class:`DDT` (tokens after block ``align_layer``) or any module following
:class:`~iclr26_generative_vision.flow.adapter.FlowModel` (e.g. a diffusers DiT in a
:class:`~iclr26_generative_vision.flow.adapter.HookedFlowModel`, whose hooked block gives the tokens).
"""

from __future__ import annotations

from typing import cast

import torch
from torch import nn

from iclr26_generative_vision.flow.adapter import FlowModel
from iclr26_generative_vision.flow.dupa import ConditionProjector, PathBatch, Predictor, dupa_loss
from iclr26_generative_vision.methods.dupa.config import DUPAConfig
from iclr26_generative_vision.nn.ddt import DDT
from iclr26_shared.errors import ConfigError, DataError
from iclr26_shared.images import ImageTensors

__all__ = ["DUPAObjective", "build_ddt", "build_objective"]


def build_ddt(cfg: DUPAConfig, data: ImageTensors) -> DDT:
    """The DDT for ``data``'s image shape and classes (weights from the global RNG)."""
    return DDT(
        data.size,
        data.channels,
        data.num_classes,
        patch_size=cfg.patch_size,
        hidden=cfg.hidden,
        encoder_depth=cfg.encoder_depth,
        decoder_depth=cfg.decoder_depth,
        heads=cfg.heads,
        arch=cfg.arch,
    )


class DUPAObjective(nn.Module):
    """A flow model plus, when ``weight > 0``, the projector; ``forward(paths)`` → ``(loss, velocity loss,
    alignment loss or 0)`` for ``paths.x_t`` ``[K·B, C, S, S]``.

    Args:
        model: Our DDT, or any :class:`~iclr26_generative_vision.flow.adapter.FlowModel` (a user's
            transformer in a :class:`~iclr26_generative_vision.flow.adapter.HookedFlowModel`).
        num_paths: K (1: plain flow matching).
        weight: λ (0: no alignment term and no projector).
        align_layer: 1-based DDT block whose tokens are aligned (a ``FlowModel`` picks its own block; pass 0).
        projector: ``z_φ`` (required when ``weight > 0``).
        stop_grad: Stop-gradient ablation of the cosine.
        predictor: The online-side predictor q of the SimSiam-style remedy (None: the paper's loss).
    """

    def __init__(
        self,
        model: DDT | FlowModel,
        *,
        num_paths: int,
        weight: float,
        align_layer: int = 0,
        projector: ConditionProjector | None = None,
        stop_grad: bool = False,
        predictor: Predictor | None = None,
    ) -> None:
        super().__init__()
        if weight > 0 and (projector is None or num_paths < 2):
            raise ValueError("the alignment term needs a projector and at least 2 paths")
        if not isinstance(model, DDT | FlowModel) or not isinstance(model, nn.Module):
            raise ConfigError(
                "model", type(model).__name__, "our DDT or a FlowModel module (wrap a transformer in HookedFlowModel)"
            )
        if isinstance(model, DDT) and weight > 0 and not 1 <= align_layer <= model.depth:
            raise ConfigError("align_layer", align_layer, f"a 1-based block of the DDT's {model.depth} blocks")
        self.model, self.projector, self.predictor = model, projector, predictor
        self.num_paths, self.weight, self.align_layer, self.stop_grad = num_paths, weight, align_layer, stop_grad

    def _forward(
        self, x_t: torch.Tensor, t: torch.Tensor, labels: torch.Tensor, *, features: bool
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        if isinstance(self.model, DDT):
            out = self.model(x_t, t, labels, align_layer=self.align_layer if features else 0)
            return out.velocity, out.hidden
        return tuple(cast(FlowModel, self.model).flow_forward(x_t, t, labels, features=features))  # type: ignore[return-value]

    def aligned_tokens(self, x_t: torch.Tensor, t: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """The tokens the alignment term sees, ``[rows, N, H]`` (the DDT's block ``align_layer`` or the
        FlowModel's chosen block)."""
        _, hidden = self._forward(x_t, t, labels, features=True)
        if hidden is None:
            raise DataError(f"DUPAObjective: the model gave no aligned tokens (align_layer = {self.align_layer})")
        return hidden

    def forward(self, paths: PathBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The losses of one batch of path rows."""
        weight = next(self.model.parameters(), None)
        if weight is not None and (paths.x_t.device != weight.device or paths.x_t.dtype != weight.dtype):
            raise DataError(
                f"DUPAObjective: paths.x_t is {paths.x_t.dtype} on {paths.x_t.device}, "
                f"the model's weights {weight.dtype} on {weight.device}"
            )
        rows = paths.x_t.shape[0]
        if rows % self.num_paths:
            raise DataError(f"DUPAObjective: paths has {rows} rows, not a multiple of num_paths = {self.num_paths}")
        if paths.target.shape != paths.x_t.shape:
            raise DataError(
                f"DUPAObjective: paths.target {tuple(paths.target.shape)} != paths.x_t {tuple(paths.x_t.shape)}"
            )
        pred, hidden = self._forward(paths.x_t, paths.t, paths.labels, features=self.weight > 0)
        velocity = torch.nn.functional.mse_loss(pred, paths.target)
        if self.weight == 0:
            return velocity, velocity, velocity.new_zeros(())
        assert self.projector is not None and hidden is not None
        first = next((m for m in self.projector.modules() if isinstance(m, nn.Linear)), None)
        width = first.in_features if first is not None else hidden.shape[-1]
        if hidden.dim() != 3 or hidden.shape[-1] != width:
            raise DataError(
                f"DUPAObjective: projector takes width {width} but the model's aligned tokens are "
                f"{tuple(hidden.shape)} (build ConditionProjector(dim={hidden.shape[-1]}, ...))"
            )
        h = hidden.reshape(self.num_paths, -1, *hidden.shape[1:])  # [K, B, N, H]
        align_loss = dupa_loss(self.projector(h), stop_grad=self.stop_grad, predictor=self.predictor)
        return velocity + self.weight * align_loss, velocity, align_loss


def build_objective(cfg: DUPAConfig, variant: str, model: DDT) -> DUPAObjective:
    """The training objective of ``variant`` around ``model`` (projector weights from the global RNG)."""
    if variant == "dupa":
        projector = ConditionProjector(cfg.hidden, cfg.projector_hidden, cfg.projector_dim, gain=cfg.projector_gain)
        if cfg.projector_mode == "frozen":  # collapse remedy: a fixed random projector
            projector.requires_grad_(False)
        # drawn after the projector, so the projector's init is the same with and without a predictor
        predictor = Predictor(cfg.projector_dim, cfg.predictor_hidden) if cfg.predictor else None
        return DUPAObjective(
            model,
            num_paths=cfg.num_paths,
            weight=cfg.dupa_weight,
            align_layer=cfg.aligned_layer,
            projector=projector,
            stop_grad=cfg.stop_grad,
            predictor=predictor,
        )
    return DUPAObjective(model, num_paths=cfg.paths(variant), weight=0.0, align_layer=cfg.aligned_layer)
