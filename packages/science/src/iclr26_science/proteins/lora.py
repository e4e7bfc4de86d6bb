"""LoRA adapters injected into the linear layers of attention blocks (ProteinTTT's ``lora_rank > 0`` mode).

Follows ``lora_diffusion.inject_trainable_lora`` (cloneofsimo/lora), which the ProteinTTT code calls with
``target_replace_module="MultiheadAttention"``: every ``nn.Linear`` inside a module whose class name is a
target becomes

    y = W x + b + scale · B(A x),   A: [r, d_in] ~ N(0, 1/r²),   B: [d_out, r] = 0,

so the injected model computes exactly the original function until ``B`` moves; ``scale`` is the paper's
``lora_alpha`` (32; lora_diffusion uses it as a plain multiplier, not ``alpha / r``). Only ``A`` and ``B``
train. :func:`remove_lora` puts the original ``nn.Linear`` objects back.

:func:`save_adapter` writes the adapters alone in Hugging Face PEFT's file layout (``adapter_config.json``
with ``r``, ``lora_alpha = scale · r`` and the adapted layers' paths as ``target_modules``;
``adapter_model.safetensors`` with ``base_model.model.<path>.lora_A.weight`` = ``A`` and ``lora_B.weight``
= ``B``), so ``peft.PeftModel.from_pretrained(network, folder)`` reads the same files (PEFT's output is
``W x + (lora_alpha / r) · B A x``, i.e. the same ``scale``); :func:`load_adapter` reads them without PEFT
and injects the adapters into a freshly loaded base model.

**Hugging Face models** (``transformers`` ``PreTrainedModel``: HF ESM-2, AntiBERTy's BERT) go through the
``peft`` library instead: :func:`inject_lora` builds ``peft.LoraConfig(r, lora_alpha = scale · r,
target_modules = <the same linear layers>, init_lora_weights="gaussian")`` (PEFT's gaussian init is
``A ~ N(0, 1/r²)``, ``B = 0``, as above) and calls ``peft.get_peft_model`` (the LoRA layers go into the
network in place), :func:`save_adapter` is the ``PeftModel``'s ``save_pretrained`` (adapter only),
:func:`load_adapter` is ``peft.PeftModel.from_pretrained`` and :func:`remove_lora` its ``unload()``. Our
own :class:`LoRALinear` is kept for fair-esm's ``ESM2`` (not a ``PreTrainedModel``; the reference code
adapts it with lora_diffusion), whose files are in the same layout.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from iclr26_shared.errors import DataError

__all__ = ["ADAPTER_CONFIG", "ADAPTER_WEIGHTS", "LoRALinear", "inject_lora", "load_adapter", "lora_parameters",
           "lora_scales", "remove_lora", "save_adapter"]  # fmt: skip

#: PEFT's file names for an adapter's config and weights.
ADAPTER_CONFIG, ADAPTER_WEIGHTS = "adapter_config.json", "adapter_model.safetensors"
#: network -> the ``peft.PeftModel`` whose LoRA layers it holds (not a submodule: no cycle in the module tree).
_PEFT: weakref.WeakKeyDictionary[nn.Module, Any] = weakref.WeakKeyDictionary()


def _is_hf(net: nn.Module) -> bool:
    """A ``transformers`` ``PreTrainedModel`` (the networks PEFT adapts here)."""
    try:
        from transformers import PreTrainedModel
    except ImportError:  # pragma: no cover - the proteins extra installs it
        return False
    return isinstance(net, PreTrainedModel)


def _peft_lora_layers(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """PEFT's LoRA layers in ``model``: modules with a ``lora_A`` ``ModuleDict`` (``peft.tuners.lora.LoraLayer``)."""
    return [(n, m) for n, m in model.named_modules() if isinstance(getattr(m, "lora_A", None), nn.ModuleDict)]


class LoRALinear(nn.Module):
    """``linear(x) + scale · up(down(x))``; ``linear`` is the wrapped (frozen) original layer.

    Shapes: ``x [..., d_in] -> [..., d_out]``.
    """

    def __init__(self, linear: nn.Linear, rank: int, scale: float) -> None:
        super().__init__()
        if rank < 1:
            raise ValueError(f"LoRA rank must be >= 1, got {rank}")
        self.linear = linear
        self.rank = int(rank)
        self.scale = float(scale)
        self.lora_down = nn.Linear(linear.in_features, rank, bias=False, device=linear.weight.device)
        self.lora_up = nn.Linear(rank, linear.out_features, bias=False, device=linear.weight.device)
        nn.init.normal_(self.lora_down.weight, std=1.0 / rank)
        nn.init.zeros_(self.lora_up.weight)
        self.lora_down.to(linear.weight.dtype)
        self.lora_up.to(linear.weight.dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x) + self.lora_up(self.lora_down(x)) * self.scale


