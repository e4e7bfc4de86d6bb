"""Optimizers of the study that torch lacks (SGDW, Signum/SignumW, the Adam↔AdamW interpolation) and a factory."""

from iclr26_theory_metrics.optim.adam_interp import InterpolatedAdamW
from iclr26_theory_metrics.optim.factory import OPTIMIZER_NAMES, make_optimizer
from iclr26_theory_metrics.optim.sgdw import SGDW
from iclr26_theory_metrics.optim.sign import Signum, SignumW

__all__ = ["OPTIMIZER_NAMES", "SGDW", "InterpolatedAdamW", "Signum", "SignumW", "make_optimizer"]
