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
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from iclr26_shared.errors import DataError

__all__ = ["ADAPTER_CONFIG", "ADAPTER_WEIGHTS", "LoRALinear", "inject_lora", "load_adapter", "lora_parameters",
           "remove_lora", "save_adapter"]  # fmt: skip

#: PEFT's file names for an adapter's config and weights.
ADAPTER_CONFIG, ADAPTER_WEIGHTS = "adapter_config.json", "adapter_model.safetensors"


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


def inject_lora(model: nn.Module, rank: int, scale: float, targets: Sequence[str]) -> list[LoRALinear]:
    """Wrap every ``nn.Linear`` below a module whose class name is in ``targets``; returns the new adapters.

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
    adapters = []
    for parent, child_name, child in found:
        adapter = LoRALinear(child, rank, scale)
        setattr(parent, child_name, adapter)
        adapters.append(adapter)
    return adapters


def lora_parameters(model: nn.Module) -> list[torch.Tensor]:
    """The ``A``/``B`` parameters of every adapter in ``model``."""
    return [p for m in model.modules() if isinstance(m, LoRALinear) for p in (m.lora_down.weight, m.lora_up.weight)]


def remove_lora(model: nn.Module) -> int:
    """Put the wrapped ``nn.Linear`` back in place of every adapter; returns how many were removed."""
    n = 0
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
    if any(isinstance(m, LoRALinear) for m in net.modules()):
        raise DataError("the model already has LoRA adapters; load the adapter into the base model")
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
