"""iclr26 science: CryoLVM, Brain-Semantoks, space-group-invariant crystal networks, ProteinTTT.

Public API (imported lazily: ``import iclr26_science`` imports no torch; each name needs its subdomain's
extra, e.g. ``uv sync --extra proteins``)::

    from iclr26_science import ttt, score_mutants, load_antiberty     # ProteinTTT on your sequence and model
    adapted = ttt(wild_type, load_antiberty()); scores = score_mutants(adapted.lm, wild_type, ["E1A"])
    from iclr26_science import restore, read_map, molmap, fsc         # CryoLVM on your map
    restored = restore(read_map("emd.map"), network); fine_tune([my_map], [model_map], network)
    from iclr26_science import pretrain_encoder                       # Brain-Semantoks on your BOLD scans
    encoder = pretrain_encoder(scans, network_map, tr=0.72)
    from iclr26_science import fit_semantoks                          # ... or from your own (saved) encoder
    encoder = fit_semantoks(encoder, scans, tr=0.72, save_to="enc/"); encoder.scan_features(new_scan, tr=0.72)
    from iclr26_science import fit_crystals                           # the crystal network on your Structures
    model = fit_crystals(structures, targets); y = model.predict(new_structures)   # numpy; model.history
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_science.cryoem import (
        DensityMap,
        SCUNet3D,
        cc,
        fine_tune,
        fsc,
        fsc_resolution,
        load_structure,
        molmap,
        read_map,
        restore,
        write_map,
    )
    from iclr26_science.crystals import CrystalFourierTransformer, FitSettings, structure_to_input
    from iclr26_science.crystals.fit import fit_crystals
    from iclr26_science.fmri import NetworkMap, SemantoksEncoder, aal2_network_map, load_hcp, preprocess
    from iclr26_science.methods.brain_semantoks.train import fit_semantoks, pretrain_encoder
    from iclr26_science.proteins import (
        MaskedLM,
        ProteinTTT,
        TTTSettings,
        as_masked_lm,
        load_adapter,
        load_antiberty,
        load_esm2,
        score_mutants,
        spearman,
        ttt,
    )

_EXPORTS = {
    **dict.fromkeys(
        [
            "SCUNet3D",
            "DensityMap",
            "cc",
            "fine_tune",
            "fsc",
            "fsc_resolution",
            "load_structure",
            "molmap",
            "read_map",
            "restore",
            "write_map",
        ],
        "iclr26_science.cryoem",
    ),  # fmt: skip
    **dict.fromkeys(["CrystalFourierTransformer", "FitSettings", "structure_to_input"], "iclr26_science.crystals"),
    "fit_crystals": "iclr26_science.crystals.fit",
    **dict.fromkeys(
        ["NetworkMap", "SemantoksEncoder", "aal2_network_map", "load_hcp", "preprocess"], "iclr26_science.fmri"
    ),
    **dict.fromkeys(["fit_semantoks", "pretrain_encoder"], "iclr26_science.methods.brain_semantoks.train"),
    **dict.fromkeys(
        [
            "MaskedLM",
            "ProteinTTT",
            "TTTSettings",
            "as_masked_lm",
            "load_adapter",
            "load_antiberty",
            "load_esm2",
            "score_mutants",
            "spearman",
            "ttt",
        ],
        "iclr26_science.proteins",
    ),  # fmt: skip
}

__all__ = [
    "CrystalFourierTransformer",
    "DensityMap",
    "FitSettings",
    "MaskedLM",
    "NetworkMap",
    "ProteinTTT",
    "SCUNet3D",
    "SemantoksEncoder",
    "TTTSettings",
    "aal2_network_map",
    "as_masked_lm",
    "cc",
    "fine_tune",
    "fit_crystals",
    "fit_semantoks",
    "fsc",
    "fsc_resolution",
    "load_adapter",
    "load_antiberty",
    "load_esm2",
    "load_hcp",
    "load_structure",
    "molmap",
    "preprocess",
    "pretrain_encoder",
    "read_map",
    "restore",
    "score_mutants",
    "spearman",
    "structure_to_input",
    "ttt",
    "write_map",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__)
