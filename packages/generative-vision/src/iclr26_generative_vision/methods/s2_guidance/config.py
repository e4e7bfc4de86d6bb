"""Config and presets of ``s2-guidance`` (no heavy imports: ``iclr26 list`` imports this module)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from iclr26_shared.config import check_choice, check_positive, check_range
from iclr26_shared.errors import ConfigError

__all__ = ["GUIDER_NAMES", "PRESETS", "S2GuidanceConfig"]

#: Guiders the experiments can compare (see ``guidance/factory.py``).
GUIDER_NAMES = ("cond", "cfg", "s2", "naive-s2", "slg", "autoguidance")


@dataclass(frozen=True)
class S2GuidanceConfig:
    """S²-Guidance experiments: Gaussian-mixture toys (closed form + trained MLP) and a class-conditional DiT."""

    experiment: Literal["gmm", "images", "both"] = "both"
    """Which experiment to run: gmm (toys), images (DiT on real images) or both."""
    guiders: str = "cond,cfg,naive-s2,s2,slg,autoguidance"
    """Comma-separated guiders to compare: cond, cfg, s2, naive-s2, slg, autoguidance (cfg and s2 are required)."""
    s2_scale: float = 0.25
    """ω, the S² scale (paper: 0.25)."""
    drop_ratio: float = 0.1
    """Fraction of blocks dropped per mask (paper: ~10%, at least one block)."""
    s2_start: float = 0.1
    """Fraction of denoising steps after which S² starts (paper: central 80% of noise levels)."""
    s2_stop: float = 0.9
    """Fraction of denoising steps after which S² stops."""
    exclude_blocks: tuple[int, ...] = (0,)
    """Blocks never dropped (paper: the first block)."""
    naive_n: int = 4
    """N, the number of sub-networks per step of naive S² (Eq. 3)."""
    formulation: Literal["eq4", "appendix"] = "eq4"
    """eq4: Eq. 4 / Alg. 1 (−ω(D̂−D_c)); appendix: Appendix A's −ω·D̂ (contradicts Eq. 4; for comparison)."""
    fixed_blocks: tuple[int, ...] = ()
    """Blocks dropped by the fixed-layer baselines (slg, autoguidance); empty: the middle block."""
    num_inference_steps: int = 50
    """Denoising steps of the sampler."""
    scheduler: Literal["ddim", "ddpm"] = "ddim"
    """diffusers scheduler of the sampler: ddim (eta = 0, deterministic) or ddpm (ancestral)."""
    num_train_timesteps: int = 1000
    """Diffusion steps T of the DDPM training schedule (linear betas)."""
    label_dropout: float = 0.1
    """Probability of replacing the label by ∅ during training (classifier-free guidance)."""

    gmm_dims: tuple[int, ...] = (1, 2)
    """Toy mixtures: 1 (modes at ±spread) and/or 2 (four modes at (±spread, ±spread))."""
    gmm_spread: float = 4.0
    """Mode position (paper: 4)."""
    gmm_std: float = 1.0
    """Standard deviation of each mode."""
    gmm_guidance_scale: float = 3.0
    """CFG scale λ of the toy experiments."""
    gmm_hidden: int = 64
    """Width of the residual-MLP denoiser."""
    gmm_depth: int = 10
    """Residual blocks of the MLP denoiser (10% of 10 = 1 block dropped per mask)."""
    gmm_train_steps: int = 2000
    """Adam steps of the MLP denoiser."""
    gmm_batch_size: int = 256
    """Batch size of the MLP training."""
    gmm_lr: float = 2e-3
    """Learning rate of the MLP training."""
    gmm_samples: int = 1000
    """Samples per class for the toy metrics."""

    dataset: Literal["digits", "mnist-5k", "fashion-mnist"] = "digits"
    """Real image set (digits and mnist-5k ship offline; fashion-mnist needs the Debian package or $ICLR26_DATA)."""
    max_train: int = 0
    """Cap on training images (class-stratified); 0 keeps them all."""
    image_guidance_scale: float = 1.5
    """CFG scale λ of the image experiment (the same for every guider; the small DiT breaks down above ~2)."""
    patch_size: int = 2
    """DiT patch size."""
    dit_hidden: int = 64
    """DiT width."""
    dit_depth: int = 10
    """DiT blocks (10% of 10 = 1 block dropped per mask)."""
    dit_heads: int = 4
    """DiT attention heads."""
    train_steps: int = 1500
    """AdamW steps of the DiT."""
    batch_size: int = 128
    """DiT batch size."""
    lr: float = 1e-3
    """DiT learning rate (cosine decay, EMA of the weights used for sampling)."""
    ema_decay: float = 0.999
    """EMA decay of the DiT weights used for sampling."""
    samples_per_class: int = 50
    """Generated images per class for the FID-style score and class accuracy."""
    classifier_epochs: int = 15
    """Epochs of the evaluation classifier."""
    checkpoint_every: int = 1000
    """DiT training steps between checkpoints (for --resume)."""

    def __post_init__(self) -> None:
        names = self.guider_list
        for name in names:
            check_choice("guiders", name, GUIDER_NAMES)
        if len(set(names)) != len(names):
            raise ConfigError("guiders", self.guiders, "no repeated guider")
        for required in ("cfg", "s2"):
            if required not in names:
                raise ConfigError(
                    "guiders", self.guiders, f"a list that includes {required!r} (the claims compare them)"
                )
        check_positive("s2_scale", self.s2_scale, allow_zero=True)
        check_range("drop_ratio", self.drop_ratio, 0.0, 1.0, low_open=True, high_open=True)
        check_range("s2_start", self.s2_start, 0.0, 1.0, high_open=True)
        check_range("s2_stop", self.s2_stop, self.s2_start, 1.0)
        check_range("label_dropout", self.label_dropout, 0.0, 1.0, low_open=True, high_open=True)
        check_range("ema_decay", self.ema_decay, 0.0, 1.0, high_open=True)
        for name in ("gmm_spread", "gmm_std", "gmm_lr", "lr"):
            check_positive(name, getattr(self, name))
        for name in ("gmm_guidance_scale", "image_guidance_scale"):
            check_range(name, getattr(self, name), 1.0)
        for name in (
            "naive_n",
            "num_inference_steps",
            "num_train_timesteps",
            "gmm_hidden",
            "gmm_depth",
            "gmm_train_steps",
            "gmm_batch_size",
            "gmm_samples",
            "patch_size",
            "dit_hidden",
            "dit_depth",
            "dit_heads",
            "train_steps",
            "batch_size",
            "samples_per_class",
            "classifier_epochs",
            "checkpoint_every",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(name, value, "an integer >= 1")
        if self.max_train < 0:
            raise ConfigError("max_train", self.max_train, "0 (all) or a positive count")
        if not self.gmm_dims or any(d not in (1, 2) for d in self.gmm_dims):
            raise ConfigError("gmm_dims", self.gmm_dims, "a non-empty list of 1 and/or 2")
        if self.dit_hidden % self.dit_heads:
            raise ConfigError("dit_heads", self.dit_heads, f"a divisor of dit_hidden = {self.dit_hidden}")
        for name, depth in (("gmm_depth", self.gmm_depth), ("dit_depth", self.dit_depth)):
            droppable = {b % depth for b in self.exclude_blocks if -depth <= b < depth}
            if len(droppable) >= depth:
                raise ConfigError(
                    "exclude_blocks", self.exclude_blocks, f"to leave a droppable block of {name}={depth}"
                )
        if self.gmm_samples < 2:
            raise ConfigError("gmm_samples", self.gmm_samples, "at least 2")

    @property
    def guider_list(self) -> list[str]:
        """``guiders`` split at commas."""
        return [g.strip() for g in self.guiders.split(",") if g.strip()]

    @property
    def run_gmm(self) -> bool:
        """Whether the toy experiment runs."""
        return self.experiment in ("gmm", "both")

    @property
    def run_images(self) -> bool:
        """Whether the image experiment runs."""
        return self.experiment in ("images", "both")


PRESETS: dict[str, S2GuidanceConfig] = {
    "smoke": S2GuidanceConfig(
        guiders="cond,cfg,naive-s2,s2",
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
    "quick": S2GuidanceConfig(),
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
