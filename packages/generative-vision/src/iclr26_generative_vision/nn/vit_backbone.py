"""ViT-style encoders (a transformers ``Dinov2Model`` or ``ViTModel``) as backbones of Causal Delta Embeddings.

The paper fine-tunes a DINO ViT as φ's backbone. :class:`ViTBackbone` wraps a Hugging Face ``Dinov2Model``
(DINOv2) or ``ViTModel`` (ViT, and DINO v1, whose checkpoints are ``ViTModel``\\ s) behind the interface the
CDE encoders read from any backbone (``nn/causal_delta.py``): ``out_channels`` = C and

* ``forward(x)``: ``[B, 3, H, W] → [B, C, H/p, W/p]``, the patch tokens of ``last_hidden_state`` (after the
  model's final LayerNorm) laid out on their grid, row-major as the patch embedding's convolution emits
  them: token ``1 + i·(W/p) + j`` is cell ``(i, j)``; model B's per-patch δ reads this grid;
* ``global_features(x)``: ``[B, C]``, the pooled image feature model A and the pair baselines read:
  ``pooling="cls"`` the CLS token ``last_hidden_state[:, 0]`` (DINO's image embedding; ``Dinov2Model``'s
  ``pooler_output``), ``pooling="mean"`` the mean of the patch tokens (``= forward(x).mean((2, 3))``).
  Register tokens, when a model has them, sit between CLS and the patches and are read by neither.

Pixels: this package's images are in [−1, 1] (``methods/causal_delta/model.to_tensor``).
``pixel_norm="imagenet"`` feeds ``((x + 1)/2 − μ)/σ`` with ImageNet's μ, σ (DINO's and DINOv2's
preprocessing); ``"none"`` feeds ``x`` itself (ViTs trained on [−1, 1], e.g. ``google/vit-*``: mean = std =
0.5). Sizes: H and W must be multiples of the patch size p (else one ``ValueError`` line); when the grid
differs from the checkpoint's ``image_size`` the position embeddings are interpolated by the model's own
``interpolate_pos_encoding`` (bicubic).

The mask token of masked-image pretraining (``embeddings.mask_token``) is never used without
``bool_masked_pos``; it is frozen (``requires_grad=False``) so that DDP sees no parameter without a
gradient. ``ViTModel`` is built without its pooler (dense + tanh, unused here, for the same reason).

Weights are never downloaded: :func:`load_vit_backbone` reads a local folder written by ``save_pretrained``
(``config.json`` + ``model.safetensors``); :func:`vit_backbone_from_config` builds a randomly initialised one
from a config (a ``Dinov2Config``/``ViTConfig`` or its dict, as in a ``config.json``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import torch
from torch import Tensor, nn

from iclr26_shared.errors import DataError

__all__ = [
    "IMAGENET_MEAN",
    "IMAGENET_STD",
    "VIT_MODEL_TYPES",
    "ViTBackbone",
    "load_vit_backbone",
    "read_vit_config",
    "vit_backbone_from_config",
]

#: transformers ``model_type`` values the adapter wraps: DINOv2 (``Dinov2Model``) and ViT/DINO (``ViTModel``).
VIT_MODEL_TYPES = ("dinov2", "vit")
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
Pooling = Literal["cls", "mean"]
PixelNorm = Literal["imagenet", "none"]


class ViTBackbone(nn.Module):
    """A transformers ``Dinov2Model``/``ViTModel`` as a CDE backbone (see the module docstring).

    Args:
        model: The wrapped model (its ``config.model_type`` one of :data:`VIT_MODEL_TYPES`).
        pooling: ``"cls"`` (CLS token) or ``"mean"`` (mean patch token) for :meth:`global_features`.
        pixel_norm: ``"imagenet"`` (map [−1, 1] to ImageNet-normalised pixels) or ``"none"``.
    """

    def __init__(self, model: nn.Module, pooling: Pooling = "cls", pixel_norm: PixelNorm = "imagenet") -> None:
        super().__init__()
        config = getattr(model, "config", None)
        model_type = getattr(config, "model_type", None)
        if model_type not in VIT_MODEL_TYPES:
            raise ValueError(
                f"model: expected a transformers Dinov2Model or ViTModel (model_type in {VIT_MODEL_TYPES}), "
                f"got {type(model).__name__} (model_type {model_type!r})"
            )
        if pooling not in ("cls", "mean"):
            raise ValueError(f"pooling: expected 'cls' or 'mean', got {pooling!r}")
        if pixel_norm not in ("imagenet", "none"):
            raise ValueError(f"pixel_norm: expected 'imagenet' or 'none', got {pixel_norm!r}")
        patch = config.patch_size  # pyright: ignore[reportOptionalMemberAccess]
        sizes = (patch, patch) if isinstance(patch, int) else tuple(patch)
        if len(sizes) != 2 or sizes[0] != sizes[1]:
            raise ValueError(f"model: expected square patches, got patch_size {patch!r}")
        self.model = model
        self.model_type: str = model_type
        self.pooling: Pooling = pooling
        self.pixel_norm: PixelNorm = pixel_norm
        self.patch_size = int(sizes[0])
        self.out_channels = int(config.hidden_size)  # pyright: ignore[reportOptionalMemberAccess]
        mask = getattr(getattr(model, "embeddings", None), "mask_token", None)
        if isinstance(mask, nn.Parameter):
            mask.requires_grad_(False)
        self.register_buffer("mean", torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(IMAGENET_STD).view(1, 3, 1, 1), persistent=False)

    def tokens(self, x: Tensor) -> tuple[Tensor, int, int]:
        """``last_hidden_state [B, T, C]`` of the images ``x [B, 3, H, W]`` (in [−1, 1]) and the grid ``(H/p, W/p)``."""
        if x.ndim != 4 or x.shape[1] != 3:
            raise ValueError(f"images: expected [B, 3, H, W], got shape {tuple(x.shape)}")
        h, w = x.shape[-2:]
        p = self.patch_size
        if h % p or w % p:
            raise ValueError(f"image size {h}x{w}: height and width must be multiples of the ViT patch size {p}")
        if self.pixel_norm == "imagenet":
            x = ((x + 1.0) / 2.0 - self.mean) / self.std  # pyright: ignore[reportOperatorIssue]
        kwargs: dict[str, Any] = {"interpolate_pos_encoding": True} if self.model_type == "vit" else {}
        hidden = self.model(pixel_values=x, **kwargs).last_hidden_state
        return hidden, h // p, w // p

    def forward(self, x: Tensor) -> Tensor:
        """The patch tokens on their grid: ``[B, 3, H, W] → [B, C, H/p, W/p]``."""
        hidden, gh, gw = self.tokens(x)
        patches = hidden[:, hidden.shape[1] - gh * gw :]
        return patches.transpose(1, 2).reshape(x.shape[0], self.out_channels, gh, gw)

    def global_features(self, x: Tensor) -> Tensor:
        """The pooled image feature ``[B, C]``: the CLS token or the mean patch token (``pooling``)."""
        hidden, gh, gw = self.tokens(x)
        if self.pooling == "cls":
            return hidden[:, 0]
        return hidden[:, hidden.shape[1] - gh * gw :].mean(dim=1)


def _model_classes(model_type: str) -> tuple[Any, Any]:
    """(config class, model class) of a ``model_type``."""
    from transformers import Dinov2Config, Dinov2Model, ViTConfig, ViTModel

    return {"dinov2": (Dinov2Config, Dinov2Model), "vit": (ViTConfig, ViTModel)}[model_type]


def _extra_init(model_type: str) -> dict[str, Any]:
    return {"add_pooling_layer": False} if model_type == "vit" else {}


def vit_backbone_from_config(
    config: Any,  # noqa: ANN401 - a transformers PretrainedConfig or its dict
    *,
    pooling: Pooling = "cls",
    pixel_norm: PixelNorm = "imagenet",
) -> ViTBackbone:
    """A randomly initialised :class:`ViTBackbone` (call under ``torch.manual_seed`` for a fixed init).

    ``config``: a ``Dinov2Config`` / ``ViTConfig``, or a dict with its ``model_type`` (e.g. a checkpoint's
    ``config.json``, as :func:`read_vit_config` returns it).
    """
    if isinstance(config, Mapping):
        model_type = config.get("model_type")
        if model_type not in VIT_MODEL_TYPES:
            raise ValueError(f"config: expected model_type in {VIT_MODEL_TYPES}, got {model_type!r}")
        config_cls, _ = _model_classes(str(model_type))
        config = config_cls.from_dict(dict(config))
    model_type = getattr(config, "model_type", None)
    if model_type not in VIT_MODEL_TYPES:
        raise ValueError(f"config: expected a Dinov2Config or ViTConfig, got {type(config).__name__}")
    _, model_cls = _model_classes(str(model_type))
    return ViTBackbone(model_cls(config, **_extra_init(str(model_type))), pooling, pixel_norm)


def read_vit_config(path: str | Path) -> dict[str, Any]:
    """The ``config.json`` of a local ViT checkpoint folder as a dict (json only: no model is built).

    Raises one :class:`DataError` line when the folder, its ``config.json`` or a supported ``model_type``
    is missing.
    """
    folder = Path(path).expanduser()
    file = folder / "config.json"
    if not file.is_file():
        raise DataError(
            f"ViT weights not found: {folder} must be a folder with config.json and model.safetensors "
            "(a transformers Dinov2Model/ViTModel saved with save_pretrained; backbone_weights)"
        )
    try:
        config = json.loads(file.read_text())
    except (OSError, ValueError) as err:
        raise DataError(f"{file}: not a readable JSON config ({err})") from err
    if not isinstance(config, dict) or config.get("model_type") not in VIT_MODEL_TYPES:
        got = config.get("model_type") if isinstance(config, dict) else None
        raise DataError(f"{file}: model_type {got!r}, expected one of {VIT_MODEL_TYPES} (a DINOv2 or ViT/DINO model)")
    return config


def load_vit_backbone(path: str | Path, *, pooling: Pooling = "cls", pixel_norm: PixelNorm = "imagenet") -> ViTBackbone:
    """A :class:`ViTBackbone` from a local checkpoint folder (``save_pretrained`` output); never downloads.

    Raises one :class:`DataError` line when the folder is not a readable DINOv2/ViT checkpoint.
    """
    folder = Path(path).expanduser()
    model_type = str(read_vit_config(folder)["model_type"])
    _, model_cls = _model_classes(model_type)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    try:
        model = model_cls.from_pretrained(str(folder), local_files_only=True, **_extra_init(model_type))
    except (OSError, ValueError) as err:
        raise DataError(f"{folder}: not a loadable {model_cls.__name__} checkpoint ({err})".splitlines()[0]) from err
    return ViTBackbone(model, pooling, pixel_norm)