def inject_lora(model: nn.Module, rank: int, scale: float, targets: Sequence[str]) -> list[nn.Module]:
    """Wrap every ``nn.Linear`` below a module whose class name is in ``targets``; returns the new adapters
    (:class:`LoRALinear`, or PEFT's LoRA layers for a ``transformers`` network).

    Raises ValueError when no linear layer was found (a wrong ``targets`` would otherwise train nothing).
    """
    names = set(targets)
    found: list[tuple[nn.Module, str, nn.Linear]] = []
    seen: set[int] = set()
    for ancestor in model.modules():
        if type(ancestor).__name__ not in names:
            continue
        for parent in ancestor.modules():
            if isinstance(parent, LoRALinear):
                continue
            for child_name, child in parent.named_children():
                if isinstance(child, nn.Linear) and id(child) not in seen:
                    seen.add(id(child))
                    found.append((parent, child_name, child))
    if not found:
        raise ValueError(f"no nn.Linear inside modules of class {sorted(names)}: nothing to adapt with LoRA")
    net = _network(model)
    if _is_hf(net):
        return _inject_peft(net, rank, scale, found)
    adapters: list[nn.Module] = []
    for parent, child_name, child in found:
        adapter = LoRALinear(child, rank, scale)
        setattr(parent, child_name, adapter)
        adapters.append(adapter)
    return adapters


def _inject_peft(
    net: nn.Module, rank: int, scale: float, found: list[tuple[nn.Module, str, nn.Linear]]
) -> list[nn.Module]:
    """``peft.get_peft_model`` with LoRA on exactly the linear layers ``found`` (output scale ``scale``)."""
    import warnings

    from peft import LoraConfig, get_peft_model

    paths = {id(m): n for n, m in net.named_modules()}
    alpha: Any = scale * rank  # PEFT types lora_alpha as int but divides it by r as a float
    config = LoraConfig(
        r=rank, lora_alpha=alpha, target_modules=sorted(paths[id(child)] for _, _, child in found),
        lora_dropout=0.0, bias="none", init_lora_weights="gaussian",
    )  # fmt: skip
    with warnings.catch_warnings():  # transformers' deprecation of an attribute PEFT reads, not ours
        warnings.simplefilter("ignore", FutureWarning)
        _PEFT[net] = get_peft_model(net, config)  # pyright: ignore[reportArgumentType]
    return [m for _, m in _peft_lora_layers(net)]


def lora_scales(model: nn.Module) -> set[float]:
    """The output scales ``s`` of the adapters in ``model`` (``y = W x + s · B A x``)."""
    ours = {m.scale for m in model.modules() if isinstance(m, LoRALinear)}
    return ours | {float(m.__dict__["scaling"]["default"]) for _, m in _peft_lora_layers(model)}


def lora_parameters(model: nn.Module) -> list[torch.Tensor]:
    """The ``A``/``B`` parameters of every adapter in ``model`` (ours or PEFT's)."""
    ours = [p for m in model.modules() if isinstance(m, LoRALinear) for p in (m.lora_down.weight, m.lora_up.weight)]
    peft: list[torch.Tensor] = []
    for _, m in _peft_lora_layers(model):
        for name in ("lora_A", "lora_B"):
            table: nn.ModuleDict = getattr(m, name)
            peft += [p for layer in table.values() for p in layer.parameters()]
    return ours + peft


def remove_lora(model: nn.Module) -> int:
    """Put the wrapped ``nn.Linear`` back in place of every adapter (PEFT's ``unload()`` for a
    ``transformers`` network); returns how many were removed."""
    net = _network(model)
    peft_model = _PEFT.pop(net, None)
    n_peft = len(_peft_lora_layers(net))
    if peft_model is not None:
        peft_model.unload()
    elif n_peft:
        raise RuntimeError(
            "the network holds PEFT LoRA layers that were not added here; call unload() on its PeftModel"
        )
    n = n_peft
    for parent in list(model.modules()):
        for child_name, child in list(parent.named_children()):
            if isinstance(child, LoRALinear):
                setattr(parent, child_name, child.linear)
                n += 1
    return n


def _network(model: Any) -> nn.Module:
    """The user's network inside a :class:`~iclr26_science.proteins.lm.MaskedLM` (adapter paths are relative
    to it, as PEFT's are), or ``model`` itself."""
    net = getattr(model, "net", None)
    return net if isinstance(net, nn.Module) else model


