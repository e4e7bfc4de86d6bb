"""Config and presets of ``dupa`` (no heavy imports: ``iclr26 list`` imports this module)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Literal

import annotated_types as at

from iclr26_shared.config import NonNegFloat, NonNegInt, PosFloat, PosInt, validate
from iclr26_shared.errors import ConfigError

__all__ = ["check_inputs", "PRESETS", "VARIANTS", "DUPAConfig", "Variant"]

#: A model trained in the comparison: ``ddt`` (K = 1, λ = 0: the paper's baseline), ``dual-path`` (K paths,
#: λ = 0: the ablation row "+ dual-path sampling"), ``dupa`` (K paths, λ > 0: the method), ``ddt-2x-batch``
#: (K = 1 with K× the images per step: the batch-augmentation control reviewers asked for).
Variant = Literal["ddt", "dual-path", "dupa", "ddt-2x-batch"]
VARIANTS: tuple[str, ...] = ("ddt", "dual-path", "dupa", "ddt-2x-batch")

OpenUnit = Annotated[float, at.Interval(gt=0, lt=1)]


@dataclass(frozen=True)
class DUPAConfig:
    """DUPA vs DDT: the variants are trained in lock-step from the same initialisation and batches."""

    variants: Annotated[tuple[Variant, ...], at.MinLen(1)] = ("ddt", "dual-path", "dupa")
    """Models to train and compare: ddt, dual-path, dupa, ddt-2x-batch (the claims need ddt and dupa)."""
    num_paths: Annotated[int, at.Ge(2)] = 2
    """K, noisy paths per image for dual-path / dupa (paper: 2; 3 is better but costlier)."""
    dupa_weight: PosFloat = 0.5
    """λ of L = L_velocity + λ L_DUPA (paper: 0.5; insensitive in [0.25, 1])."""
    align_layer: NonNegInt = 0
    """Block (1-based) whose tokens are aligned; 0 = DDT's REPA proportion, block ⌈8·n_enc/22⌉ of the encoder
    (DDT-XL's align_layer 8 of 22 encoder blocks: an intermediate block, not the encoder output)."""
    resample: Literal["both", "time", "noise"] = "both"
    """What each path draws afresh: both t and ε (paper), only t, or only ε (ablation)."""
    stop_grad: bool = False
    """SimSiam-style stop-gradient in the cosine (ablation; the paper's loss is symmetric)."""
    projector_hidden: PosInt = 128
    """Hidden width of the 3-layer projector z_φ."""
    projector_dim: PosInt = 64
    """Output width of the projector."""
    projector_gain: PosFloat = 0.1
    """Xavier gain of the projector's 2nd/3rd layers (small, never 0: a zero init collapses; 1st layer Kaiming)."""
    projector_mode: Literal["trained", "frozen"] = "trained"
    """The projector z_φ trains with the model (paper), or stays at its random init (collapse remedy)."""
    predictor: bool = False
    """Collapse remedy: a SimSiam/BYOL-style predictor q on the online side, stop-gradient on the target side
    (½[cos(q(p_i), sg p_j) + cos(q(p_j), sg p_i)]); not in the paper."""
    predictor_hidden: PosInt = 64
    """Hidden width of the predictor q (predictor = true)."""

    arch: Literal["ddt", "dit"] = "ddt"
    """Backbone blocks: ddt (RMSNorm, qk-norm, 2-D RoPE, SwiGLU) or dit (LayerNorm, sin-cos, GELU)."""
    patch_size: PosInt = 2
    """Patch side p."""
    hidden: PosInt = 64
    """Width H."""
    encoder_depth: PosInt = 4
    """Condition-encoder blocks (DDT-XL: 22 of 28)."""
    decoder_depth: PosInt = 2
    """Velocity-decoder blocks (DDT-XL: 6 of 28)."""
    heads: PosInt = 4
    """Attention heads (H/heads divisible by 4 for the 2-D RoPE of arch=ddt)."""
    time_sampling: Literal["lognormal", "uniform"] = "lognormal"
    """Training times: lognormal t = sigmoid(N(0,1)) (DDT) or uniform (SiT)."""
    label_dropout: OpenUnit = 0.1
    """Probability of training with the null label ∅ (classifier-free guidance)."""

    dataset: Literal["digits", "mnist-5k", "fashion-mnist"] = "digits"
    """Real image set (digits and mnist-5k ship offline; fashion-mnist needs the Debian package or $ICLR26_DATA)."""
    max_train: NonNegInt = 0
    """Cap on training images (class-stratified); 0 keeps them all."""
    train_steps: PosInt = 1200
    """Optimizer steps of every variant (equal steps: the paper's comparison)."""
    batch_size: PosInt = 64
    """Images per step (each seen through K paths by dual-path / dupa; torchrun must divide it)."""
    lr: PosFloat = 1e-3
    """AdamW learning rate (betas 0.9/0.95, no weight decay, as DDT), linear warmup then constant."""
    ema_decay: Annotated[float, at.Interval(ge=0, lt=1)] = 0.999
    """EMA decay of the weights that are sampled."""
    eval_every: PosInt = 200
    """Steps between FID-style evaluations of every variant (the convergence curves of claim 2)."""
    eval_samples_per_class: PosInt = 20
    """Samples per class at the intermediate evaluations."""
    samples_per_class: PosInt = 50
    """Samples per class at the final evaluation."""
    num_inference_steps: PosInt = 25
    """Euler steps of the sampler."""
    sample_batch: NonNegInt = 128
    """Rows per DDT forward while sampling (0: all at once), in balanced chunks: the same samples bit for
    bit at 16+ images per chunk (rows are independent; tested), ~1.4x faster on CPU than 500 rows at once."""
    guidance_scale: Annotated[float, at.Ge(1)] = 1.0
    """CFG scale of the claims' samples (1 = none, as the paper's ablation table)."""
    cfg_guidance_scale: Annotated[float, at.Ge(1)] = 1.5
    """CFG scale of the extra final evaluation with guidance (reported, no claim); 1 skips it."""
    cfg_interval: tuple[NonNegFloat, NonNegFloat] = (0.0, 0.7)
    """Times t (t = 1 noise) where CFG applies (DDT's t_ddt ∈ (0.3, 1) in our convention)."""
    refresh_rates: Annotated[tuple[PosInt, ...], at.MinLen(1)] = (1, 2, 3, 4)
    """Encoder-sharing rates k of the sampling curve (the condition is recomputed every k steps)."""
    shared_refresh_rate: Annotated[int, at.Ge(2)] = 2
    """The sharing rate claim 3 is judged at (must be in refresh_rates)."""
    classifier_epochs: PosInt = 15
    """Epochs of the evaluation classifier (the S²-Guidance method's CNN)."""
    checkpoint_every: PosInt = 400
    """Steps between checkpoints (for --resume)."""
    log_every: PosInt = 50
    """Steps between metrics.jsonl rows of the training losses."""

    def __post_init__(self) -> None:
        validate(self)
        if len(set(self.variants)) != len(self.variants):
            raise ConfigError("variants", self.variants, "no repeated variant")
        for required in ("ddt", "dupa"):
            if required not in self.variants:
                raise ConfigError(
                    "variants", self.variants, f"a list that includes {required!r} (the claims compare them)"
                )
        if self.predictor and self.stop_grad:
            raise ConfigError("stop_grad", self.stop_grad, "false with predictor = true (its target side is stop-grad)")
        if self.hidden % self.heads:
            raise ConfigError("heads", self.heads, f"a divisor of hidden = {self.hidden}")
        if self.arch == "ddt" and (self.hidden // self.heads) % 4:
            raise ConfigError(
                "heads", self.heads, f"a head count with hidden/heads divisible by 4 (2-D RoPE), hidden = {self.hidden}"
            )
        if self.align_layer > self.encoder_depth + self.decoder_depth:
            raise ConfigError(
                "align_layer",
                self.align_layer,
                f"0 (encoder output) or a block in 1..{self.encoder_depth + self.decoder_depth}",
            )
        lo, hi = self.cfg_interval
        if not 0 <= lo < hi <= 1:
            raise ConfigError("cfg_interval", self.cfg_interval, "two times 0 <= low < high <= 1")
        if 1 not in self.refresh_rates:
            raise ConfigError("refresh_rates", self.refresh_rates, "a list that includes 1 (no sharing, the reference)")
        if self.shared_refresh_rate not in self.refresh_rates:
            raise ConfigError(
                "shared_refresh_rate", self.shared_refresh_rate, f"one of refresh_rates {self.refresh_rates}"
            )
        if self.eval_every > self.train_steps:
            raise ConfigError("eval_every", self.eval_every, f"at most train_steps = {self.train_steps}")

    @property
    def aligned_layer(self) -> int:
        """The 1-based block whose output is aligned (``align_layer``, or DDT's ⌈8·n_enc/22⌉)."""
        return self.align_layer or max(1, math.ceil(8 * self.encoder_depth / 22))

    def paths(self, variant: str) -> int:
        """K of a variant (1 for the baselines)."""
        return self.num_paths if variant in ("dual-path", "dupa") else 1

    def images_per_step(self, variant: str) -> int:
        """Images per step of a variant (K× for the batch-augmentation control)."""
        return self.batch_size * (self.num_paths if variant == "ddt-2x-batch" else 1)


def check_inputs(cfg: DUPAConfig) -> None:
    """An opt-in image set (``fashion-mnist``) must be on disk: checked by the CLI before torch is
    imported, with the loader's own one-line message (:func:`iclr26_shared.data.check_dataset`)."""
    from iclr26_shared.data import check_dataset

    check_dataset(cfg.dataset)


PRESETS: dict[str, DUPAConfig] = {
    "smoke": DUPAConfig(
        max_train=200,
        hidden=32,
        heads=2,
        encoder_depth=2,
        decoder_depth=1,
        patch_size=4,
        projector_hidden=32,
        projector_dim=16,
        train_steps=20,
        batch_size=16,
        eval_every=10,
        eval_samples_per_class=2,
        samples_per_class=4,
        num_inference_steps=6,
        refresh_rates=(1, 2),
        classifier_epochs=1,
        checkpoint_every=10,
        log_every=5,
    ),
    # ~5.5 CPU-minutes; 1,000 steps took 416 CPU-s on an idle 2026-12-04 machine, over the four quick runs'
    # 20 CPU-minute budget (issue 36); curves at the same five points per run as before (every 140 steps)
    "quick": DUPAConfig(train_steps=700, eval_every=140, checkpoint_every=350),
    "full": DUPAConfig(
        dataset="mnist-5k",
        variants=("ddt", "dual-path", "dupa", "ddt-2x-batch"),
        patch_size=4,
        hidden=192,
        heads=6,
        encoder_depth=8,
        decoder_depth=4,
        projector_hidden=768,
        projector_dim=256,
        train_steps=40000,
        batch_size=256,
        lr=2e-4,
        ema_decay=0.9999,
        eval_every=4000,
        eval_samples_per_class=100,
        samples_per_class=500,
        num_inference_steps=50,
        checkpoint_every=4000,
    ),
}
