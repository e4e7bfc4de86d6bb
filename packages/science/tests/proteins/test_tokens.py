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
    [("", "empty"), ("   ", "empty"), ("MKXV", r"invalid residue 'X' at position 3"), ("MK-V", r"'-' at position 3"),
     ("MKB", "'B'")],
)  # fmt: skip
def test_bad_sequences(seq: str, match: str) -> None:
    with pytest.raises(DataError, match=match):
        check_sequence(seq)


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
