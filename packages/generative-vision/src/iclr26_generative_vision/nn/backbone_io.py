"""Saving and rebuilding any backbone a user gives :class:`~iclr26_generative_vision.nn.causal_delta.CausalDeltaModel`.

``save_backbone(backbone, folder)`` writes the backbone under ``folder`` and returns the JSON spec that
``load_backbone(spec, folder)`` rebuilds it from, by the first of these that applies:

1. ``"vit"``: a :class:`~iclr26_generative_vision.nn.vit_backbone.ViTBackbone` — the wrapped transformers
   model saved with its own ``save_pretrained`` in ``folder/backbone/`` beside the head (``config.json`` +
   safetensors), plus its pooling and pixel normalisation;
2. ``"pretrained"``: a backbone with its own ``save_pretrained`` / ``from_pretrained`` (a transformers
   ``PreTrainedModel``, a diffusers ``ModelMixin``, a ``huggingface_hub.PyTorchModelHubMixin`` module) —
   saved by itself in ``folder/backbone/``, reloaded by its class's ``from_pretrained``;
3. ``"class"``: any other module — its class named in the spec (``"module:QualName"``) with JSON
   constructor arguments (``init``: the caller's ``backbone_init``, else the module's ``init_kwargs``
   attribute, else none) and its weights in ``folder/backbone.safetensors``.

Classes are found by :func:`iclr26_shared.models.resolve_class`: the class the caller passes
(``backbone=TheClass``, or an instance to load the weights into), else one from a module already imported or
from the packages :func:`iclr26_shared.models.allowed_modules` allows (this workspace's packages,
transformers, diffusers), never imported from the current directory or the saved folder; otherwise, and
whenever the rebuild fails, one :class:`CheckpointError` line names the class and says what to pass.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from torch import nn

from iclr26_shared.errors import CheckpointError

__all__ = ["class_path", "load_backbone", "save_backbone"]

BACKBONE_DIR = "backbone"
BACKBONE_FILE = "backbone.safetensors"


def class_path(obj: type) -> str:
    """``"module:QualName"`` of a class."""
    return f"{obj.__module__}:{obj.__qualname__}"


def _has_own_pretrained(module: nn.Module) -> bool:
    return callable(getattr(module, "save_pretrained", None)) and callable(
        getattr(type(module), "from_pretrained", None)
    )


def save_backbone(backbone: nn.Module, folder: Path, *, init: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``backbone`` under ``folder``; returns its spec (JSON) for :func:`load_backbone`."""
    from safetensors.torch import save_file

    from iclr26_generative_vision.nn.vit_backbone import ViTBackbone

    spec: dict[str, Any] = {"class": class_path(type(backbone))}
    if isinstance(backbone, ViTBackbone):
        backbone.model.save_pretrained(folder / BACKBONE_DIR)  # pyright: ignore[reportCallIssue]
        spec.update(kind="vit", pooling=backbone.pooling, pixel_norm=backbone.pixel_norm)
        return spec
    if _has_own_pretrained(backbone):
        backbone.save_pretrained(folder / BACKBONE_DIR)  # pyright: ignore[reportCallIssue]
        spec["kind"] = "pretrained"
        return spec
    kwargs = init if init is not None else getattr(backbone, "init_kwargs", None) or {}
    try:
        json.dumps(kwargs)
    except TypeError as err:
        raise CheckpointError(f"backbone_init: the constructor arguments must be JSON values ({err})") from None
    state = {k: v.detach().contiguous().clone() for k, v in backbone.state_dict().items()}
    save_file(state, str(folder / BACKBONE_FILE))
    spec.update(kind="class", init=kwargs)
    return spec


def _import_class(path: str, where: Path) -> type:
    """The backbone class by :func:`iclr26_shared.models.resolve_class` (no class given, no trust): from a
    module already imported or one of this workspace's packages, never from the current directory or the
    saved folder."""
    from iclr26_shared.models import resolve_class

    hint = (
        f"pass backbone={path.partition(':')[2].split('.')[-1] or path} (the class, or an instance) to from_pretrained"
    )
    return resolve_class(
        path,
        error=CheckpointError,
        what="backbone class",
        prefix=f"{where}: ",
        refused="the backbone is the user class '{path}', whose module {module} is not imported; " + hint,
        unsafe=(where.parent,),
    )


def load_backbone(spec: dict[str, Any], folder: Path, backbone: nn.Module | type | None = None) -> nn.Module:
    """Rebuild the backbone ``spec`` describes from ``folder`` (see the module docstring).

    ``backbone``: the user's class (built with the saved ``init``) or an instance (the saved weights are
    loaded into it); its class must be the saved one."""
    from safetensors.torch import load_file

    where = folder / "config.json"
    path, kind = spec.get("class"), spec.get("kind")
    if not isinstance(path, str) or kind not in ("vit", "pretrained", "class"):
        raise CheckpointError(
            f"{where}: 'backbone' must hold 'class' and 'kind' (vit, pretrained, class), got {spec!r}"
        )
    if backbone is not None:
        got = class_path(backbone if isinstance(backbone, type) else type(backbone))
        if got != path:
            raise CheckpointError(f"{where}: saved backbone is {path!r}, the backbone passed is {got!r}")
    if kind == "vit":
        from iclr26_generative_vision.nn.vit_backbone import load_vit_backbone

        return load_vit_backbone(
            folder / BACKBONE_DIR, pooling=spec.get("pooling", "cls"), pixel_norm=spec.get("pixel_norm", "imagenet")
        )
    cls = (
        backbone
        if isinstance(backbone, type)
        else type(backbone)
        if backbone is not None
        else _import_class(path, where)
    )
    if kind == "pretrained":
        sub = folder / BACKBONE_DIR
        if not sub.is_dir():
            raise CheckpointError(f"{sub}: the saved backbone folder is missing")
        try:
            loaded = cls.from_pretrained(sub)  # pyright: ignore[reportAttributeAccessIssue]
        except Exception as err:  # noqa: BLE001 - any failure to rebuild is the saved folder's
            raise CheckpointError(f"{sub}: {path} cannot be rebuilt ({str(err).splitlines()[0]})") from None
        if isinstance(backbone, nn.Module):
            backbone.load_state_dict(loaded.state_dict())
            return backbone
        return loaded
    file = folder / BACKBONE_FILE
    if not file.is_file():
        raise CheckpointError(f"{file}: the saved backbone weights are missing")
    init = spec.get("init") or {}
    if isinstance(backbone, nn.Module):
        module = backbone
    else:
        try:
            module = cls(**init)
        except Exception as err:  # noqa: BLE001 - a constructor that rejects the saved arguments
            raise CheckpointError(
                f"{where}: backbone {path}(**{init}) cannot be rebuilt ({str(err).splitlines()[0]}); "
                "save with backbone_init= its constructor arguments, or pass an instance as backbone="
            ) from None
    try:
        module.load_state_dict(load_file(str(file)))
    except RuntimeError as err:
        raise CheckpointError(f"{file}: the saved weights do not fit {path} ({str(err).splitlines()[0]})") from None
    return module


def state_equal(a: nn.Module, b: nn.Module) -> bool:
    """Whether two modules hold the same tensors bit for bit (names and values)."""
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)
