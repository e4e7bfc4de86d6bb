"""Config and presets of ``neural-collapse`` (the optimizer study of Zhao et al., ICLR 2026).

Light module: no torch import (``iclr26 list`` imports every domain's CLI).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from iclr26_shared.config import check_choice, check_positive, check_range
from iclr26_shared.errors import ConfigError

__all__ = ["BEST_NC3", "OPTIMIZERS", "PAPER_GRID", "PRESETS", "NeuralCollapseConfig", "parse_float_list"]

#: The six optimizers of the study.
OPTIMIZERS: tuple[str, ...] = ("sgd", "sgdw", "adam", "adamw", "signum", "signumw")

#: The paper's best-NC3 hyperparameters (learning rate, momentum/β₁, weight decay), ResNet9 (§6.3 of the notes).
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
#: The paper's grid per optimizer: (learning rates, momenta, weight decays); 3 × 6 × 6 = 108 runs each.
PAPER_GRID: dict[str, tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]] = {
    "sgd": ((0.001, 0.01, 0.0679), _MOMENTA, _WD_COUPLED),
    "sgdw": ((0.001, 0.01, 0.0679), _MOMENTA, _WD_COUPLED),
    "adam": ((0.001, 0.005, 0.01), _MOMENTA, _WD_COUPLED),
    "adamw": ((0.001, 0.005, 0.01), _MOMENTA, _WD_DECOUPLED),
    "signum": ((0.001, 0.005, 0.01), _MOMENTA, _WD_COUPLED),
    "signumw": ((0.001, 0.005, 0.01), _MOMENTA, _WD_DECOUPLED),
}


def parse_float_list(field: str, text: str) -> tuple[float, ...]:
    """``"0.01,0.05"`` → ``(0.01, 0.05)``; ``""`` → ``()``; raises :class:`ConfigError` naming ``field``."""
    if not text.strip():
        return ()
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise ConfigError(field, text, "comma-separated numbers, e.g. '0.01,0.05'") from None
    for v in values:
        if not (v >= 0 and v < float("inf")):
            raise ConfigError(field, text, "finite numbers >= 0")
    return values


@dataclass(frozen=True)
class NeuralCollapseConfig:
    """Neural collapse vs optimizer choice: UFM theorem checks and a grid of real training runs."""

    dataset: Literal["digits", "mnist-5k", "fashion-mnist", "cifar10"] = "digits"
    """Image set: digits / mnist-5k ship offline; fashion-mnist / cifar10 need a local copy (ICLR26_DATA)."""
    n_train: int = 0
    """Class-stratified training subset size (0 = the whole training split)."""
    n_test: int = 0
    """Test subset size (0 = the whole test split)."""
    model: Literal["resnet9", "vgg9", "mlp"] = "resnet9"
    """Network: ResNet9- or VGG9-style CNN (the paper's two), or an MLP."""
    width: int = 8
    """Base width w of the network (channels w, 2w, 4w, 8w; feature dimension p = 8w). The paper's nets use 64."""
    classifier_bias: bool = True
    """Give the last linear layer a bias (used by NC4)."""
    optimizers: str = "sgd,sgdw,adam,adamw,signum,signumw"
    """Comma-separated optimizers to train with (sgd, sgdw, adam, adamw, signum, signumw)."""
    grid: Literal["best", "sweep", "paper"] = "best"
    """Hyperparameters per optimizer: best = the paper's best-NC3 (lr, momentum, WD); sweep = best lr and momentum
    with WD in {best, best/10}; paper = the full 3 × 6 × 6 grid."""
    lrs: str = ""
    """Comma-separated learning rates replacing the grid's (empty = from the grid)."""
    momenta: str = ""
    """Comma-separated momenta / Adam β₁ replacing the grid's (empty = from the grid)."""
    weight_decays: str = ""
    """Comma-separated weight decays replacing the grid's (empty = from the grid)."""
    momentum_ablation: bool = True
    """Add SGD runs without momentum at the first SGD setting (claim: momentum speeds up NC)."""
    beta2: float = 0.999
    """Adam β₂."""
    epochs: int = 30
    """Training epochs per run."""
    batch_size: int = 128
    """Minibatch size."""
    lr_decay: bool = True
    """Multiply the learning rate by 0.1 at 1/3 and 2/3 of training (Papyan et al.)."""
    valid_accuracy: float = 0.99
    """Runs count as converged ("valid") when their final training accuracy reaches this."""
    nc0_squared: bool = False
    """NC0 as |Wᵀ1|²/p instead of |Wᵀ1|/p (the paper's Eq. 12 is ambiguous)."""
    nc_scale: Literal["paper", "none"] = "paper"
    """NC2/NC3 normalisation: paper = 1/K² and 1/(Kp) as in Appendix B; none = the rhubarbwu library's."""
    nc4_form: Literal["agreement", "mismatch"] = "agreement"
    """NC4 as agreement with the nearest-class-centre rule (→ 1) or mismatch (→ 0)."""
    eval_batch_size: int = 1024
    """Batch size of the per-epoch metric passes."""
    train: bool = True
    """Run the training grid (claims 2 and 3); off = only the UFM checks."""
    ufm: bool = True
    """Run the UFM simulations of Theorems 3.1–3.4 (claim 1)."""
    ufm_classes: int = 10
    """UFM: number of classes K."""
    ufm_dim: int = 32
    """UFM: feature dimension for the SGD runs with free features (the SignGD runs use p = K)."""
    ufm_per_class: int = 5
    """UFM: samples per class."""
    ufm_steps: int = 2000
    """UFM: full-batch steps per simulation."""
    ufm_sgd_lr: float = 0.1
    """UFM: SGD/SGDW step size η."""
    ufm_sgd_momentum: float = 0.9
    """UFM: SGD/SGDW momentum β."""
    ufm_sgd_wd: float = 0.05
    """UFM: SGD/SGDW weight decay λ (Thm 3.1 needs 0 < ηλ < 2, Thm 3.2 ηλ < 2(1+β))."""
    ufm_sign_lr: float = 0.01
    """UFM: SignGD step size η (the initial one under the decaying schedule)."""
    ufm_sign_wd: float = 0.5
    """UFM: SignGD weight decay λ."""
    ufm_lr_tau: float = 50.0
    """UFM: decaying schedule η_t = η/(1 + t/τ) for coupled SignGD (Thm 3.4)."""

    def __post_init__(self) -> None:
        check_choice("dataset", self.dataset, ("digits", "mnist-5k", "fashion-mnist", "cifar10"))
        check_choice("model", self.model, ("resnet9", "vgg9", "mlp"))
        check_choice("grid", self.grid, ("best", "sweep", "paper"))
        check_choice("nc_scale", self.nc_scale, ("paper", "none"))
        check_choice("nc4_form", self.nc4_form, ("agreement", "mismatch"))
        for name in ("n_train", "n_test"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 0:
                raise ConfigError(name, v, "an integer >= 0 (0 = all)")
        if self.n_train and self.n_train < 10:
            raise ConfigError("n_train", self.n_train, "0 or at least 10 (one image per class)")
        for name in ("width", "epochs", "batch_size", "eval_batch_size"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ConfigError(name, v, "an integer >= 1")
        names = self.optimizer_list
        if not names and self.train:
            raise ConfigError("optimizers", self.optimizers, "at least one of " + ", ".join(OPTIMIZERS))
        for name in names:
            if name not in OPTIMIZERS:
                raise ConfigError("optimizers", self.optimizers, "comma-separated names from " + ", ".join(OPTIMIZERS))
        if len(set(names)) != len(names):
            raise ConfigError("optimizers", self.optimizers, "each optimizer at most once")
        for field in ("lrs", "momenta", "weight_decays"):
            values = parse_float_list(field, getattr(self, field))
            if field == "lrs" and any(v <= 0 for v in values):
                raise ConfigError(field, getattr(self, field), "learning rates > 0")
            if field == "momenta" and any(v >= 1 for v in values):
                raise ConfigError(field, getattr(self, field), "momenta in [0, 1)")
        check_range("beta2", self.beta2, 0.0, 1.0, high_open=True)
        check_range("valid_accuracy", self.valid_accuracy, 0.0, 1.0)
        for name in ("ufm_classes", "ufm_dim", "ufm_per_class", "ufm_steps"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ConfigError(name, v, "an integer >= 1")
        if self.ufm_classes < 3:
            raise ConfigError("ufm_classes", self.ufm_classes, "at least 3 (Thm 3.3's limit (K-2)²/λ² is 0 for K = 2)")
        if self.ufm_dim < self.ufm_classes:
            raise ConfigError("ufm_dim", self.ufm_dim, f"at least ufm_classes = {self.ufm_classes}")
        for name in ("ufm_sgd_lr", "ufm_sgd_wd", "ufm_sign_lr", "ufm_sign_wd", "ufm_lr_tau"):
            check_positive(name, getattr(self, name))
        check_range("ufm_sgd_momentum", self.ufm_sgd_momentum, 0.0, 1.0, high_open=True)
        if self.ufm_sgd_lr * self.ufm_sgd_wd >= 2.0:
            raise ConfigError("ufm_sgd_wd", self.ufm_sgd_wd, "ufm_sgd_lr * ufm_sgd_wd < 2 (Theorem 3.1's condition)")
        if self.ufm_sign_lr * self.ufm_sign_wd >= 1.0:
            raise ConfigError("ufm_sign_wd", self.ufm_sign_wd, "ufm_sign_lr * ufm_sign_wd < 1")
        if not (self.train or self.ufm):
            raise ConfigError("train", self.train, "train or ufm to be on (both are off: nothing to run)")

    @property
    def optimizer_list(self) -> tuple[str, ...]:
        """The optimizers as a tuple of names."""
        return tuple(s.strip() for s in self.optimizers.split(",") if s.strip())


PRESETS: dict[str, NeuralCollapseConfig] = {
    # seconds: a small MLP on 300 digits, two optimizers, short UFM runs
    "smoke": NeuralCollapseConfig(
        n_train=300,
        n_test=100,
        model="mlp",
        width=4,
        optimizers="sgd,adamw",
        momentum_ablation=True,
        epochs=3,
        batch_size=32,
        ufm_steps=300,
        ufm_sgd_wd=0.5,
        ufm_sign_lr=0.05,
        ufm_lr_tau=5.0,
    ),
    # a few minutes on 2 CPU cores: VGG9-style (w = 8, p = 64) on the 1,438 digits, the six optimizers at the
    # paper's best-NC3 settings with WD in {best, best/10}, plus the momentum ablation (13 runs). Batch 32 and
    # 60 epochs give 2,700 steps per run, enough for SGD's weight decay to shrink NC0 by orders of magnitude.
    "quick": NeuralCollapseConfig(model="vgg9", grid="sweep", batch_size=32, epochs=60),
    # the paper's grid on MNIST-5k with a wider ResNet9 (a GPU is advised: 648 runs)
    "full": NeuralCollapseConfig(
        dataset="mnist-5k", width=16, grid="paper", epochs=200, momentum_ablation=False, ufm_steps=5000
    ),
}
