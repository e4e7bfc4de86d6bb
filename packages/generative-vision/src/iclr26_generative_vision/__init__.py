"""iclr26 generative-vision: S²-Guidance, DUPA, ELViS and Causal Delta Embeddings.

Public API (loaded lazily, so that importing the package does not import diffusers)::

    from iclr26_generative_vision import S2Guidance, guided_sample, ClassConditionalDiT
    from iclr26_generative_vision import DDT, DUPAObjective, ConditionProjector, dupa_loss, draw_paths, euler_sample
    from iclr26_generative_vision import FlowModel, HookedFlowModel  # DUPA on your own flow transformer
    from iclr26_generative_vision import ELViS, RerankingTransformer, chamfer_ot_similarity, retrieval_benchmark
    from iclr26_generative_vision import CausalDeltaEncoder, CausalDeltaModel, PairBaseline, supcon_loss, render_pairs
    from iclr26_generative_vision import ViTBackbone, load_vit_backbone, vit_backbone_from_config
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:
    from iclr26_generative_vision.data.causal_triplet import make_split, render_pairs
    from iclr26_generative_vision.data.gmm import ExactGMMDenoiser, GaussianMixture, toy_mixture
    from iclr26_generative_vision.data.retrieval import retrieval_benchmark
    from iclr26_generative_vision.flow.adapter import FlowModel, FlowOutput, HookedFlowModel
    from iclr26_generative_vision.flow.dupa import ConditionProjector, Predictor, draw_paths, dupa_loss
    from iclr26_generative_vision.flow.sampler import euler_sample
    from iclr26_generative_vision.guidance.blocks import register_skippable_block
    from iclr26_generative_vision.guidance.factory import GuiderSettings, make_guider
    from iclr26_generative_vision.guidance.masks import BlockMaskSampler
    from iclr26_generative_vision.guidance.s2 import S2Guidance
    from iclr26_generative_vision.guidance.sampler import guided_sample
    from iclr26_generative_vision.methods.dupa.model import DUPAObjective
    from iclr26_generative_vision.nn.causal_delta import (
        CausalDeltaEncoder,
        CausalDeltaModel,
        PairBaseline,
        l1_sparsity,
        supcon_loss,
        top_k_patches,
    )
    from iclr26_generative_vision.nn.ddt import DDT
    from iclr26_generative_vision.nn.dit import ClassConditionalDiT
    from iclr26_generative_vision.nn.resmlp import ResidualMLPDenoiser
    from iclr26_generative_vision.nn.vit_backbone import ViTBackbone, load_vit_backbone, vit_backbone_from_config
    from iclr26_generative_vision.retrieval.elvis import (
        ELViS,
        chamfer_ot_similarity,
        chamfer_similarity,
        load_official_elvis,
    )
    from iclr26_generative_vision.retrieval.rrt import RerankingTransformer
    from iclr26_generative_vision.retrieval.train import DescriptorPairs, train_elvis

_LAZY = {
    "S2Guidance": "iclr26_generative_vision.guidance.s2",
    "BlockMaskSampler": "iclr26_generative_vision.guidance.masks",
    "guided_sample": "iclr26_generative_vision.guidance.sampler",
    "make_guider": "iclr26_generative_vision.guidance.factory",
    "GuiderSettings": "iclr26_generative_vision.guidance.factory",
    "register_skippable_block": "iclr26_generative_vision.guidance.blocks",
    "ClassConditionalDiT": "iclr26_generative_vision.nn.dit",
    "ResidualMLPDenoiser": "iclr26_generative_vision.nn.resmlp",
    "GaussianMixture": "iclr26_generative_vision.data.gmm",
    "ExactGMMDenoiser": "iclr26_generative_vision.data.gmm",
    "toy_mixture": "iclr26_generative_vision.data.gmm",
    "DDT": "iclr26_generative_vision.nn.ddt",
    "ConditionProjector": "iclr26_generative_vision.flow.dupa",
    "Predictor": "iclr26_generative_vision.flow.dupa",
    "FlowModel": "iclr26_generative_vision.flow.adapter",
    "FlowOutput": "iclr26_generative_vision.flow.adapter",
    "HookedFlowModel": "iclr26_generative_vision.flow.adapter",
    "draw_paths": "iclr26_generative_vision.flow.dupa",
    "dupa_loss": "iclr26_generative_vision.flow.dupa",
    "euler_sample": "iclr26_generative_vision.flow.sampler",
    "DUPAObjective": "iclr26_generative_vision.methods.dupa.model",
    "ELViS": "iclr26_generative_vision.retrieval.elvis",
    "chamfer_similarity": "iclr26_generative_vision.retrieval.elvis",
    "chamfer_ot_similarity": "iclr26_generative_vision.retrieval.elvis",
    "load_official_elvis": "iclr26_generative_vision.retrieval.elvis",
    "RerankingTransformer": "iclr26_generative_vision.retrieval.rrt",
    "DescriptorPairs": "iclr26_generative_vision.retrieval.train",
    "train_elvis": "iclr26_generative_vision.retrieval.train",
    "retrieval_benchmark": "iclr26_generative_vision.data.retrieval",
    "CausalDeltaEncoder": "iclr26_generative_vision.nn.causal_delta",
    "CausalDeltaModel": "iclr26_generative_vision.nn.causal_delta",
    "PairBaseline": "iclr26_generative_vision.nn.causal_delta",
    "supcon_loss": "iclr26_generative_vision.nn.causal_delta",
    "l1_sparsity": "iclr26_generative_vision.nn.causal_delta",
    "top_k_patches": "iclr26_generative_vision.nn.causal_delta",
    "render_pairs": "iclr26_generative_vision.data.causal_triplet",
    "make_split": "iclr26_generative_vision.data.causal_triplet",
    "ViTBackbone": "iclr26_generative_vision.nn.vit_backbone",
    "load_vit_backbone": "iclr26_generative_vision.nn.vit_backbone",
    "vit_backbone_from_config": "iclr26_generative_vision.nn.vit_backbone",
}

__all__ = [
    "DDT",
    "CausalDeltaEncoder",
    "CausalDeltaModel",
    "PairBaseline",
    "BlockMaskSampler",
    "ELViS",
    "DescriptorPairs",
    "train_elvis",
    "ClassConditionalDiT",
    "ConditionProjector",
    "FlowModel",
    "FlowOutput",
    "HookedFlowModel",
    "Predictor",
    "DUPAObjective",
    "ExactGMMDenoiser",
    "GaussianMixture",
    "GuiderSettings",
    "RerankingTransformer",
    "ResidualMLPDenoiser",
    "S2Guidance",
    "chamfer_ot_similarity",
    "chamfer_similarity",
    "draw_paths",
    "dupa_loss",
    "load_official_elvis",
    "euler_sample",
    "guided_sample",
    "l1_sparsity",
    "make_split",
    "make_guider",
    "register_skippable_block",
    "render_pairs",
    "retrieval_benchmark",
    "supcon_loss",
    "toy_mixture",
    "ViTBackbone",
    "load_vit_backbone",
    "vit_backbone_from_config",
    "top_k_patches",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
