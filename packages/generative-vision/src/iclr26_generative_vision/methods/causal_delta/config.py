"""Config and presets of ``causal-delta`` (no heavy imports: ``iclr26 list`` imports this module)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

import annotated_types as at

from iclr26_shared.config import NonNegFloat, PosFloat, PosInt, validate
from iclr26_shared.errors import ConfigError, DataError

__all__ = ["ABLATIONS", "BASELINES", "PRESETS", "VARIANTS", "CausalDeltaConfig", "Variant"]

#: A model trained in the comparison. Baselines of Causal Triplet: ``vanilla`` (ResPair: MLP on
#: [p1, p2 − p1], CE only; the benchmark's *Vanilla* row), ``pair-concat`` (MLP on [f1, f2]), ``sms``
#: (ResPair + block-sparsity MSE), ``icm`` (ResPair + adversarial object critic). Ours: ``cde`` (model A,
#: full loss), its ablations ``cde-no-contrast`` (α_c = 0), ``cde-no-sparse`` (α_s = 0), ``cde-ce``
#: (CE only), and ``cde-patch`` (model B, patch-wise Top-K).
Variant = Literal[
    "vanilla", "pair-concat", "sms", "icm", "cde", "cde-no-contrast", "cde-no-sparse", "cde-ce", "cde-patch"
]
VARIANTS: tuple[str, ...] = (
    "vanilla",
    "pair-concat",
    "sms",
    "icm",
    "cde",
    "cde-no-contrast",
    "cde-no-sparse",
    "cde-ce",
    "cde-patch",
)
BASELINES: tuple[str, ...] = ("vanilla", "pair-concat", "sms", "icm")
#: Variants trained only on the ablation split(s).
ABLATIONS: tuple[str, ...] = ("cde-no-contrast", "cde-no-sparse", "cde-ce")
Fraction = Annotated[float, at.Interval(gt=0, lt=1)]


@dataclass(frozen=True)
class CausalDeltaConfig:
    """CDE vs the Causal Triplet pair classifiers on rendered before/after pairs, IID and OOD."""

    variants: Annotated[tuple[Variant, ...], at.MinLen(1)] = (
        "vanilla",
        "cde",
        "cde-no-contrast",
        "cde-no-sparse",
    )
    """Models to train (claims need vanilla and cde; the ablation claim cde-no-contrast and cde-no-sparse)."""
    splits: Annotated[tuple[Literal["comp", "noun"], ...], at.MinLen(1)] = ("comp", "noun")
    """OOD splits: comp (held-out verb–noun pairs, compositional) and noun (held-out classes, systematic)."""
    ablation_split: Literal["comp", "noun", "both"] = "comp"
    """Split(s) the loss ablations (cde-no-contrast, cde-no-sparse, cde-ce) are trained on."""

    dataset: Literal["mujoco", "procthor", "epic-kitchens"] = "mujoco"
    """Pairs: rendered offline with MuJoCo (default), or the real Causal Triplet data in its published format
    read from ``data_dir`` (opt-in; ``data.causal_triplet_real``): ProcTHOR (annotations.csv + <scene>/color/
    images) or Epic-Kitchens (EPIC_100_*.csv + <participant>/rgb_frames/<video>/frame_*.jpg)."""
    data_dir: str = ""
    """Folder of the real data set (dataset procthor / epic-kitchens); never downloaded."""
    bbox: bool = False
    """Real data: crop both images to the annotated object box (ProcTHOR's xmin..ymax; the benchmark's --bbox)."""
    num_pairs: Annotated[int, at.Ge(40)] = 3000
    """Rendered before/after pairs in the pool (the valid verb–noun pairs in equal numbers); for real data the
    most pairs read (the first ones in the annotation order)."""
    image_size: Annotated[int, at.Ge(16)] = 64
    """Image side S in pixels (S × S RGB)."""
    max_distractors: Annotated[int, at.Interval(ge=0, le=3)] = 3
    """Most distractor objects per scene (0..3, drawn per sample)."""
    comp_ood_fraction: Fraction = 0.3
    """Share of verb–noun pairs that become held-out candidates (Causal Triplet: 0.3)."""
    noun_ood_fraction: Fraction = 0.4
    """Share of noun classes held out, the middle of the count ranking (Causal Triplet: 0.4, at least 2)."""
    iid_test_fraction: Fraction = 0.2
    """Share of the IID samples kept for the IID test."""
    render_cache: bool = True
    """Keep the rendered pool under <out-dir>/causal-delta/.render-cache/ (keyed by a hash of what it depends on)."""

    backbone: Literal["cnn", "resnet18", "vit"] = "cnn"
    """Image encoder: a small CNN trained from scratch (default), torchvision ResNet-18 (opt-in), or a ViT-style
    transformers model (opt-in, the paper's DINO ViT: a Dinov2Model or ViTModel from the local folder
    backbone_weights; ``nn/vit_backbone.ViTBackbone``)."""
    backbone_weights: str = ""
    """backbone=resnet18: local file of ResNet-18 weights (state dict), empty = random init; backbone=vit: a local
    folder saved by transformers' save_pretrained (config.json + model.safetensors), required. Never downloaded."""
    vit_pooling: Literal["cls", "mean"] = "cls"
    """backbone=vit: model A's pooled feature, the CLS token (DINO's image embedding) or the mean patch token."""
    vit_pixel_norm: Literal["imagenet", "none"] = "imagenet"
    """backbone=vit: pixels as ImageNet-normalised [0, 1] (DINO, DINOv2) or the [−1, 1] images as they are."""
    cnn_channels: Annotated[tuple[PosInt, ...], at.MinLen(1)] = (32, 64, 128)
    """Channels of the CNN's stride-2 blocks (the feature map is S / 2^len wide)."""
    coord_channels: bool = False
    """Append x/y coordinate channels to the CNN's input (CoordConv: pooled features then carry position)."""
    proj_dim: PosInt = 128
    """l, the width of the causal projector's output (the delta space)."""
    proj_hidden: PosInt = 256
    """Hidden width of the causal projector MLP."""
    classifier: Literal["linear", "mlp"] = "linear"
    """Action classifier g on δ (the paper uses a linear or an MLP head)."""
    top_k: PosInt = 8
    """K of model B: patches kept by ‖δ_p‖₂ (at most the number of patches)."""
    patch_loss: Literal["aggregate", "per-patch"] = "aggregate"
    """Model B: SupCon and L1 on the aggregated δ (as a reviewer reads the paper) or on every selected patch."""
    alpha_contrast: NonNegFloat = 2.0
    """α_c, weight of the SupCon loss on δ (paper: 2.0)."""
    alpha_sparse: NonNegFloat = 1.0
    """α_s, weight of the L1 sparsity loss on δ (paper: 1.0)."""
    sparse_reduction: Literal["sum", "mean"] = "sum"
    """L1 per sample: Σ_j |δ_j| (the paper's ‖δ‖₁) or its mean over the l dimensions (α_s / l; quick preset)."""
    temperature: PosFloat = 0.1
    """τ of the SupCon loss (not given in the paper's main text; 0.1 as SupCon)."""

    respair_dim: PosInt = 64
    """Width d of the baselines' proj = Linear→ReLU and pairwise MLP (Causal Triplet: 64)."""
    sms_weight: NonNegFloat = 0.1
    """Weight of the SMS baseline's block-invariance MSE (Causal Triplet sweeps 1e-3..1)."""
    icm_weight: NonNegFloat = 1.0
    """Weight of the ICM baseline's adversarial object-critic loss (gradient reversal scale 1)."""

    epochs: PosInt = 30
    """Training epochs of every variant over its split's IID training pairs."""
    batch_size: Annotated[int, at.Ge(4)] = 128
    """Pairs per step (Causal Triplet: 128; torchrun must divide it)."""
    lr: PosFloat = 1e-3
    """AdamW learning rate (from scratch; the paper fine-tunes DINO at ≈1e-4)."""
    weight_decay: NonNegFloat = 1e-4
    """AdamW weight decay."""
    control_accuracy: Annotated[float, at.Interval(gt=0, le=1)] = 0.7
    """Controlled check: CDE's IID test accuracy must reach this (chance 1/7)."""
    antonym_cosine: Annotated[float, at.Interval(ge=-1, le=1)] = -0.5
    """Antonym claim: mean cosine of antonym actions' mean δ must be below this (anti-parallel = −1)."""
    log_every: PosInt = 20
    """Steps between metrics.jsonl rows."""

    def __post_init__(self) -> None:
        validate(self)
        if len(set(self.variants)) != len(self.variants):
            raise ConfigError("variants", self.variants, "no repeated variant")
        for required in ("vanilla", "cde"):
            if required not in self.variants:
                raise ConfigError(
                    "variants", self.variants, f"a list that includes {required!r} (the claims compare them)"
                )
        if len(set(self.splits)) != len(self.splits):
            raise ConfigError("splits", self.splits, "no repeated split")
        if self.ablation_split != "both" and self.ablation_split not in self.splits:
            raise ConfigError("ablation_split", self.ablation_split, f"'both' or one of splits {self.splits}")
        if self.dataset != "mujoco" and not self.data_dir:
            raise ConfigError(
                "data_dir", self.data_dir, f"the folder of the {self.dataset} data (dataset={self.dataset})"
            )
        if self.data_dir and self.dataset == "mujoco":
            raise ConfigError("data_dir", self.data_dir, "empty unless dataset is procthor or epic-kitchens")
        if self.backbone_weights and self.backbone == "cnn":
            raise ConfigError("backbone_weights", self.backbone_weights, "empty unless backbone is 'resnet18' or 'vit'")
        if self.backbone == "resnet18" and self.backbone_weights and not Path(self.backbone_weights).is_file():
            raise ConfigError("backbone_weights", self.backbone_weights, "an existing file of ResNet-18 weights")
        if self.backbone == "vit":
            p = self.vit_patch_size
            if self.image_size % p:
                raise ConfigError("image_size", self.image_size, f"a multiple of the ViT patch size {p}")
        elif self.image_size % (2 ** len(self.cnn_channels)):
            raise ConfigError(
                "image_size",
                self.image_size,
                f"a multiple of 2^{len(self.cnn_channels)} (one halving per cnn_channels)",
            )
        if "cde-patch" in self.variants and self.top_k > self.num_patches:
            raise ConfigError("top_k", self.top_k, f"at most the {self.num_patches} patches of the feature map")

    @property
    def num_patches(self) -> int:
        """Patches of the backbone's feature map (model B)."""
        if self.backbone == "vit":
            stride = self.vit_patch_size
        else:
            stride = 32 if self.backbone == "resnet18" else 2 ** len(self.cnn_channels)
        return max(1, self.image_size // stride) ** 2

    @property
    def vit_patch_size(self) -> int:
        """backbone=vit: the patch size p in the checkpoint's config.json (``backbone_weights``).

        Reads the JSON only; the first call imports ``nn.vit_backbone`` (and torch), so only a ViT config does.
        """
        if not self.backbone_weights:
            raise ConfigError(
                "backbone_weights", self.backbone_weights, "a local Dinov2Model/ViTModel folder for backbone 'vit'"
            )
        from iclr26_generative_vision.nn.vit_backbone import read_vit_config

        try:
            vit = read_vit_config(self.backbone_weights)
        except DataError as err:
            raise ConfigError("backbone_weights", self.backbone_weights, f"a ViT checkpoint folder ({err})") from err
        patch = vit.get("patch_size", 14 if vit["model_type"] == "dinov2" else 16)  # the config classes' defaults
        return int(patch if isinstance(patch, int) else patch[0])

    def trained_on(self, variant: str) -> tuple[str, ...]:
        """The splits a variant is trained and evaluated on (ablations only on ``ablation_split``)."""
        if variant in ABLATIONS and self.ablation_split != "both":
            return (self.ablation_split,)
        return self.splits


PRESETS: dict[str, CausalDeltaConfig] = {
    "smoke": CausalDeltaConfig(
        variants=tuple(VARIANTS),  # pyright: ignore[reportArgumentType]
        num_pairs=160,
        image_size=32,
        max_distractors=1,
        cnn_channels=(8, 16),
        proj_dim=16,
        proj_hidden=32,
        respair_dim=16,
        top_k=4,
        epochs=1,
        batch_size=32,
        log_every=2,
    ),
    # ~270 CPU-seconds per seed measured. L1 as a mean over the l dims: with a CNN trained from scratch the
    # paper's sum (α_s = 1 on Σ_j |δ_j|, l = 128) drives δ to zero before the classifier reads it (README).
    "quick": CausalDeltaConfig(num_pairs=2400, image_size=48, epochs=12, batch_size=64, sparse_reduction="mean"),
    "full": CausalDeltaConfig(
        variants=tuple(VARIANTS),  # pyright: ignore[reportArgumentType]
        ablation_split="both",
        num_pairs=20000,
        image_size=64,
        cnn_channels=(64, 128, 256),
        proj_dim=256,
        proj_hidden=512,
        epochs=50,
        batch_size=128,
    ),
}
