"""The ``protein-ttt`` :class:`MethodSpec` (light: train/claims load when called)."""

from __future__ import annotations

from iclr26_shared.spec import MethodSpec

__all__ = ["SPEC"]

SPEC = MethodSpec.from_module(
    "iclr26_science.methods.protein_ttt",
    name="protein-ttt",
    paper="One protein is all you need: test-time training of protein models (Bushuiev, Bushuiev, Zadorozhny, "
    "Samusevich, Stärk, Sedlar, Pluskal, Sivic; ICLR 2026, arXiv 2411.02109)",
    summary="ProteinTTT: masked-LM test-time training on one protein (AntiBERTy from its wheel; ESM-2 when its "
    "weights are local): perplexity on real sequences, zero-shot fitness on Potts families with exact "
    "ground truth, exact reset",
)
