"""Config and presets of ``richness`` (the low-rank dynamical-richness metric D_LR of Nam et al., ICLR 2026).

Light module: no torch import (``iclr26 list`` imports every domain's CLI).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import annotated_types as at

from iclr26_shared.config import NonNegFloat, NonNegInt, PosFloat, PosInt, validate
from iclr26_shared.errors import ConfigError

__all__ = ["PRESETS", "RichnessConfig", "check_inputs"]

#: A fraction strictly inside (0, 1).
OpenFraction = Annotated[float, at.Interval(gt=0, lt=1)]


@dataclass(frozen=True)
class RichnessConfig:
    """D_LR across grokking (modular addition, 2-layer transformer, AdamW) and lazy vs rich training on images."""

    grokking: bool = True
    """Run the grokking study (claim 1): D_LR over training steps across the grokking transition."""
    modulus: Annotated[int, at.Ge(3)] = 97
    """Modular addition a + b mod P: the modulus P (the paper: 97)."""
    train_fraction: OpenFraction = 0.3
    """Share of the P² pairs used for training (the rest is the test set)."""
    dim: PosInt = 128
    """Transformer residual width (the paper's setup: 128)."""
    heads: PosInt = 4
    """Attention heads (dim must be divisible by it)."""
    layers: PosInt = 2
    """Transformer blocks (the paper: 2)."""
    grok_lr: PosFloat = 1e-3
    """AdamW learning rate (full-batch training)."""
    grok_weight_decay: NonNegFloat = 1.0
    """AdamW decoupled weight decay (grokking needs it; Nanda et al. use 1.0)."""
    grok_steps: PosInt = 10000
    """Full-batch AdamW steps."""
    eval_every: PosInt = 100
    """Measure D_LR, the baselines and the accuracies every this many steps."""
    grok_accuracy: Annotated[float, at.Interval(gt=0, le=1)] = 0.9
    """Test accuracy that marks "grokked" (the first evaluation at or above it is the grokking step)."""
    final_window: PosInt = 1
    """How the grokking claims read the end of training ("final test accuracy"; the grokking point too when the run
    never groks): the median over the last ``final_window`` evaluations, so that one loss spike ("slingshot") at
    the last evaluation does not decide the claims. 1 = the last evaluation (the paper's reading; it trains at lr
    1e-3, without spikes); the quick preset, whose lr 3e-3 spikes for single evaluations, uses 5. Only the claims
    read it: training and the logged curve do not change."""
    lazy_rich: bool = True
    """Run the lazy-vs-rich study (claim 2): last layer only vs full training on a real image set."""
    dataset: Literal["digits", "mnist-5k", "fashion-mnist", "cifar10"] = "digits"
    """Image set: digits / mnist-5k ship offline; fashion-mnist / cifar10 need a local copy (ICLR26_DATA)."""
    n_train: NonNegInt = 0
    """Class-stratified training subset size (0 = the whole training split)."""
    n_test: NonNegInt = 0
    """Test subset size (0 = the whole test split)."""
    width: PosInt = 16
    """Base width w of the MLP (two hidden ReLU layers of 8w units, so p = 8w)."""
    epochs: PosInt = 30
    """Training epochs of each lazy/rich run."""
    batch_size: PosInt = 64
    """Minibatch size of the lazy/rich runs."""
    image_lr: PosFloat = 0.05
    """SGD learning rate of the lazy/rich runs (momentum 0.9, no weight decay)."""
    image_loss: Literal["mse", "ce"] = "mse"
    """Loss of the lazy/rich runs: squared error on one-hot targets (the paper's orthogonal, isotropic targets) or
    cross-entropy."""
    stress_weight_decays: tuple[PosFloat, ...] = (5e-3,)
    """Stress test (claim 4): one extra rich run per weight decay (target scale 1)."""
    stress_target_scales: tuple[PosFloat, ...] = (0.1,)
    """Stress test (claim 4): one extra rich run per target scale α (squared loss on α·one-hot, no weight decay)."""
    batch_norm_study: bool = True
    """Run the batch-norm study (claim 3): a small VGG with and without BatchNorm on ``dataset``."""
    vgg_width: PosInt = 8
    """Base width of the VGG (8 convs of w..8w channels, p = 8w)."""
    vgg_epochs: PosInt = 15
    """Training epochs of each VGG run."""
    vgg_lr: PosFloat = 0.01
    """SGD learning rate of the VGG runs (momentum 0.9, cross-entropy, as the paper's CIFAR training)."""
    control_n: Annotated[int, at.Ge(20)] = 2000
    """Controlled check: samples of the planted rich/lazy feature sets."""
    control_dim: PosInt = 128
    """Controlled check: feature dimension p of the planted sets."""
    control_classes: Annotated[int, at.Ge(2)] = 10
    """Controlled check: classes C (the planted rich features are a code of the label plus noise; the read-out with an
    intercept has centred rank C − 1, so random features sit at 1 − √((C−1)/p))."""
    eval_batch_size: PosInt = 2048
    """Batch size of the metric passes (D_LR is streamed over batches)."""
    centre_outputs: bool = True
    """D_LR's reading of Ĥ: the span of the centred outputs (the research notes' inferred estimator; the paper's
    Appendix E could not be read) or, with False, of the outputs as they are (the literal T_MP = a₁11ᵀ + a₂P_Ĥ).
    They differ only when the constant is not in the outputs' span (biased logits); see ops/richness.py."""

    def __post_init__(self) -> None:
        validate(self)
        if self.dim % self.heads:
            raise ConfigError("heads", self.heads, f"a divisor of dim = {self.dim}")
        if not (self.grokking or self.lazy_rich or self.batch_norm_study):
            raise ConfigError("grokking", self.grokking, "grokking, lazy_rich or batch_norm_study on (all are off)")
        if self.eval_every > self.grok_steps:
            raise ConfigError("eval_every", self.eval_every, f"at most grok_steps = {self.grok_steps}")
        n_evals = -(-self.grok_steps // self.eval_every) + 1  # step 0, every eval_every, and the last step
        if self.final_window > n_evals:
            raise ConfigError("final_window", self.final_window, f"at most the {n_evals} grokking evaluations")
        if self.image_loss == "ce" and self.stress_target_scales:
            raise ConfigError(
                "stress_target_scales", self.stress_target_scales, "empty with image_loss = ce (targets are classes)"
            )
        if self.control_dim < self.control_classes:
            raise ConfigError("control_dim", self.control_dim, f"at least control_classes = {self.control_classes}")


def check_inputs(cfg: RichnessConfig) -> None:
    """The image set of the lazy-vs-rich and batch-norm studies (when either is on) must be on disk: the CLI calls
    this before torch is imported (``MethodSpec.check_inputs``), so an absent opt-in set (``fashion-mnist``,
    ``cifar10``) is exit 2 with the loader's own one-line message (:func:`iclr26_shared.data.check_dataset`; reads
    no data). A grokking-only run reads no image set, so its ``dataset`` is not checked."""
    from iclr26_shared.data import check_dataset

    if cfg.lazy_rich or cfg.batch_norm_study:
        check_dataset(cfg.dataset)


PRESETS: dict[str, RichnessConfig] = {
    # seconds: P = 11, a tiny transformer for 200 steps, 300 digits for 3 epochs
    "smoke": RichnessConfig(
        modulus=11,
        train_fraction=0.5,
        dim=16,
        heads=2,
        grok_lr=3e-3,
        grok_steps=200,
        eval_every=50,
        n_train=300,
        n_test=100,
        width=4,
        epochs=3,
        vgg_width=2,
        vgg_epochs=2,
        control_n=300,
        control_dim=32,
    ),
    # about 5 minutes on 2 idle CPU cores: P = 23, half of the 529 pairs for training, a 2-layer transformer of
    # width 32 with lr 3e-3 (the smallest setting we found to grok within ~2,000 full-batch steps on a CPU; the
    # paper's P = 97 at width 128 needs ~10k steps); the whole digits set for lazy vs rich
    "quick": RichnessConfig(
        modulus=23,
        train_fraction=0.5,
        dim=32,
        grok_lr=3e-3,
        grok_steps=2000,
        eval_every=50,
        final_window=5,  # the last 5 evaluations (steps 1,800-2,000): lr 3e-3 has single-evaluation loss spikes
        width=16,
        epochs=30,
    ),
    # the paper's setting: P = 97, 30 % of the pairs, width 128, 10k full-batch steps (GPU advised); MNIST-5k
    "full": RichnessConfig(dataset="mnist-5k", width=64, epochs=50, vgg_width=32, vgg_epochs=50),
}
