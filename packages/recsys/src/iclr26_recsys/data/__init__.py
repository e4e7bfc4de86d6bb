"""Interaction data: loaders (MovieLens-100K offline; ML-1M/20M, Netflix, MSD from a path), binarisation,
filtering and the strong-generalisation split."""

from iclr26_recsys.data.loaders import FORMATS, binarize, filter_counts, load_interactions, load_ml100k, ml100k_path
from iclr26_recsys.data.split import StrongSplit, strong_generalization_split, user_kfold_split
from iclr26_recsys.data.validation import InteractionError, as_interaction_matrix, check_k

__all__ = [
    "FORMATS",
    "InteractionError",
    "StrongSplit",
    "as_interaction_matrix",
    "binarize",
    "check_k",
    "filter_counts",
    "load_interactions",
    "load_ml100k",
    "ml100k_path",
    "strong_generalization_split",
    "user_kfold_split",
]
