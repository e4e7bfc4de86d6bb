"""The method contract (docs/architecture.md §2): ``MethodSpec``, ``Claim`` and ``Resources``.

A domain package describes each paper method once, in ``methods/<method>/spec.py``::

    SPEC = MethodSpec.from_module(
        "iclr26_graphs.methods.fgl",
        name="fgl",
        paper="Forest-Based Graph Learning ... (ICLR 2026, OpenReview 5asbtzIVpS)",
        summary="one line for --help and `iclr26 list`",
    )

``from_module`` imports ``<module>.config`` (which must stay light: no torch) for ``PRESETS`` and loads
``<module>.train.run``, ``<module>.claims.claims`` and ``<module>.claims.report`` only when they are
called, so ``iclr26 list`` and every ``--help`` import no torch. The domain lists its specs in
``cli.METHODS``, which the entry point group ``iclr26.methods`` exposes.

A :class:`Claim` is one of a paper's central claims measured on one run: ours against a measured
baseline or a fixed threshold, with the direction that counts as better and a margin. Single runs get a
single-seed verdict; :mod:`iclr26_shared.verdicts` combines seeds into ``holds``/``fails``/``inconclusive``
with a 95% interval.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

if TYPE_CHECKING:
    from iclr26_shared.runs import RunDir

C = TypeVar("C")

#: Presets every method must define: seconds (tests), minutes on 2 CPU cores (reproduce), paper-like.
PRESET_NAMES: tuple[str, ...] = ("smoke", "quick", "full")
#: Names the CLI owns; a config may not use them as field names.
RESERVED_FIELDS: frozenset[str] = frozenset(
    {"seed", "device", "out_dir", "resume", "quiet", "preset", "seeds", "dry_run"}
)

Better = Literal["higher", "lower"]
Verdict = Literal["holds", "fails", "inconclusive"]
VERDICTS: tuple[Verdict, ...] = ("holds", "fails", "inconclusive")

#: Relative tolerance of "at chance" (float rounding of a mean of values equal to chance).
_CHANCE_TOL = 1e-9

_KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

__all__ = [
    "PRESET_NAMES",
    "RESERVED_FIELDS",
    "VERDICTS",
    "Better",
    "Claim",
    "LazyFunction",
    "MethodSpec",
    "Resources",
    "Verdict",
    "no_claims",
    "no_report",
]


def _finite(x: float | None) -> bool:
    return x is not None and isinstance(x, int | float) and math.isfinite(x)


@dataclass(frozen=True)
class Claim:
    """One of a paper's central claims, measured on one run's ``results.json``.

    A claim compares ``ours`` with a *reference*: a measured ``baseline`` (relative claim, e.g. "Selective
    RoPE beats RoPE") or a fixed ``threshold`` (absolute claim, e.g. "the closed form matches gradient
    descent to 1e-4"); exactly one of the two is given. ``better`` says which way wins. The claim's
    *gain* is ``ours − reference`` for ``better="higher"`` and ``reference − ours`` for ``"lower"``; a
    single run's claim holds when ``gain > margin``, strictly: a tie never holds. A "beats" claim gives a
    positive margin sized from its noise; a non-inferiority claim (negative margin) says so in its text.

    ``chance`` guards against vacuous wins: the level of the *trivial answer* (the majority class, the
    mean predictor, every target "in training", ...), tolerance included. Each side is judged against it
    (:meth:`chance_verdict`): ours below it fails, ours at it cannot hold, and a baseline at or below it
    makes a relative claim inconclusive.

    Attributes:
        claim: The claim in words, e.g. "Selective RoPE beats RoPE on S5 at length 512".
        metric: The metric compared, e.g. "accuracy@512".
        ours: Our measured value for the paper's method (NaN when it could not be measured).
        baseline: The measured value of the baseline the claim compares with (relative claims).
        threshold: The fixed bound ours must beat (absolute claims).
        better: ``"higher"`` or ``"lower"``: which direction of ``ours`` supports the claim.
        margin: How much ``ours`` must beat the reference by (metric units; the gain must exceed it).
        chance: The trivial answer's level of the metric (see above), or None.
        paper: The paper's reported number(s), as text (e.g. "0.99 vs 0.41"), or "".
        timing: A wall-time claim: judged only on a run that had the machine to itself.
        loaded: Set by the runner on a timing claim whose run shared the CPUs with other processes
            (:func:`iclr26_shared.bench.cpu_share`); such a claim's verdict is ``inconclusive``.
    """

    claim: str
    metric: str
    ours: float
    _: dataclasses.KW_ONLY
    baseline: float | None = None
    threshold: float | None = None
    better: Better = "higher"
    margin: float = 0.0
    chance: float | None = None
    paper: str = ""
    timing: bool = False
    loaded: bool = False

    def __post_init__(self) -> None:
        if (self.baseline is None) == (self.threshold is None):
            raise ValueError(f"Claim {self.claim!r}: give exactly one of baseline= (measured) or threshold= (fixed)")
        if self.better not in ("higher", "lower"):
            raise ValueError(f"Claim {self.claim!r}: better must be 'higher' or 'lower', got {self.better!r}")
        if not _finite(self.margin):
            raise ValueError(f"Claim {self.claim!r}: margin must be a finite number, got {self.margin!r}")

    @property
    def sign(self) -> float:
        """+1 when higher is better, −1 when lower is better."""
        return 1.0 if self.better == "higher" else -1.0

    @property
    def reference(self) -> float:
        """The baseline (relative claims) or the threshold (absolute claims); NaN when neither is set."""
        ref = self.baseline if self.baseline is not None else self.threshold
        return math.nan if ref is None else float(ref)

    @property
    def gain(self) -> float:
        """``sign · (ours − reference)``: positive when ours is on the better side (NaN if unmeasured)."""
        return self.sign * (float(self.ours) - self.reference)

    def at_chance(self, value: float | None, chance: float | None = None) -> bool:
        """Whether ``value`` is no better than ``chance`` (default :attr:`chance`; False when none is set),
        up to float rounding (a relative 1e-9), so a mean of values equal to chance still counts."""
        chance = self.chance if chance is None else chance
        if chance is None or value is None or not math.isfinite(value):
            return False
        return self.sign * (value - chance) <= _CHANCE_TOL * max(1.0, abs(chance))

    def below_chance(self, value: float | None, chance: float | None = None) -> bool:
        """Whether ``value`` is strictly *worse* than ``chance`` (beyond float rounding): that side failed
        even at the trivial answer's level."""
        chance = self.chance if chance is None else chance
        if chance is None or value is None or not math.isfinite(value):
            return False
        return self.sign * (value - chance) < -_CHANCE_TOL * max(1.0, abs(chance))

    def chance_verdict(self, ours: float, reference: float, chance: float | None = None) -> tuple[Verdict, str] | None:
        """The verdict the chance guard imposes on (mean) values, with its reason; None when it imposes none.

        Each side is judged against the trivial answer's level: ours *worse* than it fails the claim;
        ours *at* it fails too when the baseline beats it (and a threshold claim fails); a baseline no
        better than chance makes a relative claim inconclusive (a baseline must work before a win over it
        counts), and so do both sides at chance.
        """
        chance = self.chance if chance is None else chance
        if chance is None or not math.isfinite(chance):
            return None
        if self.below_chance(ours, chance):
            return "fails", "ours is worse than the trivial answer (chance)"
        ours_at = self.at_chance(ours, chance)
        if self.baseline is not None and self.at_chance(reference, chance):
            return "inconclusive", "both sides at chance" if ours_at else "the baseline is no better than chance"
        if ours_at:
            return "fails", "ours is no better than the trivial answer (chance)"
        return None

    @property
    def verdict(self) -> Verdict:
        """Single-run verdict: ``holds`` when gain > margin (strictly: a tie does not hold), ``fails``
        otherwise; ``inconclusive`` when a side is not measured (NaN), for a timing claim measured while
        other processes shared the CPUs (``loaded``), or when the baseline is no better than chance. Ours
        at or below chance fails (:meth:`chance_verdict`)."""
        if self.timing and self.loaded:
            return "inconclusive"
        if not (_finite(self.ours) and _finite(self.reference)):
            return "inconclusive"
        guard = self.chance_verdict(float(self.ours), self.reference)
        if guard is not None:
            return guard[0]
        return "holds" if self.gain > self.margin else "fails"

    @property
    def holds(self) -> bool:
        """``verdict == "holds"``."""
        return self.verdict == "holds"

    def to_dict(self) -> dict[str, Any]:
        """JSON form (results.json and REPORT.md); carries the derived ``verdict``."""
        return {**dataclasses.asdict(self), "verdict": self.verdict}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Claim:
        """Inverse of :meth:`to_dict` (derived keys are ignored; null numbers read back as NaN)."""

        def num(key: str) -> float | None:
            value = data.get(key)
            return None if value is None and key != "ours" else float("nan" if value is None else value)

        baseline, threshold = num("baseline"), num("threshold")
        if baseline is None and threshold is None:  # a NaN baseline is written as null
            baseline = math.nan
        return cls(
            claim=str(data["claim"]),
            metric=str(data["metric"]),
            ours=cast(float, num("ours")),
            baseline=baseline,
            threshold=threshold,
            better=data.get("better", "higher"),
            margin=float(data.get("margin", 0.0)),
            chance=num("chance"),
            paper=str(data.get("paper", "")),
            timing=bool(data.get("timing", False)),
            loaded=bool(data.get("loaded", False)),
        )


def no_claims(results: Mapping[str, Any]) -> list[Claim]:
    """For methods whose claims are still to be written: no claims."""
    return []


def no_report(results: Mapping[str, Any]) -> str:
    """For methods without a report body of their own."""
    return ""


@dataclass(frozen=True)
class Resources:
    """What one run of a method needs, for the schedulers of ``iclr26 reproduce`` (process pool, Ray).

    Attributes:
        cpus: CPU cores one run uses (Ray's ``num_cpus``).
        gpus: GPUs one run needs (Ray's ``num_gpus``); > 0 means the run is scheduled only where a GPU is.
        exclusive: The run measures wall time (timing claims): it runs with no other work on its machine.
    """

    cpus: float = 1.0
    gpus: float = 0.0
    exclusive: bool = False

    def __post_init__(self) -> None:
        if not (_finite(self.cpus) and self.cpus > 0):
            raise ValueError(f"Resources.cpus must be > 0, got {self.cpus!r}")
        if not (_finite(self.gpus) and self.gpus >= 0):
            raise ValueError(f"Resources.gpus must be >= 0, got {self.gpus!r}")


@dataclass(frozen=True)
class LazyFunction:
    """``module:attr``, imported on first call (picklable: it travels to worker processes by name)."""

    module: str
    attr: str

    def load(self) -> Callable[..., Any]:
        """Import the module and return the function (a clear error when it is missing)."""
        fn = getattr(importlib.import_module(self.module), self.attr, None)
        if not callable(fn):
            raise AttributeError(f"{self.module} has no function {self.attr!r}")
        return fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.load()(*args, **kwargs)


def _domain_of(module: str) -> str:
    top = module.split(".", 1)[0]
    if not top.startswith("iclr26_"):
        raise ValueError(f"MethodSpec.from_module: {module!r} is not inside an iclr26_<domain> package")
    return top.removeprefix("iclr26_").replace("_", "-")


@dataclass(frozen=True)
class MethodSpec(Generic[C]):
    """A paper method as the CLI, ``iclr26 reproduce`` and tests see it (build it with :meth:`from_module`).

    Attributes:
        name: Kebab-case, unique across the workspace (the CLI subcommand), e.g. ``"selective-rope"``.
        domain: The domain package's directory name, e.g. ``"sequence-models"``.
        paper: Paper title and arXiv/OpenReview id.
        config: The method's frozen config dataclass type.
        presets: At least ``smoke``, ``quick`` and ``full``, each an instance of ``config``.
        run: ``run(cfg, run_dir) -> results``: trains/evaluates, logs metrics into the run directory,
            saves figures, and returns the results dict (JSON values); the runner writes results.json.
        claims: ``claims(results) -> [Claim]``: the paper's central claims checked on the results.
        summary: One line for ``--help`` and ``iclr26 list``.
        report: ``report(results) -> markdown`` body added to report.md after the claims.
        resources: What one run needs (CPUs, GPUs, whether it must run alone).
        gpu_presets: Presets that need a GPU (scheduled only where one exists).
        dry_run: ``dry_run(cfg, device) -> {"parameters": int, "train_loss": float, ...}``: build the
            preset at its real sizes and take one train and one eval step at batch 2 (``--dry-run``,
            :mod:`iclr26_shared.dryrun`); None when the method has none.
        check_inputs: ``check_inputs(cfg)`` raises a one-line :class:`~iclr26_shared.errors.DataError`
            (or ``ConfigError``) when an input the config names is absent (an opt-in data set, a file);
            it imports no torch and reads no data, so the CLI runs it before the method starts
            (``module.config.check_inputs`` when that module defines one; e.g.
            :func:`iclr26_shared.data.check_dataset`).
    """

    name: str
    domain: str
    paper: str
    config: type[C]
    presets: Mapping[str, C]
    run: Callable[[C, RunDir], dict[str, Any]]
    claims: Callable[[Mapping[str, Any]], list[Claim]] = no_claims
    summary: str = ""
    report: Callable[[Mapping[str, Any]], str] = field(default=no_report)
    resources: Resources = field(default_factory=Resources)
    gpu_presets: tuple[str, ...] = ()
    dry_run: Callable[[C, Any], Mapping[str, Any]] | None = None
    check_inputs: Callable[[C], Any] | None = None

    def __post_init__(self) -> None:
        if not _KEBAB.match(self.name):
            raise ValueError(f"MethodSpec.name {self.name!r} must be kebab-case (e.g. 'selective-rope')")
        if not (isinstance(self.config, type) and dataclasses.is_dataclass(self.config)):
            raise TypeError(f"MethodSpec {self.name}: config must be a dataclass type, got {self.config!r}")
        params = getattr(self.config, "__dataclass_params__", None)
        if params is None or not params.frozen:
            raise TypeError(f"MethodSpec {self.name}: config {self.config.__name__} must be a frozen dataclass")
        clash = RESERVED_FIELDS & {f.name for f in dataclasses.fields(self.config)}
        if clash:
            raise TypeError(f"MethodSpec {self.name}: config fields {sorted(clash)} clash with the CLI's common flags")
        missing = [p for p in PRESET_NAMES if p not in self.presets]
        if missing:
            raise ValueError(f"MethodSpec {self.name}: presets {missing} are missing (need {list(PRESET_NAMES)})")
        for pname, preset in self.presets.items():
            if not isinstance(preset, self.config):
                raise TypeError(f"MethodSpec {self.name}: preset {pname!r} is not a {self.config.__name__}")
        unknown = [p for p in self.gpu_presets if p not in self.presets]
        if unknown:
            raise ValueError(f"MethodSpec {self.name}: gpu_presets {unknown} are not presets")

    @classmethod
    def from_module(
        cls,
        module: str,
        *,
        name: str,
        paper: str,
        summary: str,
        resources: Resources | None = None,
        gpu_presets: tuple[str, ...] = (),
    ) -> MethodSpec[Any]:
        """The spec of the method package ``module`` (e.g. ``"iclr26_graphs.methods.fgl"``).

        Imports ``module.config`` now (``PRESETS``: preset name → config instance; the config class is
        the presets' type) and ``module.train.run``, ``module.claims.claims`` and
        ``module.claims.report`` on first call (and ``module.train.dry_run`` for ``--dry-run``);
        ``module.config.check_inputs`` when defined. The domain is read off the package name.
        """
        domain = _domain_of(module)
        config_module = importlib.import_module(f"{module}.config")
        presets = getattr(config_module, "PRESETS", None)
        if not isinstance(presets, Mapping) or "smoke" not in presets:
            raise TypeError(f"{module}.config must define PRESETS, a dict of preset name -> config")
        return cls(
            name=name,
            domain=domain,
            paper=paper,
            config=type(presets["smoke"]),
            presets=presets,
            run=LazyFunction(f"{module}.train", "run"),
            claims=LazyFunction(f"{module}.claims", "claims"),
            summary=summary,
            report=LazyFunction(f"{module}.claims", "report"),
            resources=resources or Resources(),
            gpu_presets=gpu_presets,
            dry_run=LazyFunction(f"{module}.train", "dry_run"),
            check_inputs=getattr(config_module, "check_inputs", None),
        )

    def preset(self, name: str) -> C:
        """The preset config called ``name``; raises :class:`UsageError` listing the choices."""
        from iclr26_shared.errors import UsageError

        try:
            return self.presets[name]
        except KeyError:
            raise UsageError(f"{self.name}: unknown preset {name!r} (choose from {', '.join(self.presets)})") from None

    def needs_gpu(self, preset: str) -> bool:
        """Whether a run of ``preset`` must be scheduled on a GPU."""
        return self.resources.gpus > 0 or preset in self.gpu_presets

    def check_claims(self, results: Mapping[str, Any]) -> list[Claim]:
        """Evaluate :attr:`claims` on ``results``; a missing metric raises a clear KeyError message."""
        claims = self.claims(results)
        for c in claims:
            if not isinstance(c, Claim):
                raise TypeError(f"{self.name}: claims() must return Claim objects, got {type(c).__name__}")
        return claims
