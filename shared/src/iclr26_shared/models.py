"""Trained models a run saves, and loading them back (docs/architecture.md, "Saved models").

A method's ``run`` saves each final trained model a user would reuse with :meth:`RunDir.save_model`
(or :func:`save_model`), under ``<run>/models/<name>/``. The model brings the save/load interface of its
ecosystem, and this module only drives it:

* plain torch modules: :class:`huggingface_hub.PyTorchModelHubMixin` (``class Net(nn.Module,
  PyTorchModelHubMixin)``; the ``__init__`` arguments become ``config.json``),
* diffusion backbones: ``diffusers.ModelMixin`` + ``ConfigMixin``,
* language models: ``transformers.PreTrainedModel`` + ``PretrainedConfig``,
* anything else with ``save_pretrained(dir)`` and a classmethod ``from_pretrained(dir)`` (e.g. a fitted
  non-torch model through :class:`huggingface_hub.ModelHubMixin`).

``save_pretrained`` writes safetensors and a JSON config; beside them we write ``iclr26_model.json``
(the class to load it with, the method, the run's seed). :func:`load_model` imports that class and calls
``from_pretrained`` on the *local* folder: no hub download, offline. ``uv run iclr26 models RUN_DIR``
lists what a run saved (:func:`list_models`, which reads JSON only and imports no torch).

Example (a plain torch module; the same three calls work for any of the ecosystems above)::

    import torch
    from huggingface_hub import PyTorchModelHubMixin

    class Net(torch.nn.Module, PyTorchModelHubMixin):
        def __init__(self, width: int = 4) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(width, 1)

    save_model("runs/demo", "net", Net(width=4))
    net = load_model("runs/demo")           # the only model of the run, or load_model(run, "net")
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iclr26_shared.errors import CheckpointError, UsageError

if TYPE_CHECKING:
    from iclr26_shared.runs import RunDir

__all__ = ["MODELS_DIR", "META_FILE", "list_models", "load_model", "model_dir", "save_model"]

#: Sub-folder of a run directory holding its saved models, one folder per name.
MODELS_DIR = "models"
#: The file we add beside the ecosystem's own files: which class loads the folder.
META_FILE = "iclr26_model.json"


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not name or name.startswith(".") or any(c in name for c in "/\\\0"):
        raise ValueError(f"model name {name!r}: expected a non-empty folder name (no '/', no leading '.')")
    return name


def _run_path(run_dir: str | os.PathLike[str] | RunDir) -> Path:
    path = getattr(run_dir, "path", run_dir)
    return Path(path)  # type: ignore[arg-type]


def model_dir(run_dir: str | os.PathLike[str] | RunDir, name: str) -> Path:
    """``<run>/models/<name>/``."""
    return _run_path(run_dir) / MODELS_DIR / _check_name(name)


def _class_path(obj: object) -> str:
    cls = type(obj)
    if "<locals>" in cls.__qualname__:
        raise TypeError(f"{cls.__qualname__} is defined inside a function: a saved model's class must be importable")
    return f"{cls.__module__}:{cls.__qualname__}"


def save_model(
    run_dir: str | os.PathLike[str] | RunDir,
    name: str,
    model: Any,
    *,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Save ``model`` under ``<run>/models/<name>/`` with its own ``save_pretrained``; returns the folder.

    The folder is written to a temporary sibling and renamed into place, so a killed run never leaves a
    half-written model under its name (an older model of that name is replaced). ``extra`` (JSON values)
    is stored in ``iclr26_model.json`` beside the class path, e.g. what the model's input is.

    Raises:
        TypeError: ``model`` has no ``save_pretrained`` / ``from_pretrained`` (name the mixin to add).
    """
    if not (callable(getattr(model, "save_pretrained", None)) and callable(getattr(model, "from_pretrained", None))):
        raise TypeError(
            f"model {name!r} ({type(model).__name__}) has no save_pretrained/from_pretrained: give its class "
            "huggingface_hub.PyTorchModelHubMixin (torch), diffusers ModelMixin+ConfigMixin or a transformers "
            "PreTrainedModel"
        )
    target = model_dir(run_dir, name)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
    try:
        model.save_pretrained(tmp)
        meta = {"name": name, "class": _class_path(model), "extra": dict(extra or {})}
        run_json = _run_path(run_dir) / "config.json"
        if run_json.is_file():
            try:
                saved = json.loads(run_json.read_text())
                meta.update(method=saved.get("method"), seed=saved.get("seed"), preset=saved.get("preset"))
            except (OSError, ValueError):
                pass
        (tmp / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def list_models(run_dir: str | os.PathLike[str] | RunDir) -> dict[str, dict[str, Any]]:
    """``{name: metadata}`` of every model a run saved (empty when none); JSON only, no torch import.

    Each metadata dict holds ``class``, ``method``, ``seed``, ``extra``, ``path`` and ``bytes`` (the
    folder's size)."""
    root = _run_path(run_dir) / MODELS_DIR
    found: dict[str, dict[str, Any]] = {}
    if not root.is_dir():
        return found
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        meta_path = folder / META_FILE
        if not meta_path.is_file():
            continue
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError) as err:
            raise CheckpointError(f"{meta_path}: not readable JSON ({err})") from None
        if not isinstance(meta, dict) or not isinstance(meta.get("class"), str):
            raise CheckpointError(f"{meta_path}: expected a JSON object with a 'class' string")
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        found[folder.name] = {**meta, "path": str(folder), "bytes": size}
    return found


