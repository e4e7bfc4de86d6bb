"""The method contract (DESIGN.md §2): ``MethodSpec`` and ``Claim``.

A domain package describes each paper method once, as a :class:`MethodSpec`, lists it in its
``cli.METHODS`` and exposes that dict through the entry point group ``iclr26.methods``. The domain CLI,
the umbrella ``iclr26`` and the tests all drive methods through this one object.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from iclr26_shared.runs import RunDir

C = TypeVar("C")

#: Presets every method must define: seconds (tests), minutes on 2 CPU cores (reproduce), paper-like.
PRESET_NAMES: tuple[str, ...] = ("smoke", "quick", "full")
#: Names the CLI owns; a config may not use them as field names.
RESERVED_FIELDS: frozenset[str] = frozenset({"seed", "device", "out_dir", "resume", "quiet", "preset"})

_KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

__all__ = ["PRESET_NAMES", "RESERVED_FIELDS", "Claim", "MethodSpec", "no_claims"]


@dataclass(frozen=True)
class Claim:
    """One of a paper's central claims, checked against our measured ``results.json``.

    Attributes:
        claim: The claim in words, e.g. "Selective RoPE beats RoPE on S5 at length 512".
        metric: The metric compared, e.g. "accuracy@512".
        ours: Our measured value for the paper's method.
        baseline: Our measured value for the baseline the claim compares with (None if absolute).
        holds: Whether the claim holds in our measurement.
        paper: The paper's reported number(s), as text (e.g. "0.99 vs 0.41"), or "" when none.
    """

    claim: str
    metric: str
    ours: float
    baseline: float | None
    holds: bool
    paper: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON form (what results.json and REPORT.md use)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Claim:
        """Inverse of :meth:`to_dict`."""
        ours = data["ours"]
        return cls(
            claim=str(data["claim"]),
            metric=str(data["metric"]),
            ours=float(ours) if ours is not None else math.nan,
            baseline=None if data.get("baseline") is None else float(data["baseline"]),
            holds=bool(data["holds"]),
            paper=str(data.get("paper", "")),
        )


def no_claims(results: Mapping[str, Any]) -> list[Claim]:
    """For methods whose claims are still to be written: no claims."""
    return []


@dataclass(frozen=True)
class MethodSpec(Generic[C]):
    """A paper method as the CLI, ``iclr26 reproduce`` and tests see it.

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
        report: Optional ``report(results) -> markdown`` body added to report.md after the claims.
    """

    name: str
    domain: str
    paper: str
    config: type[C]
    presets: Mapping[str, C]
    run: Callable[[C, RunDir], dict[str, Any]]
    claims: Callable[[Mapping[str, Any]], list[Claim]] = no_claims
    summary: str = ""
    report: Callable[[Mapping[str, Any]], str] | None = field(default=None)

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

    def preset(self, name: str) -> C:
        """The preset config called ``name``; raises :class:`UsageError` listing the choices."""
        from iclr26_shared.errors import UsageError

        try:
            return self.presets[name]
        except KeyError:
            raise UsageError(f"{self.name}: unknown preset {name!r} (choose from {', '.join(self.presets)})") from None

    def check_claims(self, results: Mapping[str, Any]) -> list[Claim]:
        """Evaluate :attr:`claims` on ``results``; a missing metric raises a clear KeyError message."""
        claims = self.claims(results)
        for c in claims:
            if not isinstance(c, Claim):
                raise TypeError(f"{self.name}: claims() must return Claim objects, got {type(c).__name__}")
        return claims