def save_adapter(model: Any, folder: str | Path, *, base_model: str = "") -> Path:
    """Write the LoRA adapters of ``model`` (a MaskedLM or a network) to ``folder`` in PEFT's layout; the
    frozen base weights are not written. ``base_model``: a name recorded as ``base_model_name_or_path``.
    Returns the folder; a model without adapters is a one-line DataError."""
    from safetensors.torch import save_file

    net = _network(model)
    peft_model = _PEFT.get(net)
    if peft_model is not None:
        out = Path(folder)
        peft_model.save_pretrained(str(out))  # adapter_config.json + adapter_model.safetensors (adapter only)
        return out
    adapters = [(name, m) for name, m in net.named_modules() if isinstance(m, LoRALinear)]
    if not adapters:
        raise DataError("the model has no LoRA adapters to save (adapt it with TTTSettings(lora_rank=r) first)")
    ranks = {m.rank for _, m in adapters}
    scales = {m.scale for _, m in adapters}
    if len(ranks) != 1 or len(scales) != 1:
        raise DataError(f"the adapters differ in rank {sorted(ranks)} or scale {sorted(scales)}; one of each saves")
    rank, scale = ranks.pop(), scales.pop()
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    tensors = {}
    for name, m in adapters:
        tensors[f"base_model.model.{name}.lora_A.weight"] = m.lora_down.weight.detach().cpu().contiguous()
        tensors[f"base_model.model.{name}.lora_B.weight"] = m.lora_up.weight.detach().cpu().contiguous()
    save_file(tensors, str(out / ADAPTER_WEIGHTS), metadata={"format": "pt"})
    config = {
        "peft_type": "LORA", "task_type": None, "base_model_name_or_path": base_model or type(net).__name__,
        "r": rank, "lora_alpha": scale * rank, "target_modules": [name for name, _ in adapters],
        "lora_dropout": 0.0, "bias": "none", "fan_in_fan_out": False, "use_rslora": False,
        "init_lora_weights": True, "inference_mode": True,
    }  # fmt: skip
    (out / ADAPTER_CONFIG).write_text(json.dumps(config, indent=2) + "\n")
    return out


def load_adapter(model: Any, folder: str | Path, *, vocab: Any = None) -> Any:
    """Inject the adapters saved in ``folder`` (by :func:`save_adapter` or PEFT, LoRA on ``nn.Linear``
    layers) into ``model`` (any kind :func:`~iclr26_science.proteins.lm.as_masked_lm` takes: load the base
    model as usual first) and return it as a :class:`~iclr26_science.proteins.lm.MaskedLM` that computes
    the adapted function. Missing files, a layer path the model lacks or a shape mismatch are one line."""
    from safetensors.torch import load_file

    from iclr26_science.proteins.lm import as_masked_lm

    src = Path(folder)
    cfg_path, weights_path = src / ADAPTER_CONFIG, src / ADAPTER_WEIGHTS
    for path in (cfg_path, weights_path):
        if not path.is_file():
            raise DataError(f"{src}: no {path.name} (expected a LoRA adapter saved by save_adapter or PEFT)")
    cfg = json.loads(cfg_path.read_text())
    if cfg.get("peft_type", "LORA") != "LORA" or cfg.get("use_rslora") or cfg.get("fan_in_fan_out"):
        raise DataError(f"{cfg_path}: only plain LoRA adapters load (peft_type LORA, no rsLoRA, no fan_in_fan_out)")
    rank, alpha, targets = int(cfg["r"]), float(cfg["lora_alpha"]), list(cfg["target_modules"])
    weights = load_file(str(weights_path))
    lm = as_masked_lm(model, vocab)
    net = _network(lm)
    if any(isinstance(m, LoRALinear) for m in net.modules()) or _peft_lora_layers(net):
        raise DataError("the model already has LoRA adapters; load the adapter into the base model")
    if _is_hf(net):
        _load_peft(net, src, cfg_path, weights_path)
        return lm
    for name in targets:
        try:
            layer = net.get_submodule(name)
        except AttributeError:
            raise DataError(f"{cfg_path}: the model has no layer {name!r} (was the adapter saved from it?)") from None
        if not isinstance(layer, nn.Linear):
            raise DataError(f"{cfg_path}: {name!r} is a {type(layer).__name__}, not an nn.Linear")
        a = weights.get(f"base_model.model.{name}.lora_A.weight")
        b = weights.get(f"base_model.model.{name}.lora_B.weight")
        if a is None or b is None:
            raise DataError(f"{weights_path}: no lora_A/lora_B weights for {name!r}")
        if a.shape != (rank, layer.in_features) or b.shape != (layer.out_features, rank):
            raise DataError(f"{weights_path}: {name!r} has A {tuple(a.shape)} and B {tuple(b.shape)}, expected "
                            f"{(rank, layer.in_features)} and {(layer.out_features, rank)}")  # fmt: skip
        adapter = LoRALinear(layer, rank, alpha / rank)
        with torch.no_grad():
            adapter.lora_down.weight.copy_(a)
            adapter.lora_up.weight.copy_(b)
        parent_name, _, child = name.rpartition(".")
        setattr(net.get_submodule(parent_name) if parent_name else net, child, adapter)
    return lm


def _load_peft(net: nn.Module, src: Path, cfg_path: Path, weights_path: Path) -> None:
    """``peft.PeftModel.from_pretrained(net, src)`` (LoRA layers into ``net`` in place), errors as one line."""
    import warnings

    from peft import PeftModel

    try:
        with warnings.catch_warnings():  # transformers' deprecation of an attribute PEFT reads, not ours
            warnings.simplefilter("ignore", FutureWarning)
            _PEFT[net] = PeftModel.from_pretrained(net, str(src))  # pyright: ignore[reportArgumentType]
    except (ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{cfg_path}: not a LoRA adapter for this model ({str(exc).splitlines()[0]})") from None
    except RuntimeError as exc:  # load_state_dict: a shape mismatch
        raise DataError(f"{weights_path}: adapter weights do not fit the model ({str(exc).splitlines()[0]})") from None
