"""LoRA adapters injected into the linear layers of attention blocks (ProteinTTT's ``lora_rank > 0`` mode).

Follows ``lora_diffusion.inject_trainable_lora`` (cloneofsimo/lora), which the ProteinTTT code calls with
``target_replace_module="MultiheadAttention"``: every ``nn.Linear`` inside a module whose class name is a
target becomes

    y = W x + b + scale · B(A x),   A: [r, d_in] ~ N(0, 1/r²),   B: [d_out, r] = 0,

so the injected model computes exactly the original function until ``B`` moves; ``scale`` is the paper's
``lora_alpha`` (32; lora_diffusion uses it as a plain multiplier, not ``alpha / r``). Only ``A`` and ``B``
train. :func:`remove_lora` puts the original ``nn.Linear`` objects back.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

__all__ = ["LoRALinear", "inject_lora", "lora_parameters", "remove_lora"]


class LoRALinear(nn.Module):
    """``linear(x) + scale · up(down(x))``; ``linear`` is the wrapped (frozen) original layer.

    Shapes: ``x [..., d_in] -> [..., d_out]``.
    """

    def __init__(self, linear: nn.Linear, rank: int, scale: float) -> None:
        super().__init__()
        if rank < 1:
            raise ValueError(f"LoRA rank must be >= 1, got {rank}")
        self.linear = linear
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
