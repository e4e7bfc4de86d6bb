"""Config and presets of ``s2-guidance`` (no heavy imports: ``iclr26 list`` imports this module)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import annotated_types as at

from iclr26_shared.config import NonNegFloat, NonNegInt, PosFloat, PosInt, UnitFloat, validate
from iclr26_shared.errors import ConfigError

__all__ = ["check_inputs", "GUIDER_NAMES", "PRESETS", "GuiderName", "S2GuidanceConfig"]

#: A guider the experiments can compare (see ``guidance/factory.py``).
GuiderName = Literal["cond", "cfg", "s2", "naive-s2", "slg", "autoguidance"]
#: Every guider name, in the order of :data:`GuiderName`.
GUIDER_NAMES: tuple[str, ...] = ("cond", "cfg", "s2", "naive-s2", "slg", "autoguidance")

#: A fraction strictly between 0 and 1.
OpenUnit = Annotated[float, at.Interval(gt=0, lt=1)]
#: A CFG scale λ >= 1.
GuidanceScale = Annotated[float, at.Ge(1)]


@dataclass(frozen=True)
class S2GuidanceConfig:
    """S²-Guidance experiments: Gaussian-mixture toys (closed form + trained MLP) and a class-conditional DiT."""

    experiment: Literal["gmm", "images", "both"] = "both"
    """Which experiment to run: gmm (toys), images (DiT on real images) or both."""
    guiders: tuple[GuiderName, ...] = ("cond", "cfg", "naive-s2", "s2", "slg", "autoguidance")
    """Guiders to compare: cond, cfg, s2, naive-s2, slg, autoguidance (cfg and s2 are required)."""
    s2_scale: NonNegFloat = 0.25
    """ω, the S² scale (paper: 0.25)."""
    s2_sweep: tuple[NonNegFloat, ...] = (0.0, 0.1, 0.25, 0.5, 1.0)
    """ω values of the S² sweep on the trained denoisers (ω = 0 is CFG, Eq. 4; paper Fig. 7b); empty: none."""
    image_guiders: tuple[GuiderName, ...] | None = None
    """Guiders of the image experiment (None: ``guiders``; cfg and s2 are required). The claims on naive S²
    are the toys'; on the DiT every guider but cfg and s2 is a reported baseline row."""
    image_s2_sweep: tuple[NonNegFloat, ...] | None = None
    """ω values of the S² sweep on the DiT (None: ``s2_sweep``; a diagnostic, no claim)."""
    drop_ratio: OpenUnit = 0.1
    """Fraction of blocks dropped per mask (paper: ~10%, at least one block)."""
    s2_start: Annotated[float, at.Interval(ge=0, lt=1)] = 0.1
    """Fraction of denoising steps after which S² starts (paper: central 80% of noise levels)."""
    s2_stop: UnitFloat = 0.9
    """Fraction of denoising steps after which S² stops."""
    exclude_blocks: tuple[int, ...] = (0,)
    """Blocks never dropped (paper: the first block)."""
    naive_n: PosInt = 4
    """N, the number of sub-networks per step of naive S² (Eq. 3)."""
    formulation: Literal["eq4", "appendix"] = "eq4"
    """eq4: Eq. 4 / Alg. 1 (−ω(D̂−D_c)); appendix: Appendix A's −ω·D̂ (contradicts Eq. 4; for comparison)."""
    fixed_blocks: tuple[int, ...] = ()
    """Blocks dropped by the fixed-layer baselines (slg, autoguidance); empty: the middle block."""
    num_inference_steps: PosInt = 50
    """Denoising steps of the sampler."""
    scheduler: Literal["ddim", "ddpm"] = "ddim"
    """diffusers scheduler of the sampler: ddim (eta = 0, deterministic) or ddpm (ancestral)."""
    num_train_timesteps: PosInt = 1000
    """Diffusion steps T of the DDPM training schedule (linear betas)."""
    label_dropout: OpenUnit = 0.1
    """Probability of replacing the label by ∅ during training (classifier-free guidance)."""

    gmm_dims: Annotated[tuple[Literal[1, 2], ...], at.MinLen(1)] = (1, 2)
    """Toy mixtures: 1 (modes at ±spread) and/or 2 (four modes at (±spread, ±spread))."""
    gmm_spread: PosFloat = 4.0
    """Mode position (paper: 4)."""
    gmm_std: PosFloat = 1.0
    """Standard deviation of each mode."""
    gmm_guidance_scale: GuidanceScale = 3.0
    """CFG scale λ of the toy experiments."""
    gmm_hidden: PosInt = 64
    """Width of the residual-MLP denoiser."""
    gmm_depth: PosInt = 10
    """Residual blocks of the MLP denoiser (10% of 10 = 1 block dropped per mask)."""
    gmm_train_steps: PosInt = 2000
    """Adam steps of the MLP denoiser."""
    gmm_batch_size: PosInt = 256
    """Batch size of the MLP training."""
    gmm_lr: PosFloat = 2e-3
    """Learning rate of the MLP training."""
    gmm_samples: Annotated[int, at.Ge(2)] = 1000
    """Samples per class for the toy metrics."""
    gmm_sample_batch: NonNegInt = 0
    """Rows per MLP forward while sampling the toys (0: all at once); the same samples bit for bit (tested);
    2,000-row chunks of the quick preset's 4,000 rows measured no faster, so off by default."""

    dataset: Literal["digits", "mnist-5k", "fashion-mnist"] = "digits"
    """Real image set (digits and mnist-5k ship offline; fashion-mnist needs the Debian package or $ICLR26_DATA)."""
    max_train: NonNegInt = 0
    """Cap on training images (class-stratified); 0 keeps them all."""
    image_guidance_scale: GuidanceScale = 1.5
    """CFG scale λ of the image experiment (the same for every guider; the small DiT breaks down above ~2)."""
    patch_size: PosInt = 2
    """DiT patch size."""
    dit_hidden: PosInt = 64
    """DiT width."""
    dit_depth: PosInt = 10
    """DiT blocks (10% of 10 = 1 block dropped per mask)."""
    dit_heads: PosInt = 4
    """DiT attention heads."""
    dit_activation: Literal["gelu-approximate", "gelu"] = "gelu-approximate"
    """The DiT blocks' MLP activation: tanh GELU (DiT's) or exact GELU (3.6x faster forward on CPU; quick)."""
    train_steps: PosInt = 1500
    """AdamW steps of the DiT."""
    batch_size: PosInt = 128
    """DiT batch size."""
    lr: PosFloat = 1e-3
    """DiT learning rate (cosine decay, EMA of the weights used for sampling)."""
    ema_decay: Annotated[float, at.Interval(ge=0, lt=1)] = 0.999
    """EMA decay of the DiT weights used for sampling."""
    samples_per_class: PosInt = 50
    """Generated images per class for the FID-style score and class accuracy."""
    sample_batch: NonNegInt = 128
    """Rows per DiT forward while sampling (0: all at once), in balanced chunks: the same samples bit for
    bit at 16+ images per chunk (rows are independent; tested), ~1.4x faster on CPU than 500 rows at once."""
    classifier_epochs: PosInt = 15
    """Epochs of the evaluation classifier."""
    checkpoint_every: PosInt = 1000
    """DiT training steps between checkpoints (for --resume)."""
    log_every: PosInt = 50
    """DiT training steps between ``metrics.jsonl`` rows of the loss (and the last step)."""

    def __post_init__(self) -> None:
        validate(self)
        for field, guiders in (("guiders", self.guiders), ("image_guiders", self.dit_guiders)):
            if len(set(guiders)) != len(guiders):
                raise ConfigError(field, guiders, "no repeated guider")
            for required in ("cfg", "s2"):
                if required not in guiders:
                    raise ConfigError(field, guiders, f"a list that includes {required!r} (the claims compare them)")
        if self.s2_stop < self.s2_start:
            raise ConfigError("s2_stop", self.s2_stop, f"a number >= s2_start = {self.s2_start:g}")
        if self.dit_hidden % self.dit_heads:
            raise ConfigError("dit_heads", self.dit_heads, f"a divisor of dit_hidden = {self.dit_hidden}")
        for name, depth in (("gmm_depth", self.gmm_depth), ("dit_depth", self.dit_depth)):
            droppable = {b % depth for b in self.exclude_blocks if -depth <= b < depth}
            if len(droppable) >= depth:
                raise ConfigError(
                    "exclude_blocks", self.exclude_blocks, f"to leave a droppable block of {name}={depth}"
                )

    @property
    def dit_guiders(self) -> tuple[str, ...]:
        """The image experiment's guiders (``image_guiders``, or ``guiders`` when None)."""
        return self.guiders if self.image_guiders is None else self.image_guiders

    @property
    def dit_s2_sweep(self) -> tuple[float, ...]:
        """The image experiment's ω sweep (``image_s2_sweep``, or ``s2_sweep`` when None)."""
        return self.s2_sweep if self.image_s2_sweep is None else self.image_s2_sweep

    @property
    def run_gmm(self) -> bool:
        """Whether the toy experiment runs."""
        return self.experiment in ("gmm", "both")

    @property
    def run_images(self) -> bool:
        """Whether the image experiment runs."""
        return self.experiment in ("images", "both")


