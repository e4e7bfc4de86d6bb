"""Config and presets of ``neural-collapse`` (the optimizer study of Zhao et al., ICLR 2026),
and the expansion of a config into its training runs.

Light module: no torch import (``iclr26 list`` imports every domain's CLI).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Annotated, Literal

import annotated_types as at

from iclr26_shared.config import NonNegFloat, NonNegInt, PosFloat, PosInt, UnitFloat, validate
from iclr26_shared.errors import ConfigError

__all__ = [
    "BEST_NC3",
    "OPTIMIZERS",
    "PAPER_GRID",
    "PRESETS",
    "SWEEP_WD_FACTORS",
    "NeuralCollapseConfig",
    "OptimizerName",
    "RunSpec",
    "check_inputs",
    "expand_grid",
]

OptimizerName = Literal["sgd", "sgdw", "adam", "adamw", "signum", "signumw"]
#: A momentum / Adam β in [0, 1).
Momentum = Annotated[float, at.Interval(ge=0, lt=1)]

#: The six optimizers of the study.
OPTIMIZERS: tuple[OptimizerName, ...] = ("sgd", "sgdw", "adam", "adamw", "signum", "signumw")

#: The paper's best-NC3 hyperparameters (learning rate, momentum/β₁, weight decay), as it reports them for ResNet9.
BEST_NC3: dict[str, tuple[float, float, float]] = {
    "sgd": (0.01, 0.9, 0.05),
    "sgdw": (0.0679, 0.5, 0.05),
    "adam": (0.005, 0.98, 0.05),
    "adamw": (0.005, 0.95, 5.0),
    "signum": (0.001, 0.9, 0.05),
    "signumw": (0.001, 0.98, 10.0),
}

_MOMENTA = (0.0, 0.5, 0.7, 0.9, 0.95, 0.98)
_WD_COUPLED = (0.0, 5e-5, 5e-4, 5e-3, 0.05, 0.5)
_WD_DECOUPLED = (0.0, 5e-4, 0.05, 0.5, 5.0, 10.0)
#: The paper's hyperparameter grid per optimizer: (learning rates, momenta, weight decays); 3 × 6 × 6 = 108 runs.
PAPER_GRID: dict[str, tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]] = {
    "sgd": ((0.001, 0.01, 0.0679), _MOMENTA, _WD_COUPLED),
    "sgdw": ((0.001, 0.01, 0.0679), _MOMENTA, _WD_COUPLED),
    "adam": ((0.001, 0.005, 0.01), _MOMENTA, _WD_COUPLED),
    "adamw": ((0.001, 0.005, 0.01), _MOMENTA, _WD_DECOUPLED),
    "signum": ((0.001, 0.005, 0.01), _MOMENTA, _WD_COUPLED),
    "signumw": ((0.001, 0.005, 0.01), _MOMENTA, _WD_DECOUPLED),
}

#: ``grid="sweep"`` multiplies the best-NC3 weight decay by these factors.
SWEEP_WD_FACTORS: tuple[float, ...] = (1.0, 0.1)


def _zero_or_one_per_class(n: int) -> bool:
    """0 (all) or at least 10 (one image per class)"""
    return n == 0 or n >= 10


@dataclass(frozen=True)
class NeuralCollapseConfig:
    """Neural collapse vs optimizer choice: UFM theorem checks and a grid of real training runs."""

    dataset: Literal["digits", "mnist-5k", "fashion-mnist", "cifar10"] = "digits"
    """Image set: digits / mnist-5k ship offline; fashion-mnist / cifar10 need a local copy (ICLR26_DATA)."""
    n_train: Annotated[NonNegInt, at.Predicate(_zero_or_one_per_class)] = 0
    """Class-stratified training subset size (0 = the whole training split)."""
    n_test: NonNegInt = 0
    """Test subset size (0 = the whole test split)."""
    model: Literal["resnet9", "vgg9", "mlp"] = "resnet9"
    """Network: ResNet9- or VGG9-style CNN (the paper's two), or an MLP."""
    width: PosInt = 8
    """Base width w of the network (channels w, 2w, 4w, 8w; feature dimension p = 8w). The paper's nets use 64."""
    classifier_bias: bool = True
    """Give the last linear layer a bias (used by NC4)."""
    optimizers: tuple[OptimizerName, ...] = OPTIMIZERS
    """Optimizers to train with (each at most once; sgd, sgdw, adam, adamw, signum, signumw)."""
    grid: Literal["best", "sweep", "paper"] = "best"
    """Hyperparameters per optimizer: best = the paper's best-NC3 (lr, momentum, WD); sweep = best lr and momentum
    with WD in {best, best/10}; paper = the full 3 × 6 × 6 grid."""
    lrs: tuple[PosFloat, ...] = ()
    """Learning rates replacing the grid's (empty = from the grid)."""
    momenta: tuple[Momentum, ...] = ()
    """Momenta / Adam β₁ in [0, 1) replacing the grid's (empty = from the grid)."""
    weight_decays: tuple[NonNegFloat, ...] = ()
    """Weight decays replacing the grid's (empty = from the grid)."""
    momentum_ablation: Literal["off", "matched", "nominal", "both"] = "matched"
    """SGD runs without momentum at the first SGD setting (lr η, momentum β, WD λ), for the claim that momentum
    speeds up NC: matched = at the same effective step η/(1−β) (the claim's comparison); nominal = at the same
    η (momentum's effective step is then 1/(1−β) times larger); both; off."""
    beta2: Momentum = 0.999
    """Adam β₂."""
    epochs: PosInt = 30
    """Training epochs per run."""
    batch_size: PosInt = 128
    """Minibatch size."""
    lr_decay: bool = True
    """Multiply the learning rate by 0.1 at 1/3 and 2/3 of training (Papyan et al.)."""
    valid_accuracy: UnitFloat = 0.99
    """Runs count as converged ("valid") when their final training accuracy reaches this."""
    nc0_squared: bool = False
    """NC0 as |Wᵀ1|²/p instead of |Wᵀ1|/p (the paper's Eq. 12 is ambiguous)."""
    nc_scale: Literal["paper", "none"] = "paper"
    """NC2/NC3 normalisation: paper = 1/K² and 1/(Kp) as in Appendix B; none = the rhubarbwu library's."""
    nc3_form: Literal["alignment", "self-duality"] = "alignment"
    """NC3 as written in Appendix B (alignment of W with Mᵀ, both Frobenius-normalised) or the self-duality
    error ‖WM/‖WM‖ − M*‖ of the rhubarbwu library (= NC2M); both are always logged (nc3_alignment, nc3_duality)."""
    nc4_form: Literal["agreement", "mismatch"] = "agreement"
    """NC4 as agreement with the nearest-class-centre rule (→ 1) or mismatch (→ 0)."""
    eval_batch_size: PosInt = 1024
    """Batch size of the per-epoch metric passes."""
    train: bool = True
    """Run the training grid (claims 2 and 3); off = only the UFM checks."""
    ufm: bool = True
    """Run the UFM simulations of Theorems 3.1–3.4 (claim 1)."""
    ufm_classes: Annotated[int, at.Ge(3)] = 10
    """UFM: number of classes K (at least 3: Thm 3.3's limit (K−2)²/λ² is 0 for K = 2)."""
    ufm_dim: PosInt = 32
    """UFM: feature dimension for the SGD runs with free features (the SignGD runs use p = K)."""
    ufm_per_class: PosInt = 5
    """UFM: samples per class."""
    ufm_steps: PosInt = 2000
    """UFM: full-batch steps per simulation."""
    ufm_sgd_lr: PosFloat = 0.1
    """UFM: SGD/SGDW step size η."""
    ufm_sgd_momentum: Momentum = 0.9
    """UFM: SGD/SGDW momentum β."""
    ufm_sgd_wd: PosFloat = 0.05
    """UFM: SGD/SGDW weight decay λ (Thm 3.1 needs 0 < ηλ < 2, Thm 3.2 ηλ < 2(1+β))."""
    ufm_sign_lr: PosFloat = 0.01
    """UFM: SignGD step size η (the initial one under the decaying schedule)."""
    ufm_sign_wd: PosFloat = 0.5
    """UFM: SignGD weight decay λ."""
    ufm_lr_tau: PosFloat = 50.0
    """UFM: decaying schedule η_t = η/(1 + t/τ) for coupled SignGD (Thm 3.4)."""

    def __post_init__(self) -> None:
        validate(self)
        if self.train and not self.optimizers:
            raise ConfigError("optimizers", self.optimizers, "at least one of " + ", ".join(OPTIMIZERS))
        if len(set(self.optimizers)) != len(self.optimizers):
            raise ConfigError("optimizers", self.optimizers, "each optimizer at most once")
        if self.ufm_dim < self.ufm_classes:
            raise ConfigError("ufm_dim", self.ufm_dim, f"at least ufm_classes = {self.ufm_classes}")
        if self.ufm_sgd_lr * self.ufm_sgd_wd >= 2.0:
            raise ConfigError("ufm_sgd_wd", self.ufm_sgd_wd, "ufm_sgd_lr * ufm_sgd_wd < 2 (Theorem 3.1's condition)")
        if self.ufm_sign_lr * self.ufm_sign_wd >= 1.0:
            raise ConfigError("ufm_sign_wd", self.ufm_sign_wd, "ufm_sign_lr * ufm_sign_wd < 1")
        if not (self.train or self.ufm):
            raise ConfigError("train", self.train, "train or ufm to be on (both are off: nothing to run)")


@dataclass(frozen=True)
class RunSpec:
    """One training run: optimizer, hyperparameters and its role (``grid`` or ``ablation``)."""

    optimizer: str
    lr: float
    momentum: float
    weight_decay: float
    role: str = "grid"

    @property
    def label(self) -> str:
        """Short label, e.g. ``sgd lr=0.01 m=0.9 wd=0.05``."""
        return f"{self.optimizer} lr={self.lr:g} m={self.momentum:g} wd={self.weight_decay:g}"


def expand_grid(cfg: NeuralCollapseConfig) -> list[RunSpec]:
    """The runs of ``cfg``: per optimizer the grid's (lr × momentum × WD), the ``lrs``/``momenta``/``weight_decays``
    overrides replacing the grid's lists; then (``momentum_ablation``) SGD with momentum 0 at the first SGD
    setting (η, β, λ), when β > 0: role ``ablation-matched`` at the learning rate η/(1−β) (heavy-ball momentum's
    effective step), role ``ablation`` at η."""
    runs: list[RunSpec] = []
    for name in cfg.optimizers:
        lr, mom, wd = BEST_NC3[name]
        if cfg.grid == "best":
            lists = ((lr,), (mom,), (wd,))
        elif cfg.grid == "sweep":
            lists = ((lr,), (mom,), tuple(wd * f for f in SWEEP_WD_FACTORS))
        else:
            lists = PAPER_GRID[name]
        lrs = cfg.lrs or lists[0]
        moms = cfg.momenta or lists[1]
        wds = cfg.weight_decays or lists[2]
        runs += [RunSpec(name, a, b, c) for a, b, c in itertools.product(lrs, moms, wds)]
    first = next((r for r in runs if r.optimizer == "sgd" and r.momentum > 0), None)
    if first is not None:
        if cfg.momentum_ablation in ("matched", "both"):
            matched_lr = first.lr / (1.0 - first.momentum)
            runs.append(RunSpec("sgd", matched_lr, 0.0, first.weight_decay, role="ablation-matched"))
        if cfg.momentum_ablation in ("nominal", "both"):
            runs.append(RunSpec("sgd", first.lr, 0.0, first.weight_decay, role="ablation"))
    return runs


def check_inputs(cfg: NeuralCollapseConfig) -> None:
    """An opt-in image set (``fashion-mnist``, ``cifar10``) must be on disk: the CLI calls this before torch is
    imported (``MethodSpec.check_inputs``), so an absent set is exit 2 with the loader's own one-line message
    (:func:`iclr26_shared.data.check_dataset`; reads no data) and nothing is trained or written."""
    from iclr26_shared.data import check_dataset

    check_dataset(cfg.dataset)


PRESETS: dict[str, NeuralCollapseConfig] = {
    # seconds: a small MLP on 300 digits, two optimizers, short UFM runs
    "smoke": NeuralCollapseConfig(
        n_train=300,
        n_test=100,
        model="mlp",
        width=4,
        optimizers=("sgd", "adamw"),
        momentum_ablation="matched",
        epochs=3,
        batch_size=32,
        ufm_steps=300,
        ufm_sgd_wd=0.5,
        ufm_sign_lr=0.05,
        ufm_lr_tau=5.0,
    ),
    # tens of minutes on 2 CPU cores: VGG9-style (w = 8, p = 64) on the 1,438 digits, the six optimizers at the
    # paper's best-NC3 settings with WD in {best, best/10}, plus SGD without momentum at the matched and at the
    # nominal lr (14 runs). Batch 32 and 60 epochs give 2,700 steps per run, enough for SGD's weight decay to
    # shrink NC0 by orders of magnitude.
    "quick": NeuralCollapseConfig(model="vgg9", grid="sweep", batch_size=32, epochs=60, momentum_ablation="both"),
    # the paper's grid on MNIST-5k with a wider ResNet9 (a GPU is advised: 648 runs)
    "full": NeuralCollapseConfig(
        dataset="mnist-5k", width=16, grid="paper", epochs=200, momentum_ablation="off", ufm_steps=5000
    ),
}
