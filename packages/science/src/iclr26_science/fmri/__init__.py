"""fMRI foundation models: Brain-Semantoks (Gijsen, Schulz, Ritter; ICLR 2026, arXiv 2512.11582).

Public API::

    from iclr26_science.fmri import load_hcp, aal2_network_map, SemantoksEncoder
    hcp = load_hcp()                                   # 7 real HCP scans, [80, 432] each at TR 2 s
    net = aal2_network_map()                           # heuristic Yeo-7 labels of the 80 AAL2 ROIs
    enc = SemantoksEncoder([g.tolist() for g in net.groups()], dim=64, depth=2, heads=4, patch=16, patches=4)

Needs the ``fmri`` extra (neurolib, nilearn, scipy); without it, importing this package raises
:class:`~iclr26_science._extras.MissingExtraError` naming the extra.
"""

# ruff: noqa: E402  (the extra is checked before the submodules import its libraries)
from iclr26_science._extras import require

require("fmri", __name__)

from iclr26_science.fmri.baselines import MaskedAutoencoder, fc_features, spectral_features
from iclr26_science.fmri.data import (
    HCP_TR,
    BoldSet,
    bandpass,
    load_hcp,
    preprocess,
    random_crops,
    resample_tr,
    sliding_windows,
    validate_timeseries,
    zscore,
)
from iclr26_science.fmri.networks import (
    NETWORKS,
    OFFICIAL_ATLASES,
    NetworkMap,
    aal2_network_map,
    atlas_network_map,
    labelled_rois,
    read_network_map,
    schaefer_labels,
)
from iclr26_science.fmri.official import load_official_encoder, official_to_ours
from iclr26_science.fmri.probes import (
    balanced_accuracy,
    identification_accuracy,
    linear_probe_cv,
    quantile_classes,
    subject_folds,
)
from iclr26_science.fmri.semantoks import (
    ProjectionHead,
    SemantoksEncoder,
    SemantoksPretrainer,
    augment,
    coding_rate,
    curriculum_weight,
    ema_momentum,
    ema_update,
    mcr_loss,
    network_mask_counts,
    slice_mask,
    token_loss,
)
from iclr26_science.fmri.simulate import CohortSpec, hopf_euler, simulate_cohort, simulate_subject
from iclr26_science.fmri.tokenizer import SemanticTokenizer, SLConv, naive_slconv

__all__ = [
    "HCP_TR",
    "NETWORKS",
    "OFFICIAL_ATLASES",
    "BoldSet",
    "CohortSpec",
    "MaskedAutoencoder",
    "NetworkMap",
    "ProjectionHead",
    "SLConv",
    "SemanticTokenizer",
    "SemantoksEncoder",
    "SemantoksPretrainer",
    "aal2_network_map",
    "atlas_network_map",
    "augment",
    "balanced_accuracy",
    "bandpass",
    "coding_rate",
    "curriculum_weight",
    "ema_momentum",
    "ema_update",
    "fc_features",
    "hopf_euler",
    "identification_accuracy",
    "labelled_rois",
    "linear_probe_cv",
    "load_hcp",
    "load_official_encoder",
    "mcr_loss",
    "naive_slconv",
    "network_mask_counts",
    "official_to_ours",
    "preprocess",
    "quantile_classes",
    "random_crops",
    "read_network_map",
    "resample_tr",
    "schaefer_labels",
    "simulate_cohort",
    "simulate_subject",
    "slice_mask",
    "spectral_features",
    "sliding_windows",
    "subject_folds",
    "token_loss",
    "validate_timeseries",
    "zscore",
]
