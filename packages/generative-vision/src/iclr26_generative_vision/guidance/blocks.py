"""Finding a denoiser's stack of blocks and making custom blocks skippable by diffusers' layer-skip hooks.

diffusers skips a block with ``TransformerBlockSkipHook``: the block's forward is replaced by one that returns
its ``hidden_states`` input unchanged (an identity), which is exactly the "dropped block" of S²-Guidance
(Eq. 2, ``D(x_t | c; θ ⊙ m)`` with the masked blocks' residual branches removed). The hook needs the block
class to be known to diffusers' ``TransformerBlockRegistry``; :func:`register_skippable_block` registers our
own blocks (whose ``forward`` takes ``hidden_states`` first and returns one tensor).
"""

from __future__ import annotations

import torch
from diffusers.hooks._common import _ALL_TRANSFORMER_BLOCK_IDENTIFIERS
from diffusers.hooks._helpers import TransformerBlockMetadata, TransformerBlockRegistry

from iclr26_shared.errors import ConfigError

__all__ = ["find_blocks", "is_skippable", "register_skippable_block"]


def register_skippable_block(block_cls: type[torch.nn.Module]) -> type[torch.nn.Module]:
    """Register ``block_cls`` (forward ``(hidden_states, ...) -> hidden_states``) for diffusers' skip hooks.

    Usable as a class decorator; registering twice is harmless.
    """
    TransformerBlockRegistry.register(
        model_class=block_cls,
        # diffusers annotates the index as int but registers its own single-stream blocks with None, as here
        metadata=TransformerBlockMetadata(return_hidden_states_index=0, return_encoder_hidden_states_index=None),  # pyright: ignore[reportArgumentType]
    )
    return block_cls


def is_skippable(block: torch.nn.Module) -> bool:
    """Whether diffusers' ``TransformerBlockSkipHook`` knows how to skip ``block``."""
    try:
        TransformerBlockRegistry.get(type(block))
    except ValueError:
        return False
    return True


def find_blocks(denoiser: torch.nn.Module, fqn: str = "auto") -> tuple[str, torch.nn.ModuleList]:
    """The denoiser's block stack as ``(fully qualified name, ModuleList)``.

    ``fqn="auto"`` looks for the attribute names diffusers' layer-skip hooks know (``transformer_blocks``,
    ``blocks``, ``layers``, ...). Raises :class:`ConfigError` naming ``fqn`` when nothing suitable exists.
    """
    if fqn == "auto":
        for name in sorted(_ALL_TRANSFORMER_BLOCK_IDENTIFIERS):
            if isinstance(getattr(denoiser, name, None), torch.nn.ModuleList):
                fqn = name
                break
        else:
            raise ConfigError(
                "fqn",
                "auto",
                f"a block stack on {type(denoiser).__name__}: none of {sorted(_ALL_TRANSFORMER_BLOCK_IDENTIFIERS)} "
                "is a torch.nn.ModuleList; pass the name of the stack",
            )
    blocks = dict(denoiser.named_modules()).get(fqn)
    if not isinstance(blocks, torch.nn.ModuleList):
        raise ConfigError("fqn", fqn, f"the name of a torch.nn.ModuleList of blocks in {type(denoiser).__name__}")
    if len(blocks) == 0:
        raise ConfigError("fqn", fqn, "a non-empty block stack")
    for i, block in enumerate(blocks):
        if not is_skippable(block):
            raise ConfigError(
                "fqn",
                fqn,
                f"blocks that diffusers' skip hooks support; block {i} ({type(block).__name__}) is unknown to "
                "diffusers' TransformerBlockRegistry (register it with register_skippable_block)",
            )
    return fqn, blocks
