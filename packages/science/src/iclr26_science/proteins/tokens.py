"""Protein alphabets, tokenisation and mutation strings (no torch needed).

A :class:`ProteinAlphabet` maps the 20 standard amino acids and the special tokens of one masked protein LM
to token ids. ``encode("MKV")`` gives ``[cls, M, K, V, eos]`` (ints); bad input (an empty sequence, a letter
that is neither one of the 20 standard amino acids nor one of the ambiguity / rare codes X, B, U, Z, O that
real sequences carry) raises :class:`~iclr26_shared.errors.DataError` naming the position. A code the
model's vocabulary lacks (AntiBERTy has no X) is encoded as its unknown token.

Mutations use the ProteinGym notation ``"A12G"`` (wild type A at 1-based position 12 becomes G); multiple
mutants join singles with ``":"`` (``"A12G:K15R"``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iclr26_shared.errors import DataError

__all__ = [
    "AMINO_ACIDS",
    "NONSTANDARD_RESIDUES",
    "Mutation",
    "ProteinAlphabet",
    "apply_mutations",
    "check_sequence",
    "parse_mutations",
]

#: The 20 standard amino acids, one letter each (the order of the Potts models' states).
AMINO_ACIDS = "ACDEFGHIKLMNPQRSTVWY"
#: IUPAC codes real sequences carry besides the 20: X (any), B (D/N), Z (E/Q), U (selenocysteine),
#: O (pyrrolysine); fair-esm's ESM-2 vocabulary has each of them.
NONSTANDARD_RESIDUES = "XBUZO"

_MUTATION = re.compile(r"^([A-Z])(\d+)([A-Z])$")


def check_sequence(seq: str, what: str = "sequence", *, standard_only: bool = False) -> str:
    """Return ``seq`` upper-cased after checking it is a non-empty string of amino-acid codes: the 20
    standard ones and :data:`NONSTANDARD_RESIDUES` (only the 20 with ``standard_only``, e.g. for a Potts
    model whose states are the 20)."""
    allowed = AMINO_ACIDS if standard_only else AMINO_ACIDS + NONSTANDARD_RESIDUES
    if not isinstance(seq, str) or not seq.strip():
        raise DataError(f"{what} is empty; expected a string of the amino-acid codes {allowed}")
    s = seq.strip().upper()
    for i, a in enumerate(s):
        if a not in allowed:
            raise DataError(f"{what} has the invalid residue {a!r} at position {i + 1}; expected one of {allowed}")
    return s


@dataclass(frozen=True)
class Mutation:
    """One substitution: ``wt`` at 0-based ``pos`` becomes ``mt``."""

    wt: str
    pos: int
    mt: str

    def __str__(self) -> str:
        return f"{self.wt}{self.pos + 1}{self.mt}"


def parse_mutations(text: str, wild_type: str) -> tuple[Mutation, ...]:
    """Parse ``"A12G"`` or ``"A12G:K15R"`` (1-based) and check each against ``wild_type``.

    Raises DataError when a token is malformed, the position is outside the sequence, the wild-type letter
    does not match the sequence, a residue is not a standard amino acid, or a position repeats.
    """
    if not text or not text.strip():
        raise DataError("mutation string is empty; expected e.g. 'A12G' or 'A12G:K15R'")
    out: list[Mutation] = []
    for tok in text.strip().split(":"):
        m = _MUTATION.match(tok.strip().upper())
        if m is None:
            raise DataError(f"mutation {tok!r} is malformed; expected <wild type><1-based position><mutant>, e.g. A12G")
        wt, pos1, mt = m.group(1), int(m.group(2)), m.group(3)
        for a in (wt, mt):
            if a not in AMINO_ACIDS:
                raise DataError(f"mutation {tok!r} uses {a!r}, not one of the 20 standard amino acids")
        if not 1 <= pos1 <= len(wild_type):
            raise DataError(f"mutation {tok!r}: position {pos1} is outside the sequence (length {len(wild_type)})")
        if wild_type[pos1 - 1] != wt:
            raise DataError(
                f"mutation {tok!r} does not match the wild type: position {pos1} is {wild_type[pos1 - 1]!r}, not {wt!r}"
            )
        if wt == mt:
            raise DataError(f"mutation {tok!r} is not a substitution (wild type and mutant are both {wt!r})")
        if any(o.pos == pos1 - 1 for o in out):
            raise DataError(f"mutation {text!r} names position {pos1} twice")
        out.append(Mutation(wt, pos1 - 1, mt))
    return tuple(out)


def apply_mutations(wild_type: str, mutations: Sequence[Mutation]) -> str:
    """The mutant sequence."""
    s = list(wild_type)
    for m in mutations:
        s[m.pos] = m.mt
    return "".join(s)


@dataclass(frozen=True)
class ProteinAlphabet:
    """Token ids of one masked protein LM.

    Attributes:
        tokens: Every token string, indexed by id (the LM's vocabulary, in order).
        cls: Id prepended to every sequence (``[CLS]`` / ``<cls>``).
        eos: Id appended to every sequence (``[SEP]`` / ``<eos>``).
        pad: Padding id.
        mask: The ``[MASK]`` id.
        unk: The unknown-token id (``[UNK]`` / ``<unk>``), or None; residue codes the vocabulary lacks map to it.
    """

    tokens: tuple[str, ...]
    cls: int
    eos: int
    pad: int
    mask: int
    unk: int | None = None

    @classmethod
    def from_vocab(
        cls, tokens: Sequence[str], *, cls_tok: str, eos_tok: str, pad_tok: str, mask_tok: str
    ) -> ProteinAlphabet:
        """Build from an ordered vocabulary; every standard amino acid must be in it (the unknown token is
        found by its usual names, ``<unk>`` or ``[UNK]``)."""
        toks = tuple(tokens)
        index = {t: i for i, t in enumerate(toks)}
        missing = [a for a in AMINO_ACIDS if a not in index]
        if missing:
            raise DataError(f"vocabulary lacks the amino acids {''.join(missing)}")
        for t in (cls_tok, eos_tok, pad_tok, mask_tok):
            if t not in index:
                raise DataError(f"vocabulary lacks the special token {t!r}")
        unk = next((index[t] for t in ("<unk>", "[UNK]") if t in index), None)
        return cls(toks, index[cls_tok], index[eos_tok], index[pad_tok], index[mask_tok], unk)

    @property
    def index(self) -> Mapping[str, int]:
        """Token string -> id."""
        return {t: i for i, t in enumerate(self.tokens)}

    @property
    def aa_ids(self) -> tuple[int, ...]:
        """Ids of the 20 standard amino acids in :data:`AMINO_ACIDS` order (the "non-special" tokens)."""
        idx = self.index
        return tuple(idx[a] for a in AMINO_ACIDS)

    @property
    def residue_ids(self) -> tuple[int, ...]:
        """Ids of every residue code the vocabulary has (the 20 and those of :data:`NONSTANDARD_RESIDUES`):
        the tokens ProteinTTT may select for masking."""
        idx = self.index
        return tuple(idx[a] for a in AMINO_ACIDS + NONSTANDARD_RESIDUES if a in idx)

    @property
    def standard_toks(self) -> tuple[int, ...]:
        """Ids of the vocabulary's non-special tokens (single characters: residue codes and gap symbols):
        fair-esm's ``Alphabet.standard_toks``, which the reference draws random replacements from (ESM-2:
        the 20, X B U Z O, ``.`` and ``-``; AntiBERTy: the 20)."""
        special = {self.cls, self.eos, self.pad, self.mask, self.unk}
        return tuple(i for i, t in enumerate(self.tokens) if len(t) == 1 and i not in special)

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, seq: str, what: str = "sequence") -> list[int]:
        """``[cls] + residues + [eos]`` as ids (length ``len(seq) + 2``), after :func:`check_sequence`; a
        residue code the vocabulary lacks becomes the unknown token (a DataError when there is none)."""
        s = check_sequence(seq, what)
        idx = self.index
        out = [self.cls]
        for i, a in enumerate(s):
            j = idx.get(a, self.unk)
            if j is None:
                raise DataError(f"{what} has {a!r} at position {i + 1}, which this model's vocabulary lacks")
            out.append(j)
        out.append(self.eos)
        return out

    def decode(self, ids: Sequence[int]) -> str:
        """Residue letters of ``ids`` (special tokens dropped)."""
        aa = set(self.aa_ids)
        return "".join(self.tokens[i] for i in ids if i in aa)
