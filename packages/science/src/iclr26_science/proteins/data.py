"""Real protein sequences that ship offline, read from the installed packages' metadata.

No FASTA file ships with this environment's dependencies, so the sequences come from the READMEs inside two
wheels: fair-esm's installed metadata (``importlib.metadata``) and the METADATA of the pinned antiberty 0.1.3
wheel (fetched once by sha256 into the data cache with the AntiBERTy weights; offline afterwards):

- ``antiberty-readme``: the antibody chains of AntiBERTy 0.1.3's README (one heavy-chain VH, 122 aa, and two
  light-chain VL variants, 112 and 114 aa) — in distribution for AntiBERTy;
- ``esm-readme``: the two proteins of fair-esm 2.0.0's README ("the first 2 sequences from
  ESMStructuralSplitDataset superfamily / 4", 65 and 71 aa) — not antibodies, out of distribution for AntiBERTy.

Only quoted strings made entirely of the 20 standard amino acids (at least 50 long) are kept, so masked
examples (``<mask>``, ``_``) are skipped; duplicates are dropped.
"""

from __future__ import annotations

import importlib.metadata
import re
from dataclasses import dataclass

from iclr26_science.proteins.tokens import AMINO_ACIDS
from iclr26_science.wheels import ANTIBERTY
from iclr26_shared.data import register_dataset
from iclr26_shared.errors import DataError
from iclr26_shared.wheeldata import wheel_path

__all__ = ["ProteinRecord", "antibody_sequences", "esm_readme_proteins", "readme_sequences"]

_QUOTED = re.compile(r'"([A-Z]{50,})"')


@dataclass(frozen=True)
class ProteinRecord:
    """One real sequence and where it comes from."""

    name: str
    sequence: str
    source: str


def readme_sequences(distribution: str, prefix: str) -> list[ProteinRecord]:
    """The quoted amino-acid strings of an installed distribution's README (its ``METADATA``)."""
    try:
        text = importlib.metadata.distribution(distribution).read_text("METADATA") or ""
    except importlib.metadata.PackageNotFoundError:
        raise DataError(f"package {distribution!r} is not installed (it ships the sequences); run `uv sync`") from None
    return _quoted_sequences(text, distribution, importlib.metadata.version(distribution), prefix)


def _quoted_sequences(text: str, distribution: str, version: str, prefix: str) -> list[ProteinRecord]:
    seen: list[str] = []
    for s in _QUOTED.findall(text):
        if set(s) <= set(AMINO_ACIDS) and s not in seen:
            seen.append(s)
    if not seen:
        raise DataError(f"no protein sequence found in the README of {distribution!r}")
    return [ProteinRecord(f"{prefix}-{k + 1}", s, f"{distribution} {version} README") for k, s in enumerate(seen)]


def antibody_sequences() -> list[ProteinRecord]:
    """AntiBERTy README's antibody variable domains (VH first), read from the pinned wheel's ``METADATA``."""
    meta = wheel_path(ANTIBERTY, f"antiberty-{ANTIBERTY.version}.dist-info", "METADATA", purpose="antiberty-readme")
    recs = _quoted_sequences(meta.read_text(encoding="utf-8"), "antiberty", ANTIBERTY.version, "antibody")
    names = {0: "antiberty-VH", 1: "antiberty-VL", 2: "antiberty-VL2"}
    return [ProteinRecord(names.get(k, r.name), r.sequence, r.source) for k, r in enumerate(recs)]


def esm_readme_proteins() -> list[ProteinRecord]:
    """fair-esm README's two proteins (ESMStructuralSplitDataset superfamily split)."""
    return readme_sequences("fair-esm", "esm-protein")


register_dataset(
    "antiberty-readme",
    antibody_sequences,
    description="3 real antibody variable domains quoted in the antiberty 0.1.3 README",
    offline=True,
    kind="protein-sequences",
)
register_dataset(
    "esm-readme",
    esm_readme_proteins,
    description="2 real proteins quoted in the fair-esm 2.0.0 README (ESMStructuralSplitDataset)",
    offline=True,
    kind="protein-sequences",
)
