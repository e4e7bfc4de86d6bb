"""The pinned wheel whose model files this domain reads (entry point ``iclr26.wheels``; see
:mod:`iclr26_shared.wheeldata`): fetched by sha256 on first use, never installed or imported."""

from __future__ import annotations

from iclr26_shared.wheeldata import PinnedWheel

__all__ = ["ANTIBERTY", "MDANALYSIS_TESTS", "WHEELS"]

#: AntiBERTy 0.1.3 (Ruffolo et al. 2021; MIT) ships the AntiBERTy_md_smooth checkpoint and vocabulary, which
#: we load into transformers' BertForMaskedLM; its runner (broken on transformers 5) is never installed.
#: 1.0.0 dropped the weights, hence the pin. Its METADATA (the README) quotes the antibody chains of the
#: ``antiberty-readme`` sequence set.
ANTIBERTY = PinnedWheel(
    name="antiberty",
    version="0.1.3",
    filename="antiberty-0.1.3-py3-none-any.whl",
    sha256="30d910992b190013871bac49cdc032e01a19339f7d2b958ab99b0eb44638352a",
    members=("antiberty/trained_models/", "antiberty-0.1.3.dist-info/METADATA"),
    size=96631471,
    what="AntiBERTy protein LM checkpoint as antiberty 0.1.3 (MIT) ships it",
)

#: MDAnalysisTests 2.11.0 (GPL-2.0+ package; the PDB/PSF/DCD files are its test data) is published only as an
#: sdist (no wheel: installing it is a source build, and it pulls pytest and hypothesis), so the structures and
#: the adenylate-kinase trajectory are read from the pinned sdist's data folder.
MDANALYSIS_TESTS = PinnedWheel(
    name="MDAnalysisTests",
    version="2.11.0",
    filename="mdanalysistests-2.11.0.tar.gz",
    sha256="5edeb5b01805da728b202103aa8d2b5974a37f1005ab1fe0150ed7d59702d2ea",
    members=tuple(
        f"mdanalysistests-2.11.0/MDAnalysisTests/data/{f}"
        for f in (
            "adk_closed.pdb",
            "adk_open.pdb",
            "1hvr.pdb",
            "4E43.pdb",
            "cobrotoxin.pdb",
            "1grm_single.pdb",
            "5a7u.pdb",
            "nmr_neopetrosiamide.pdb",
            "adk_dims.dcd",
            "adk.psf",
        )
    ),  # fmt: skip
    size=59555441,
    what="protein structures and the adk trajectory as the MDAnalysisTests 2.11.0 sdist ships them",
)

WHEELS = (ANTIBERTY, MDANALYSIS_TESTS)
