"""FedOpenMatch config: one frozen dataclass, its presets, and the variants (baselines + ablations).

Kept free of heavy imports (``iclr26 list`` imports every domain's CLI, which imports this module).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, get_args

import annotated_types as at

from iclr26_shared.config import (
    AllowLargeInt,
    NonNegFloat,
    NonNegInt,
    PosFloat,
    PosInt,
    UnitFloat,
    config_from_dict,
    config_to_dict,
    validate,
)
from iclr26_shared.errors import ConfigError

__all__ = [
    "ABLATIONS",
    "BASELINES",
    "PRESETS",
    "VARIANTS",
    "FedOpenMatchConfig",
    "JobParams",
    "job_params",
]

#: A variant's name: FedOpenMatch, its leave-one-out ablations and the baselines.
Variant = Literal[
    "fedopenmatch",
    "no-gs",
    "no-la",
    "no-lcr",
    "fedavg-openmatch",
    "fedavg-fixmatch",
    "labeled-only",
]
#: Every variant the app runs, in report order.
VARIANTS: tuple[Variant, ...] = get_args(Variant)
#: Ablations: FedOpenMatch with one component switched off (GS off; ω = 0; LCR replaced by SOCR).
ABLATIONS: dict[str, str] = {"gs": "no-gs", "la": "no-la", "lcr": "no-lcr"}
#: Baselines of the claims.
BASELINES: tuple[str, ...] = ("fedavg-openmatch", "fedavg-fixmatch", "labeled-only")

#: The image sets (``data/images.py``).
Dataset = Literal["mnist-5k", "digits", "fashion-mnist", "cifar10", "cifar100"]


@dataclass(frozen=True)
class FedOpenMatchConfig:
    """FedOpenMatch (label-at-server open-set semi-supervised FL) and its baselines, on Flower."""

    # ----- data and split -----
    dataset: Dataset = "mnist-5k"
    """Image set: mnist-5k or digits (offline, ship in PyPI wheels); fashion-mnist, cifar10, cifar100 (opt-in)."""
    data_file: str = ""
    """Your own data instead of ``dataset``: a .npz written by ``fedopenmatch.save_data`` (server's labelled
    set, test set, clients' unlabelled images, split into num_clients partitions by Flower Datasets). Read by
    the server and by every ClientApp (a SuperNode's own ``--node-config data-file=...`` replaces it there);
    known_classes and num_clients must match the file. "" = the built-in ``dataset``."""
    known_classes: Annotated[int, at.Ge(2)] = 6
    """K: classes 0..K-1 are known (labelled at the server); at least 2 (the OVA loss needs a negative class)."""
    unknown_classes: PosInt = 4
    """U: classes K..K+U-1 are unknown (appear only in the clients' unlabelled data and the test set)."""
    labels_per_class: PosInt = 25
    """Labelled server images per known class (the paper's '@25')."""
    num_clients: Annotated[int, at.Ge(2)] = 4
    """M: number of clients (virtual SuperNodes), at least 2."""
    dirichlet_alpha: PosFloat = 0.3
    """Dirichlet concentration of the non-IID client split (paper: 0.3 and 0.1)."""
    min_partition_size: PosInt = 10
    """Minimum unlabelled samples per client (Flower Datasets' DirichletPartitioner)."""
    max_client_pool: NonNegInt = 0
    """If > 0, use a class-stratified subset of this many unlabelled images (smaller runs); 0 = all."""
    hflip: bool = False
    """Random horizontal flips in the weak/strong views (off for digits; on for CIFAR)."""

    # ----- model -----
    arch: Literal["cnn", "resnet18"] = "cnn"
    """Extractor: a small 3-block CNN (CPU) or the paper's ResNet-18 (GroupNorm)."""
    width: PosInt = 16
    """Base channel width of the extractor (ResNet-18: 64 is the standard)."""

    # ----- federated schedule -----
    num_rounds: PosInt = 10
    """Communication rounds."""
    fraction_train: Annotated[float, at.Interval(gt=0, le=1)] = 1.0
    """Fraction of clients sampled per round (at least 2 are sampled)."""
    max_failed_fraction: Annotated[float, at.Interval(ge=0, lt=1)] = 0.5
    """Failure tolerance of a round: when more than this fraction of the sampled clients fail (raise or do
    not answer) the run stops with an error naming the round; otherwise FedAvg averages the clients that
    answered (Flower's strategies likewise aggregate the successful replies only)."""
    local_epochs: PosInt = 1
    """Local epochs over a client's unlabelled data per round."""
    warmup_steps: NonNegInt = 100
    """Supervised server steps on the labelled set before round 1."""
    server_steps: NonNegInt = 100
    """Server training steps on the labelled set after each aggregation, i.e. before the next round's
    broadcast (the paper's per-round step 1). Too few (20) leave the averaged model unconfident: no client
    image then passes τ_in = 0.95 from round 2 on (README, "Round-2 collapse")."""
    batch_size: PosInt = 64
    """Batch size (labelled and unlabelled)."""
    lr: PosFloat = 0.03
    """SGD learning rate η (FixMatch/OpenMatch default), decayed over rounds as η·cos(7πr/16R)."""
    momentum: Annotated[float, at.Interval(ge=0, lt=1)] = 0.9
    """SGD (Nesterov) momentum."""
    weight_decay: NonNegFloat = 5e-4
    """SGD weight decay."""

    # ----- FedOpenMatch -----
    gradient_stop: bool = True
    """GS: the OVA head reads stopgrad(g(x)), so OVA losses never update the extractor."""
    la_weight: NonNegFloat = 1.0
    """ω of the logit adjustment q + sign·ω·log π of the OVA logits in the training losses (0 = off)."""
    la_on_server: bool = False
    """Also apply LA in the server's hard-negative OVA loss (the paper's server loss L_s has none)."""
    la_sign: Literal[1, -1] = 1
    """Sign of the logit adjustment: +1 = the paper's Eq. 6 / Menon's training-time loss (default); -1 = reversed."""
    consistency: Literal["lcr", "socr", "none"] = "lcr"
    """Consistency regulariser: LCR (MSE of raw logits, FedOpenMatch), SOCR (OpenMatch, on probabilities), none."""
    lcr_weight: NonNegFloat = 0.1
    """λ of LCR (not public; 0.1 here: LCR's raw-logit MSE is on a larger scale than SOCR's probabilities)."""
    socr_weight: NonNegFloat = 0.5
    """λ of SOCR (OpenMatch: 0.5 on CIFAR-10, 1.0 on CIFAR-100)."""
    oem_weight: NonNegFloat = 0.1
    """λ of OpenMatch's OVA entropy minimisation (FedAvg+OpenMatch clients)."""
    openmatch_fix_start: NonNegInt = 1
    """FedAvg+OpenMatch: FixMatch's loss starts after this many rounds (OpenMatch's start_fix, 10 epochs);
    before that its clients train with OEM and SOCR only."""
    tau_in: UnitFloat = 0.95
    """Confidence threshold τ_in of the FixMatch pseudo-labels (max softmax of p)."""
    tau_pos: UnitFloat = 0.9
    """OVA pseudo-label: entry (i, k) is a positive when σ(q_i^k)_1 ≥ tau_pos."""
    tau_neg: UnitFloat = 0.1
    """OVA pseudo-label: entry (i, k) is a negative when σ(q_i^k)_1 ≤ tau_neg."""
    msp_threshold: UnitFloat = 0.5
    """FedAvg+FixMatch has no OVA head: it predicts 'unknown' when max softmax(p) < this."""

    # ----- experiment -----
    variants: Annotated[tuple[Variant, ...], at.MinLen(1)] = VARIANTS
    """Variants to run: fedopenmatch, no-gs, no-la, no-lcr, fedavg-openmatch, fedavg-fixmatch, labeled-only."""
    num_seeds: PosInt = 3
    """Seeds per variant (seed, seed+1, ...): each seed draws its own split, model init and augmentations."""
    engine: Literal["ray", "inline"] = "ray"
    """ray: Flower's simulation engine (Ray backend); inline: the same app through an in-process Grid."""
    client_cpus: PosInt = 1
    """CPUs per virtual client (Ray client_resources.num_cpus; an integer in flwr 1.42's federation config)."""
    client_gpus: NonNegFloat = 0.0
    """GPUs per virtual client (Ray client_resources.num_gpus); > 0 lets clients use CUDA."""
    ray_cpus: NonNegInt = 0
    """CPUs Ray may use (init_args.num_cpus); 0 = all of this machine's."""
    fail_client: Annotated[int, at.Ge(-1)] = -1
    """Test hook: the client with this partition id raises in round fail_round (-1: never)."""
    fail_round: PosInt = 1
    """Test hook: the round in which fail_client raises."""

    def __post_init__(self) -> None:
        validate(self)
        if self.tau_neg >= self.tau_pos:
            raise ConfigError("tau_neg", self.tau_neg, f"below tau_pos = {self.tau_pos}")
        if len(set(self.variants)) != len(self.variants):
            raise ConfigError("variants", self.variants, "no repeated names")
        if self.fail_client >= self.num_clients:
            expected = f"-1 or a partition id below num_clients = {self.num_clients}"
            raise ConfigError("fail_client", self.fail_client, expected)


@dataclass(frozen=True)
class JobParams(FedOpenMatchConfig):
    """One (variant, seed) job: every :class:`FedOpenMatchConfig` field, with the variant's switches already
    applied (``gradient_stop``, ``la_weight``, ``consistency``), plus the job's own fields below. Sent to the
    clients as a Flower ConfigRecord (:meth:`to_record`); nothing is listed twice: a new config field
    travels to the clients without touching this class."""

    variant: Variant = "fedopenmatch"
    """The variant this job runs."""
    seed: Annotated[int, at.Ge(0), at.Lt(2**63), AllowLargeInt] = 0
    """The job's seed: split, model init, augmentations (the run's --seed, up to 2**32 - 1, plus the seed
    index: above the default int bound)."""
    device: str = "cpu"
    """Device of the ClientApps (the server's is the run's)."""
    cons_weight: NonNegFloat = 0.1
    """λ of the job's consistency loss (``lcr_weight`` or ``socr_weight``; 0 without one)."""
    cons_views: Literal["weak-strong", "weak-weak"] = "weak-strong"
    """"weak-strong" (FedOpenMatch's LCR and its no-lcr ablation) or "weak-weak" (OpenMatch's SOCR and OEM on
    two weak views)."""
    fix_start: NonNegInt = 0
    """FixMatch's L_in is applied from round ``fix_start + 1`` on (OpenMatch's start_fix; 0 = from round 1)."""
    client_ova: Literal["pseudo", "oem", "none"] = "pseudo"
    """"pseudo" (FedOpenMatch's thresholded OVA pseudo-labels), "oem" (OpenMatch's entropy), "none"."""
    use_ova: bool = True
    """False for FixMatch: no OVA training; inference by max-softmax rejection."""
    inlier_filter: bool = True
    """Keep a FixMatch pseudo-label only when the OVA test says inlier for ŷ."""
    federated: bool = True
    """False for labeled-only (no client training)."""
    model_file: str = ""
    """A user's initial network (an ``OpenSetNet`` saved whole with ``torch.save``, as :func:`~.api.fit`
    writes it; its classes must be importable where the ClientApps run); "" = the built-in ``arch``."""

    def to_record(self) -> dict[str, Any]:
        """Flat dict of str/int/float/bool and lists of str (a Flower ConfigRecord's content)."""
        return config_to_dict(self)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> JobParams:
        """Inverse of :meth:`to_record`, through the shared typed parser (a bad value is a ConfigError
        naming the field); extra keys such as Flower's ``server-round`` are ignored, a missing one is an
        error."""
        names = [f.name for f in dataclasses.fields(cls)]
        missing = [n for n in names if n not in record]
        if missing:
            raise ConfigError("train config", sorted(record), f"the keys {missing}")
        return config_from_dict(cls, {n: record[n] for n in names})


def job_params(
    cfg: FedOpenMatchConfig, variant: str, seed: int, device: str = "cpu", *, model_file: str = ""
) -> JobParams:
    """Resolve a variant into the flags it runs with (every other field is ``cfg``'s).

    * fedopenmatch: GS, LA (ω = ``la_weight``), ``consistency`` (LCR), OVA pseudo-labels, inlier filter;
    * no-gs / no-la / no-lcr: FedOpenMatch with GS off / ω = 0 / SOCR instead of LCR;
    * fedavg-openmatch: OpenMatch on the clients (no GS, no LA, SOCR and OEM on two weak views, OVA inlier
      selection, FixMatch's loss only after ``openmatch_fix_start`` rounds);
    * fedavg-fixmatch: FixMatch on the clients (confidence only, no OVA head; MSP rejection);
    * labeled-only: server training on the labelled set only (no client updates).
    """
    if variant not in VARIANTS:
        raise ConfigError("variants", variant, "one of " + ", ".join(VARIANTS))
    flags: dict[str, Any] = {}
    if variant == "no-gs":
        flags = {"gradient_stop": False}
    elif variant == "no-la":
        flags = {"la_weight": 0.0}
    elif variant == "no-lcr":
        flags = {"consistency": "socr"}
    elif variant == "fedavg-openmatch":
        flags = {"gradient_stop": False, "la_weight": 0.0, "consistency": "socr", "client_ova": "oem"}
        flags |= {"cons_views": "weak-weak", "fix_start": cfg.openmatch_fix_start}
    elif variant == "fedavg-fixmatch":
        flags = {"gradient_stop": False, "la_weight": 0.0, "consistency": "none", "client_ova": "none"}
        flags |= {"use_ova": False, "inlier_filter": False}
    elif variant == "labeled-only":
        flags = {"federated": False}
    cons = flags.get("consistency", cfg.consistency)
    cons_weight = {"lcr": cfg.lcr_weight, "socr": cfg.socr_weight, "none": 0.0}[cons]
    base = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(FedOpenMatchConfig)}
    job = {"variant": variant, "seed": seed, "device": device, "cons_weight": cons_weight, "model_file": model_file}
    return JobParams(**base | flags | job)


PRESETS: dict[str, FedOpenMatchConfig] = {
    # seconds: 2 clients, 2 rounds on a 400-image pool, two variants, in-process Grid
    "smoke": FedOpenMatchConfig(
        num_clients=2,
        num_rounds=2,
        max_client_pool=400,
        width=8,
        batch_size=32,
        warmup_steps=10,
        server_steps=5,
        variants=("fedopenmatch", "labeled-only"),
        num_seeds=1,
        engine="inline",
    ),
    # minutes on 2 CPU cores: every variant, one seed per run (replicate with --seeds N), Flower's
    # Simulation Runtime through `flwr run` (one SuperLink and one Ray start per run)
    "quick": FedOpenMatchConfig(
        max_client_pool=1200,
        num_seeds=1,
        num_rounds=6,
        warmup_steps=200,
    ),
    # closest to the paper this machine class runs: ResNet-18, 10 clients, more rounds (GPU advised)
    "full": FedOpenMatchConfig(
        arch="resnet18",
        width=64,
        num_clients=10,
        num_rounds=100,
        local_epochs=2,
        warmup_steps=500,
        client_gpus=0.2,
    ),
}
