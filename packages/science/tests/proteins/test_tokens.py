"""Sequences and mutation strings: bad input is one clear error naming what is wrong."""

from __future__ import annotations

import pytest

from iclr26_science.proteins import antiberty_alphabet, apply_mutations, check_sequence, parse_mutations
from iclr26_shared.errors import DataError

WT = "MKVLAG"


def test_encode_adds_specials_and_maps_letters() -> None:
    ab = antiberty_alphabet()
    ids = ab.encode("mkv")
    assert ids[0] == ab.cls and ids[-1] == ab.eos and len(ids) == 5
    assert ab.decode(ids) == "MKV"
    assert len(ab.aa_ids) == 20 and ab.mask not in ab.aa_ids


@pytest.mark.parametrize(
    ("seq", "match"),
    [("", "empty"), ("   ", "empty"), ("MKJV", r"invalid residue 'J' at position 3"), ("MK-V", r"'-' at position 3"),
     ("MK1", "'1'")],
)  # fmt: skip
def test_bad_sequences(seq: str, match: str) -> None:
    with pytest.raises(DataError, match=match):
        check_sequence(seq)


def test_real_sequences_may_carry_x_b_u_z_o() -> None:
    """Ambiguity and rare codes pass (they are in fair-esm's vocabulary; AntiBERTy encodes them as [UNK]);
    a Potts model's wild type still needs the 20 standard amino acids."""
    assert check_sequence("mkxbuzov") == "MKXBUZOV"
    with pytest.raises(DataError, match=r"invalid residue 'X' at position 3"):
        check_sequence("MKXV", standard_only=True)
    ab = antiberty_alphabet()
    assert ab.unk is not None and ab.encode("MXV") == [ab.cls, ab.index["M"], ab.unk, ab.index["V"], ab.eos]
    assert len(ab.standard_toks) == 20 and set(ab.standard_toks) == set(ab.aa_ids)


def test_esm_standard_toks_are_fair_esms() -> None:
    """The random-replacement vocabulary of the reference: fair-esm's ``Alphabet.standard_toks``."""
    from iclr26_science.proteins import esm2_from_config
    from iclr26_science.proteins.lm import esm_alphabet

    alphabet = esm2_from_config(layers=1, width=16, heads=2).alphabet
    ref = esm_alphabet()
    assert [alphabet.tokens[i] for i in alphabet.standard_toks] == list(ref.standard_toks)
    assert alphabet.encode("AX") == [ref.cls_idx, ref.get_idx("A"), ref.get_idx("X"), ref.eos_idx]


def test_parse_single_and_multiple_mutants() -> None:
    (m,) = parse_mutations("K2R", WT)
    assert (m.wt, m.pos, m.mt) == ("K", 1, "R") and str(m) == "K2R"
    muts = parse_mutations("M1A:G6W", WT)
    assert apply_mutations(WT, muts) == "AKVLAW"


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("A2R", r"does not match the wild type: position 2 is 'K', not 'A'"),
        ("K9R", "outside the sequence"),
        ("K0R", "outside the sequence"),
        ("K2X", "not one of the 20"),
        ("K2", "malformed"),
        ("", "empty"),
        ("K2K", "not a substitution"),
        ("K2R:K2A", "twice"),
    ],
)
def test_bad_mutations(text: str, match: str) -> None:
    with pytest.raises(DataError, match=match):
        parse_mutations(text, WT)
