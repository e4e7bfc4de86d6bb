"""Masked protein language models behind one interface: fair-esm's ESM-2 and Hugging Face BERT-style MLMs.

:class:`MaskedLM` wraps the network and its :class:`~iclr26_science.proteins.tokens.ProteinAlphabet`:
``lm(tokens [B, T]) -> logits [B, T, V]``; ``lm.token_embedding`` is the table ProteinTTT freezes
(``_ttt_get_frozen_modules = [embed_tokens]`` in the paper's code; the output projection of ESM-2 and
AntiBERTy is tied to it, so it stays frozen too).

Loaders (``transformers`` / ``esm`` are imported only inside them):

- :func:`load_antiberty`: AntiBERTy (Ruffolo et al. 2021, 26 M parameters, 558 M natural antibody
  sequences), whose weights ship inside the ``antiberty==0.1.3`` wheel (fetched once by sha256 into the data
  cache: :data:`iclr26_science.wheels.ANTIBERTY`); loaded straight into ``transformers.BertForMaskedLM`` and
  tokenised here (antiberty's own code is never installed or imported).
- :func:`esm2_from_config`: an ESM-2 network of any size built from its hyper-parameters (random weights:
  tests and architecture checks).
- :func:`load_esm2`: pretrained ESM-2 weights from a local file only (``$ICLR26_DATA/esm/<name>.pt``,
  torch hub's ``checkpoints/`` directory, or a path); absent weights give a one-line DataError saying where
  to put them. The checkpoint is read with ``torch.load(weights_only=True)`` and an allow-list of the one
  non-tensor type fair-esm's files hold (``argparse.Namespace``, the fairseq model config), so it loads
  under torch >= 2.6 without unpickling arbitrary code (fair-esm's own loader fails there).
- :func:`bert_from_config`: a small random BERT MLM over AntiBERTy's vocabulary (tests).
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
from pathlib import Path
from typing import Any, Literal

import torch
from torch import nn

from iclr26_science.proteins.tokens import ProteinAlphabet
from iclr26_science.wheels import ANTIBERTY
from iclr26_shared.data import data_root
from iclr26_shared.errors import DataError
from iclr26_shared.wheeldata import wheel_path

__all__ = [
    "ESM2_MODELS",
    "MaskedLM",
    "antiberty_alphabet",
    "as_masked_lm",
    "bert_from_config",
    "esm2_from_config",
    "esm_alphabet",
    "load_esm_checkpoint",
    "load_antiberty",
    "load_esm2",
]

#: Pretrained ESM-2 checkpoints fair-esm knows, with (layers, width, heads).
ESM2_MODELS: dict[str, tuple[int, int, int]] = {
    "esm2_t6_8M_UR50D": (6, 320, 20),
    "esm2_t12_35M_UR50D": (12, 480, 20),
    "esm2_t30_150M_UR50D": (30, 640, 20),
    "esm2_t33_650M_UR50D": (33, 1280, 20),
}


class MaskedLM(nn.Module):
    """A masked protein LM: token ids ``[B, T]`` (``[cls] residues [eos]``, ``pad`` after) -> logits ``[B, T, V]``.

    Args:
        net: The network (``esm.model.esm2.ESM2`` or a ``transformers`` ``*ForMaskedLM``).
        alphabet: Its token ids.
        kind: ``"esm2"`` (``net(tokens)["logits"]``) or ``"hf"`` (``net(input_ids=..., attention_mask=...).logits``).
        name: A label for reports.
    """

    def __init__(self, net: nn.Module, alphabet: ProteinAlphabet, kind: Literal["esm2", "hf"], name: str = "") -> None:
        super().__init__()
        self.net = net
        self.alphabet = alphabet
        self.kind = kind
        self.name = name or type(net).__name__

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if self.kind == "esm2":
            return self.net(tokens)["logits"]
        mask = (tokens != self.alphabet.pad).long()
        return self.net(input_ids=tokens, attention_mask=mask).logits

    @property
    def token_embedding(self) -> nn.Embedding:
        """The token-embedding table (frozen during TTT)."""
        if self.kind == "esm2":
            emb = self.net.get_submodule("embed_tokens")
        else:
            get = getattr(self.net, "get_input_embeddings", None)
            emb = get() if get is not None else None
        if not isinstance(emb, nn.Embedding):
            raise TypeError(f"{type(self.net).__name__} has no token-embedding table (nn.Embedding)")
        return emb

    @property
    def max_tokens(self) -> int | None:
        """The longest token sequence the network takes (specials included): a ``transformers`` model's
        ``max_position_embeddings`` when its positions are absolute (AntiBERTy: 512), else None (fair-esm
        ESM-2 and HF ESM use rotary embeddings)."""
        if self.kind != "hf":
            return None
        config = getattr(self.net, "config", None)
        if getattr(config, "position_embedding_type", "absolute") != "absolute":
            return None
        limit = getattr(config, "max_position_embeddings", None)
        return int(limit) if isinstance(limit, int) else None

    @property
    def device(self) -> torch.device:
        """Where the parameters live."""
        return next(self.parameters()).device


def as_masked_lm(model: Any, vocab: Any = None) -> MaskedLM:
    """Wrap a user's model for ProteinTTT and scoring.

    ``model``: a :class:`MaskedLM` (returned as is), a fair-esm ``esm.model.esm2.ESM2`` (alphabet from
    fair-esm), or a ``transformers`` masked LM such as ``EsmForMaskedLM`` (``vocab``: its tokenizer, or the
    ordered token list; default fair-esm's ESM-2 vocabulary, which HF ESM-2 checkpoints share).
    Anything else is a TypeError.
    """
    if isinstance(model, MaskedLM):
        return model
    if type(model).__name__ == "ESM2" and type(model).__module__.startswith("esm."):
        return MaskedLM(model, _esm_protein_alphabet(esm_alphabet()), "esm2", name="ESM-2")
    if isinstance(model, nn.Module) and hasattr(model, "get_input_embeddings") and hasattr(model, "config"):
        if vocab is None:
            tokens: list[str] = list(esm_alphabet().all_toks)
        elif hasattr(vocab, "get_vocab"):
            pairs = sorted(vocab.get_vocab().items(), key=lambda kv: kv[1])
            tokens = [t for t, _ in pairs]
        else:
            tokens = [str(t) for t in vocab]
        names = {
            "cls": ("<cls>", "[CLS]"),
            "eos": ("<eos>", "[SEP]"),
            "pad": ("<pad>", "[PAD]"),
            "mask": ("<mask>", "[MASK]"),
        }
        found = {k: next((t for t in v if t in tokens), None) for k, v in names.items()}
        missing = [v[0] for k, v in names.items() if found[k] is None]
        if missing:
            raise DataError(f"the model's vocabulary lacks the special tokens {missing}")
        alphabet = ProteinAlphabet.from_vocab(
            tokens, cls_tok=str(found["cls"]), eos_tok=str(found["eos"]), pad_tok=str(found["pad"]),
            mask_tok=str(found["mask"]),
        )  # fmt: skip
        return MaskedLM(model, alphabet, "hf", name=type(model).__name__)
    raise TypeError(
        f"cannot use a {type(model).__name__} as a masked protein LM: give a MaskedLM, a fair-esm ESM2 or a "
        "transformers *ForMaskedLM"
    )


def antiberty_alphabet() -> ProteinAlphabet:
    """AntiBERTy's 25-token vocabulary (``vocab.txt`` of the wheel, in id order)."""
    vocab = wheel_path(ANTIBERTY, "antiberty", "trained_models", "vocab.txt", purpose="the AntiBERTy protein LM")
    toks = [t.strip() for t in vocab.read_text().splitlines() if t.strip()]
    return ProteinAlphabet.from_vocab(toks, cls_tok="[CLS]", eos_tok="[SEP]", pad_tok="[PAD]", mask_tok="[MASK]")


def load_antiberty() -> MaskedLM:
    """AntiBERTy (``AntiBERTy_md_smooth``: 8 layers, width 512, 8 heads) as a ``BertForMaskedLM`` in eval mode.

    The checkpoint's extra species/chain/graft heads and pooler are ignored (they are not the MLM).
    """
    from transformers import BertConfig, BertForMaskedLM

    root = wheel_path(
        ANTIBERTY, "antiberty", "trained_models", "AntiBERTy_md_smooth", purpose="the AntiBERTy protein LM"
    )
    weights = root / "pytorch_model.bin"
    if not weights.is_file():
        raise DataError(f"{weights} is missing from the unpacked {ANTIBERTY.filename}")
    net = BertForMaskedLM(BertConfig.from_pretrained(str(root)))
    state = torch.load(weights, map_location="cpu", weights_only=True)
    missing, _unexpected = net.load_state_dict(state, strict=False)
    if missing:
        raise DataError(f"{weights} lacks the MLM weights {missing[:3]}")
    return MaskedLM(net.eval(), antiberty_alphabet(), "hf", name="AntiBERTy")


def bert_from_config(layers: int = 2, width: int = 32, heads: int = 2, seed: int = 0, dropout: float = 0.0) -> MaskedLM:
    """A random ``BertForMaskedLM`` over AntiBERTy's vocabulary (for tests and smoke runs)."""
    from transformers import BertConfig, BertForMaskedLM

    alphabet = antiberty_alphabet()
    cfg = BertConfig(
        vocab_size=len(alphabet), hidden_size=width, num_hidden_layers=layers, num_attention_heads=heads,
        intermediate_size=4 * width, max_position_embeddings=512, pad_token_id=alphabet.pad,
        hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
    )  # fmt: skip
    torch.manual_seed(seed)
    return MaskedLM(BertForMaskedLM(cfg).eval(), alphabet, "hf", name=f"random BERT {layers}x{width}")


def esm_alphabet() -> Any:
    """fair-esm's ESM-1b/ESM-2 alphabet object."""
    import esm

    return esm.data.Alphabet.from_architecture("ESM-1b")


def _esm_protein_alphabet(alphabet: Any) -> ProteinAlphabet:
    return ProteinAlphabet.from_vocab(
        alphabet.all_toks, cls_tok="<cls>", eos_tok="<eos>", pad_tok="<pad>", mask_tok="<mask>"
    )


def esm2_from_config(layers: int = 2, width: int = 32, heads: int = 2, seed: int = 0) -> MaskedLM:
    """An ESM-2 network (``esm.model.esm2.ESM2``) with random weights and the given size."""
    from esm.model.esm2 import ESM2

    alphabet = esm_alphabet()
    torch.manual_seed(seed)
    net = ESM2(num_layers=layers, embed_dim=width, attention_heads=heads, alphabet=alphabet, token_dropout=True)
    return MaskedLM(net.eval(), _esm_protein_alphabet(alphabet), "esm2", name=f"random ESM-2 {layers}x{width}")


def esm2_weights_path(name: str) -> Path:
    """Where :func:`load_esm2` looks for ``<name>.pt``: ``$ICLR26_DATA/esm/`` then torch hub's ``checkpoints/``."""
    candidates = []
    root = data_root()
    if root is not None:
        candidates.append(root / "esm" / f"{name}.pt")
    candidates.append(Path(torch.hub.get_dir()) / "checkpoints" / f"{name}.pt")
    for c in candidates:
        if c.is_file():
            return c
    raise DataError(
        f"ESM-2 weights {name}.pt not found (looked in {', '.join(map(str, candidates))}); download "
        f"https://dl.fbaipublicfiles.com/fair-esm/models/{name}.pt (and regression/{name}-contact-regression.pt) "
        "into $ICLR26_DATA/esm/ — they do not ship in any wheel"
    )


#: The non-tensor types a fair-esm checkpoint holds besides builtins (``cfg["model"]`` of ESM-2, ``args`` of
#: ESM-1): the allow-list of :func:`load_esm_checkpoint`.
ESM_CHECKPOINT_TYPES: tuple[type, ...] = (argparse.Namespace,)


def load_esm_checkpoint(path: str | Path) -> dict[str, Any]:
    """Read a fair-esm ``.pt`` file with ``torch.load(weights_only=True)`` and :data:`ESM_CHECKPOINT_TYPES`
    allowed; a file holding anything else is a one-line DataError naming the type."""
    path = Path(path)
    try:
        with torch.serialization.safe_globals(list(ESM_CHECKPOINT_TYPES)):
            data = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as e:
        found = re.search(r"GLOBAL (\S+)", str(e))
        what = f"holds {found.group(1)}" if found else str(e).splitlines()[0]
        raise DataError(
            f"{path}: not a fair-esm checkpoint that loads safely ({what}; allowed besides tensors: "
            f"{', '.join(t.__module__ + '.' + t.__qualname__ for t in ESM_CHECKPOINT_TYPES)})"
        ) from None
    except (OSError, RuntimeError, EOFError) as e:
        raise DataError(f"{path}: cannot read the checkpoint ({type(e).__name__}: {str(e).splitlines()[0]})") from None
    if not isinstance(data, dict) or "model" not in data:
        raise DataError(f"{path}: not a fair-esm checkpoint (expected a dict with 'model' and 'cfg')")
    return data


def load_esm2(name: str | Path) -> MaskedLM:
    """Pretrained ESM-2 from a local checkpoint (never downloads; see :func:`esm2_weights_path`).

    ``name`` is one of :data:`ESM2_MODELS` (looked up locally) or the path of a ``<esm2_...>.pt`` file in
    fair-esm's layout (``{"cfg": {"model": Namespace(encoder_layers, encoder_embed_dim,
    encoder_attention_heads, token_dropout)}, "model": state_dict}``); the contact-regression weights
    (``<name>-contact-regression.pt`` beside it) are read when present (ProteinTTT does not use them).
    """
    if isinstance(name, Path) or str(name).endswith(".pt"):
        path = Path(name)
        if not path.is_file():
            raise DataError(f"ESM-2 checkpoint {path} not found")
        if not path.stem.startswith("esm2"):
            raise DataError(f"{path}: the file name must start with 'esm2' (fair-esm picks the architecture by it)")
    elif name not in ESM2_MODELS:
        raise DataError(f"unknown ESM-2 model {name!r}; known: {', '.join(ESM2_MODELS)}")
    else:
        path = esm2_weights_path(name)
    import esm

    os.environ.setdefault("TORCH_HUB_OFFLINE", "1")
    model_data = load_esm_checkpoint(path)
    regression = path.with_name(path.stem + "-contact-regression.pt")
    regression_data = load_esm_checkpoint(regression) if regression.is_file() else None
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Regression weights not found")
            net, alphabet = esm.pretrained.load_model_and_alphabet_core(path.stem, model_data, regression_data)
    except (KeyError, AttributeError, RuntimeError) as e:
        raise DataError(f"{path}: not an ESM-2 checkpoint in fair-esm's layout ({type(e).__name__}: "
                        f"{str(e).splitlines()[0][:200]})") from None  # fmt: skip
    return MaskedLM(net.eval(), _esm_protein_alphabet(alphabet), "esm2", name=path.stem)