def _import_class(path: str, where: Path) -> type[Any]:
    module, _, qualname = path.partition(":")
    try:
        obj: Any = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as err:
        raise CheckpointError(
            f"{where / META_FILE}: class {path!r} cannot be imported ({err}); install the package that saved it"
        ) from None
    return obj


def load_model(run_dir: str | os.PathLike[str] | RunDir, name: str | None = None, **kwargs: Any) -> Any:
    """The model a run saved as ``name`` (default: the run's only model), loaded offline from its folder.

    ``kwargs`` go to the class's ``from_pretrained`` (e.g. ``map_location="cuda"`` for a
    PyTorchModelHubMixin model). Torch models come back in eval mode, as ``from_pretrained`` leaves them.

    Raises:
        UsageError: the run saved no model, several (and ``name`` is None), or none called ``name``; the
            message lists the names there are.
        CheckpointError: the folder's weights miss a key of the model, hold one it does not have, or
            differ in a shape (the ecosystems' lenient defaults would load such a file partially).
    """
    path = _run_path(run_dir)
    if not path.is_dir():
        raise UsageError(f"{path}: no such run directory")
    models = list_models(path)
    names = ", ".join(models) or "none"
    if name is None:
        if len(models) != 1:
            what = "saved no model" if not models else f"saved {len(models)} models ({names}): name one"
            raise UsageError(f"{path}: the run {what}")
        name = next(iter(models))
    if name not in models:
        raise UsageError(f"{path}: no model {name!r} (saved: {names})")
    folder = Path(models[name]["path"])
    cls = _import_class(models[name]["class"], folder)
    return _realigned(_load_strict(cls, folder, kwargs))


def _ecosystem(cls: type[Any]) -> str:
    """Which save/load ecosystem ``cls`` belongs to, by its bases' modules (imports nothing new)."""
    for base in cls.__mro__:
        module, qual = base.__module__, base.__qualname__
        if module.startswith("huggingface_hub") and qual == "PyTorchModelHubMixin":
            return "hub"
        if module.startswith("transformers") and qual == "PreTrainedModel":
            return "transformers"
        if module.startswith("diffusers") and qual == "ModelMixin":
            return "diffusers"
    return "other"


def _load_strict(cls: type[Any], folder: Path, kwargs: dict[str, Any]) -> Any:
    """``cls.from_pretrained(folder, **kwargs)``, refusing a partial load.

    The ecosystems' own defaults are lenient: ``PyTorchModelHubMixin`` loads with ``strict=False`` and
    transformers/diffusers only *warn* about missing keys, so a saved model missing a weight would come
    back silently with that weight at its random initialisation. Here every key of the model must be in
    the file and every key of the file in the model (same shapes); otherwise a :class:`CheckpointError`
    names the folder and the keys. A caller who passes ``strict=`` (hub) or ``output_loading_info=``
    (transformers, diffusers) gets the ecosystem's own behaviour."""
    kind = _ecosystem(cls)
    try:
        if kind == "hub" and "strict" not in kwargs:
            return cls.from_pretrained(folder, strict=True, **kwargs)
        if kind in ("transformers", "diffusers") and "output_loading_info" not in kwargs:
            model, info = cls.from_pretrained(folder, output_loading_info=True, **kwargs)
            bad = {k: list(info.get(k) or []) for k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
            if any(bad.values()):
                raise RuntimeError("; ".join(f"{k.replace('_', ' ')}: {_keys(v)}" for k, v in bad.items() if v))
            return model
    except RuntimeError as err:
        what = " ".join(str(err).split()) or type(err).__name__
        what = what if len(what) <= 300 else what[:297] + "..."
        raise CheckpointError(
            f"{folder}: the saved weights do not match {cls.__name__} ({what}); refusing a partial load"
        ) from None
    return cls.from_pretrained(folder, **kwargs)


def _keys(keys: list[Any], show: int = 5) -> str:
    names = [str(k[0] if isinstance(k, tuple) else k) for k in keys]
    more = f" and {len(names) - show} more" if len(names) > show else ""
    return ", ".join(names[:show]) + more


#: Byte alignment of a fresh CPU allocation in torch (and what its vectorised kernels expect).
_ALIGN = 64


def _realigned(model: Any) -> Any:
    """``model`` with every parameter and buffer in memory aligned as a fresh allocation.

    safetensors hands tensors back at their offsets inside the file's buffer, which are not 64-byte
    aligned; CPU BLAS kernels then sum in another order, and the loaded model's outputs differ from the
    in-memory model's by an ulp (measured: 1.2e-7 on S²'s MLP denoiser). Copying such tensors once makes
    a loaded model compute bit for bit as the model that was saved. Non-torch objects pass through."""
    import torch

    if not isinstance(model, torch.nn.Module):
        return model
    with torch.no_grad():
        for t in (*model.parameters(), *model.buffers()):
            if t.device.type == "cpu" and t.numel() and t.data_ptr() % _ALIGN:
                t.data = t.data.clone()
    return model
