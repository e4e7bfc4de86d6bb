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

import functools
import importlib
import importlib.metadata
import json
import os
import pickle
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iclr26_shared.errors import CheckpointError, UsageError

if TYPE_CHECKING:
    from iclr26_shared.runs import RunDir

__all__ = [
    "MODELS_DIR",
    "META_FILE",
    "allowed_modules",
    "list_models",
    "load_model",
    "model_dir",
    "manifest_problem",
    "model_problem",
    "resolve_class",
    "save_model",
]

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
        # the manifest: every file save_pretrained wrote and its size, so that a listing can tell a folder
        # that lost or cut one (a missing weights file beside other files) without importing anything
        files = {p.relative_to(tmp).as_posix(): p.stat().st_size for p in sorted(tmp.rglob("*")) if p.is_file()}
        meta = {"name": name, "class": _class_path(model), "extra": dict(extra or {}), "files": files}
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


def manifest_problem(meta: Mapping[str, Any], folder: Path) -> str | None:
    """The first file of the folder's manifest (``files`` in ``iclr26_model.json``: every file ``save_pretrained``
    wrote, with its size in bytes at the save; folders saved before it existed have none and pass) that is
    missing now, as one line; ``None`` when all are there. (A file's content is checked by the readers:
    safetensors and JSON here, the class's ``from_pretrained`` at load time.)"""
    files = meta.get("files")
    if not isinstance(files, Mapping):
        return None
    for rel in files:
        file = folder / str(rel)
        if not file.is_file():
            return f"{file}: missing (the model was saved with it); the saved model is incomplete"
    return None