def check_inputs(cfg: S2GuidanceConfig) -> None:
    """An opt-in image set (``fashion-mnist``) must be on disk: checked by the CLI before torch is
    imported, with the loader's own one-line message (:func:`iclr26_shared.data.check_dataset`)."""
    from iclr26_shared.data import check_dataset

    check_dataset(cfg.dataset)


PRESETS: dict[str, S2GuidanceConfig] = {
    "smoke": S2GuidanceConfig(
        guiders=("cond", "cfg", "naive-s2", "s2"),
        s2_sweep=(0.0, 0.25, 1.0),
        image_guiders=("cond", "cfg", "s2"),
        image_s2_sweep=(0.0, 0.25, 0.5),
        num_inference_steps=10,
        gmm_dims=(1,),
        gmm_hidden=32,
        gmm_depth=4,
        gmm_train_steps=60,
        gmm_batch_size=128,
        gmm_samples=64,
        max_train=200,
        dit_hidden=32,
        dit_depth=4,
        dit_heads=2,
        patch_size=4,
        train_steps=30,
        batch_size=32,
        samples_per_class=4,
        classifier_epochs=1,
        checkpoint_every=10,
    ),
    # issue 36's budget of 20 CPU-minutes for the four quick runs, without touching a claim: the DiT leaves
    # out naive S² (260 NFE per sample, ~55 CPU-s; the naive-S² claims are the toys'), AutoGuidance (100
    # NFE, ~23 CPU-s; SLG, the fixed-block relative of S², stays) and the ω sweep (ω = 0.1, 0.5, 1: ~80
    # CPU-s, a diagnostic); the toys keep all of them; the DiT's MLPs use exact GELU (tanh GELU's forward
    # is 3.6x slower on this CPU: ~25 CPU-s)
    "quick": S2GuidanceConfig(image_guiders=("cond", "cfg", "s2", "slg"), image_s2_sweep=(), dit_activation="gelu"),
    "full": S2GuidanceConfig(
        dataset="mnist-5k",
        patch_size=4,
        dit_hidden=192,
        dit_depth=12,
        dit_heads=6,
        train_steps=30000,
        batch_size=256,
        samples_per_class=500,
        gmm_samples=4000,
        gmm_hidden=128,
        gmm_batch_size=512,
        gmm_train_steps=10000,
        checkpoint_every=2000,
    ),
}