def model_problem(meta: Mapping[str, Any]) -> str | None:
    """What keeps :func:`load_model` from loading one :func:`list_models` entry, found without importing
    anything (no torch): a file of the save's manifest missing (:func:`manifest_problem`),
    a class name that is not ``module:Class``, a weights file that is not a whole safetensors file, a
    ``config.json`` that is not JSON, a folder with no file beside the two JSON files;
    ``None`` when these checks pass (a class outside :func:`allowed_modules` is not a
    problem: it loads with ``trust_class=``)."""
    folder = Path(str(meta.get("path", "")))
    missing = manifest_problem(meta, folder)
    if missing:
        return missing
    try:
        _class_spec(meta.get("class"), folder)
        for file in sorted(folder.glob("*.safetensors")):
            _check_safetensors(file)
    except CheckpointError as err:
        return str(err)
    config = folder / "config.json"
    if config.is_file():
        try:
            json.loads(config.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            return f"{config}: not readable JSON ({_short(err)})"
    if not [p for p in folder.iterdir() if p.is_file() and p.name not in (META_FILE, "config.json")]:
        return f"{folder}: no weights file (only {META_FILE} and config.json); the saved model is incomplete"
    return None


#: Distributions whose own model classes a folder may name besides the iclr26 packages: the ecosystems'
#: model classes saved as they are (a ``transformers`` language model, a ``diffusers`` backbone).
ECOSYSTEM_PACKAGES = ("transformers", "diffusers")

_import_lock = threading.Lock()


def _top_level_of_dist(dist: importlib.metadata.Distribution) -> set[str]:
    """The importable top-level names a distribution installs (its files, or ``top_level.txt``)."""
    names: set[str] = set()
    for line in (dist.read_text("top_level.txt") or "").split():
        names.add(line.strip())
    for file in dist.files or ():
        parts = file.parts
        if len(parts) > 1 and parts[0].isidentifier():
            names.add(parts[0])
        elif len(parts) == 1 and file.suffix == ".py" and file.stem.isidentifier():
            names.add(file.stem)
    return {n for n in names if n and n.isidentifier()}


@functools.cache
def allowed_modules() -> frozenset[str]:
    """Top-level packages whose classes :func:`load_model` may import without ``trust_class``.

    ``iclr26_shared``; the top-level packages of every installed distribution that declares an
    ``iclr26.methods`` entry point (from the entry points' own modules and the distribution's files, so
    an editable install counts as a wheel does); and the ecosystems' packages in
    :data:`ECOSYSTEM_PACKAGES`. Nothing on the current directory or inside a run folder is ever one of
    them (the import itself runs with those off ``sys.path``)."""
    names = {"iclr26_shared", *ECOSYSTEM_PACKAGES}
    for ep in importlib.metadata.entry_points(group="iclr26.methods"):
        names.add(ep.value.split(":")[0].split(".")[0].strip())
        if ep.dist is not None:
            names |= _top_level_of_dist(ep.dist)
    return frozenset(n for n in names if n)


def _class_spec(path: object, where: Path) -> tuple[str, str]:
    """``"module:Qual.name"`` split and checked for shape (no import)."""
    module, sep, qualname = path.partition(":") if isinstance(path, str) else ("", "", "")
    ok = (
        bool(sep)
        and all(p.isidentifier() for p in module.split("."))
        and all(p.isidentifier() for p in qualname.split("."))
    )
    if not ok:
        raise CheckpointError(f"{where / META_FILE}: class {path!r}: expected 'package.module:ClassName'")
    return module, qualname


def _trusted_path(trust_class: type[Any] | str | None) -> str | None:
    if trust_class is None or isinstance(trust_class, str):
        return trust_class
    if isinstance(trust_class, type):
        return f"{trust_class.__module__}:{trust_class.__qualname__}"
    raise TypeError(f"trust_class={trust_class!r}: expected a class or a 'module:Class' string")


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except (OSError, ValueError):
        return False
    return True


def _unsafe_entry(entry: Path, cwd: Path, unsafe: list[Path]) -> bool:
    """A ``sys.path`` entry that is the current directory or lies inside one of ``unsafe``."""
    try:
        if entry.resolve() == cwd.resolve():
            return True
    except OSError:
        return True
    return any(_inside(entry, d) for d in unsafe)


def _import_without(module: str, unsafe: list[Path]) -> Any:
    """``importlib.import_module(module)`` with the current directory and ``unsafe`` folders (the run
    folder) taken off ``sys.path`` for the import; a module found inside them anyway is refused."""
    with _import_lock:
        saved = list(sys.path)
        cwd = Path.cwd()
        sys.path[:] = [e for e in saved if e not in ("", ".") and not _unsafe_entry(Path(e), cwd, unsafe)]
        try:
            mod = importlib.import_module(module)
        finally:
            sys.path[:] = saved
    origin = getattr(mod, "__file__", None)
    if origin and any(_inside(Path(origin), d) for d in unsafe):
        raise CheckpointError(f"module {module!r} resolves inside the run folder ({origin}); refusing it")
    return mod


def resolve_class(
    path: str,
    *,
    classes: Sequence[type] = (),
    trust: bool = False,
    base: type | None = None,
    error: Callable[[str], Exception] = CheckpointError,
    what: str = "class",
    prefix: str = "",
    refused: str = "",
    unsafe: Sequence[Path] = (),
) -> type[Any]:
    """The class a saved config names as ``"module:QualName"`` (a user's module that a library object
    rebuilds from its class and init arguments), found by one policy for every loader:

    1. one of ``classes`` (the caller's own classes) with the same ``module:QualName``, else the same
       ``QualName``: nothing is imported;
    2. else from its module when that module is already imported (``sys.modules``: no code runs that has
       not run already) or is one of :func:`allowed_modules` (this workspace's installed packages,
       transformers, diffusers);
    3. else, only with ``trust=True`` (the caller vouches for the saved name), imported.

    Every import runs with the current directory and the ``unsafe`` folders (the saved folder) off
    ``sys.path``, and a module found inside ``unsafe`` anyway is refused: a folder that ships its own
    module never gets it imported (:func:`load_model` follows the same rule with its own allow-list).

    Failures are one line, raised as ``error(message)`` and starting with ``prefix``: a malformed name; a
    module outside steps 1-2 without ``trust`` (``refused``, formatted with ``{path}`` and ``{module}``,
    says what to pass; default ``"the <what> <path> is not imported"``); ``"cannot import the <what>
    <path> (<reason>)"``; ``"the <what> <path> is not a class"`` (a subclass of ``base`` when given)."""
    module, sep, qual = path.partition(":") if isinstance(path, str) else ("", "", "")
    if not (sep and module and all(p.isidentifier() for p in qual.split("."))):
        raise error(f"{prefix}the {what} {path!r}: expected 'package.module:ClassName'")
    given = list(classes)
    found: Any = next((c for c in given if f"{c.__module__}:{c.__qualname__}" == path), None)
    found = found or next((c for c in given if c.__qualname__ == qual), None)
    if found is None and module not in sys.modules and not all(p.isidentifier() for p in module.split(".")):
        raise error(f"{prefix}the {what} {path!r}: expected 'package.module:ClassName'")
    if found is None:
        if module not in sys.modules and module.split(".")[0] not in allowed_modules() and not trust:
            text = refused.format(path=path, module=module) if refused else f"the {what} {path} is not imported"
            raise error(prefix + text)
        try:
            found = sys.modules[module] if module in sys.modules else _import_without(module, list(unsafe))
            for part in qual.split("."):
                found = getattr(found, part)
        except (ImportError, AttributeError, ValueError, CheckpointError) as err:
            raise error(f"{prefix}cannot import the {what} {path} ({' '.join(str(err).split())})") from None
    if not isinstance(found, type) or (base is not None and not issubclass(found, base)):
        kind = f"a {base.__module__.split('.')[0]} {base.__qualname__} class" if base is not None else "a class"
        raise error(f"{prefix}the {what} {path} is not {kind}")
    return found


def _import_class(path: object, where: Path, run: Path, trust_class: type[Any] | str | None = None) -> type[Any]:
    """The class ``path`` ("module:Class") names, imported only if allowed (see :func:`allowed_modules`).

    ``trust_class`` (a class, or its ``"module:Class"``) is what the caller vouches for: it must be the
    class the folder names; a class object is used as it is, without any import. Everything is checked
    before anything is imported; a refusal is a :class:`CheckpointError`."""
    module, qualname = _class_spec(path, where)
    trusted = _trusted_path(trust_class)
    if trusted is not None and trusted != path:
        raise CheckpointError(f"{where / META_FILE}: names class {path!r}, not the trusted {trusted!r}")
    if isinstance(trust_class, type):
        return trust_class
    top = module.split(".")[0]
    if trusted is None and top not in allowed_modules():
        raise CheckpointError(
            f"{where / META_FILE}: class {path!r} is not from an installed iclr26 package, transformers or "
            f"diffusers; refusing to import {module!r} (pass trust_class= if you vouch for it)"
        )
    try:
        obj: Any = _import_without(module, [run, where])
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as err:
        raise CheckpointError(
            f"{where / META_FILE}: class {path!r} cannot be imported ({err}); install the package that saved it"
        ) from None
    if not isinstance(obj, type) or not callable(getattr(obj, "from_pretrained", None)):
        raise CheckpointError(f"{where / META_FILE}: {path!r} is not a model class with from_pretrained")
    return obj


def load_model(
    run_dir: str | os.PathLike[str] | RunDir,
    name: str | None = None,
    *,
    trust_class: type[Any] | str | None = None,
    **kwargs: Any,
) -> Any:
    """The model a run saved as ``name`` (default: the run's only model), loaded offline from its folder.

    The folder's ``iclr26_model.json`` names the class to load it with; only a class of an installed
    iclr26 package (a distribution declaring ``iclr26.methods``), of ``iclr26_shared``, or of
    transformers/diffusers is imported (:func:`allowed_modules`), and never from the current directory
    or the run folder, which are off ``sys.path`` for that import. ``trust_class`` (a class object, or a
    ``"module:Class"`` string) is the caller vouching for one class outside that list, as transformers'
    ``trust_remote_code``: it must be the class the folder names. ``kwargs`` go to the class's
    ``from_pretrained`` (e.g. ``map_location="cuda"`` for a PyTorchModelHubMixin model). Torch models
    come back in eval mode, as ``from_pretrained`` leaves them.

    Raises:
        UsageError: the run saved no model, several (and ``name`` is None), or none called ``name``; the
            message lists the names there are.
        CheckpointError: the folder names a class outside the allowed packages (refused before any
            import), a name that is not a model class, a missing or truncated weights file or one that is
            not safetensors; or its weights miss a key of the model, hold one it does not have, or differ
            in a shape (the ecosystems' lenient defaults would load such a file partially).
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
    missing = manifest_problem(models[name], folder)
    if missing:  # before any import
        raise CheckpointError(missing)
    cls = _import_class(models[name]["class"], folder, path, trust_class)
    _check_weights(folder, _ecosystem(cls))
    return _realigned(_load_strict(cls, folder, kwargs))


#: The largest safetensors header we read (the format's own reader refuses more than 100 MB).
_MAX_HEADER = 100_000_000


def _check_safetensors(file: Path) -> None:
    """A one-line :class:`CheckpointError` unless ``file`` is a whole safetensors file: an 8-byte
    header length, a JSON header that fits the file, and every tensor's bytes inside it (a truncated
    file, or a pickle/zip named ``.safetensors``, is refused here, before torch reads it)."""
    try:
        size = file.stat().st_size
        with file.open("rb") as fh:
            head = fh.read(8)
            n = int.from_bytes(head, "little") if len(head) == 8 else -1
            if n < 2 or n > _MAX_HEADER or 8 + n > size:
                raise CheckpointError(f"{file}: not a whole safetensors file (truncated, or another format)")
            header = json.loads(fh.read(n))
    except OSError as err:
        raise CheckpointError(f"{file}: cannot be read ({err.strerror or err})") from None
    except (ValueError, UnicodeDecodeError):
        raise CheckpointError(f"{file}: not a safetensors file (its header is not JSON)") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{file}: not a safetensors file (its header is not a JSON object)")
    end = 0
    for key, entry in header.items():
        if key == "__metadata__":
            continue
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(o, int) for o in offsets)):
            raise CheckpointError(f"{file}: tensor {key!r} has no valid data_offsets; not a safetensors file")
        end = max(end, offsets[1])
    if 8 + n + end > size:
        raise CheckpointError(f"{file}: truncated ({size} bytes, its header describes {8 + n + end})")


def _check_weights(folder: Path, kind: str) -> None:
    """Every safetensors file of ``folder`` whole; a torch ecosystem's folder holds at least one."""
    files = sorted(folder.glob("*.safetensors"))
    for file in files:
        _check_safetensors(file)
    if kind != "other" and not files:
        raise CheckpointError(f"{folder}: no weights file (*.safetensors); the saved model is incomplete")


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
        return cls.from_pretrained(folder, **kwargs)
    except CheckpointError:
        raise
    except RuntimeError as err:
        if type(err).__name__ == "SafetensorError":
            raise CheckpointError(f"{folder}: unreadable weights ({_short(err)})") from None
        raise CheckpointError(
            f"{folder}: the saved weights do not match {cls.__name__} ({_short(err)}); refusing a partial load"
        ) from None
    except (OSError, ValueError, TypeError, KeyError, EOFError, pickle.UnpicklingError) as err:
        # a missing/unreadable file, a config.json that is not JSON or does not fit the class's arguments
        raise CheckpointError(f"{folder}: {cls.__name__}.from_pretrained cannot load it ({_short(err)})") from None
    except Exception as err:
        if type(err).__name__ == "SafetensorError":  # safetensors_rust.SafetensorError (an Exception)
            raise CheckpointError(f"{folder}: unreadable weights ({_short(err)})") from None
        raise


def _short(err: BaseException, limit: int = 300) -> str:
    what = " ".join(str(err).split()) or type(err).__name__
    return what if len(what) <= limit else what[: limit - 3] + "..."


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
