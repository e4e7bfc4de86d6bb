"""Test helpers that are library code (pytest's importlib-mode advice; PyG's ``torch_geometric.testing``).

* :func:`assert_close` with explicit per-dtype tolerances,
* :func:`run_cli` to call a ``main(argv) -> int`` in-process and capture its output,
* :func:`smoke_run` / :func:`assert_valid_run_dir` for the per-method CLI smoke test,
* :func:`run_single_and_torchrun` for the "two torchrun processes follow one process" trainer tests,
* :func:`assert_models_roundtrip`: every model a run saved loads back and gives the in-memory model's
  outputs bit for bit,
* :func:`assert_resume_matches` (from :mod:`iclr26_shared.kill_resume`): a run SIGKILLed right after its
  first checkpoint and resumed equals an uninterrupted run (results.json, metrics.jsonl, saved weights;
  timing and host fields excluded),
* :class:`Arms`, :func:`degenerate_cases` and :func:`assert_no_claim_holds`: feed a method's ``claims()``
  degenerate results (every arm equal, every arm at the trivial answer, ours worse than it) and check that
  no claim they touch holds,
* :data:`TOY_SPEC`, a real (tiny) method used to test the machinery: minibatch SGD on ridge regression,
  checked against the closed-form solution, with checkpoints every few steps so resume can be tested.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from huggingface_hub import PyTorchModelHubMixin

from iclr26_shared.config import NonNegFloat, PosFloat, PosInt, validate
from iclr26_shared.data import ImageDataset
from iclr26_shared.errors import ConfigError
from iclr26_shared.kill_resume import ResumeCheck, assert_resume_matches, compare_runs
from iclr26_shared.plotting import plot_curves
from iclr26_shared.runner import CommonFlags, execute
from iclr26_shared.runs import RunDir
from iclr26_shared.seeding import get_rng_state, make_generator, set_rng_state
from iclr26_shared.spec import Claim, MethodSpec

__all__ = [
    "Arms",
    "TOLERANCES",
    "TOY_SPEC",
    "CliResult",
    "ToyConfig",
    "TOY_DDP_SPEC",
    "ToyDDPConfig",
    "ResumeCheck",
    "assert_close",
    "assert_models_roundtrip",
    "assert_no_claim_holds",
    "assert_resume_matches",
    "compare_runs",
    "assert_valid_run_dir",
    "check_domain_cli",
    "degenerate_cases",
    "fake_image_dataset",
    "run_cli",
    "run_single_and_torchrun",
    "smoke_run",
]

#: (rtol, atol) per dtype for fast-vs-naive comparisons.
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float64: (1e-7, 1e-9),
    torch.float32: (1e-4, 1e-5),
    torch.float16: (1e-2, 1e-3),
    torch.bfloat16: (2e-2, 1e-2),
    torch.complex128: (1e-7, 1e-9),
    torch.complex64: (1e-4, 1e-5),
}


def assert_close(
    actual: torch.Tensor,
    expected: torch.Tensor,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    msg: str = "",
) -> None:
    """``torch.testing.assert_close`` with our tolerance table (the lower-precision dtype decides)."""
    actual = torch.as_tensor(actual)
    expected = torch.as_tensor(expected)
    if actual.shape != expected.shape:
        raise AssertionError(f"{msg + ': ' if msg else ''}shape {tuple(actual.shape)} != {tuple(expected.shape)}")
    dtype = actual.dtype if actual.element_size() <= expected.element_size() else expected.dtype
    d_rtol, d_atol = TOLERANCES.get(dtype, (0.0, 0.0))
    torch.testing.assert_close(
        actual,
        expected.to(actual.dtype),
        rtol=d_rtol if rtol is None else rtol,
        atol=d_atol if atol is None else atol,
        msg=(lambda m: f"{msg}: {m}") if msg else None,
    )


@dataclass(frozen=True)
class CliResult:
    """Exit code and captured output of an in-process CLI call."""

    code: int
    out: str
    err: str


def run_cli(main: Callable[[list[str]], int], argv: Sequence[str]) -> CliResult:
    """Call ``main(argv)`` in-process, capturing stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return CliResult(code, out.getvalue(), err.getvalue())


def run_single_and_torchrun(
    module: str, args: Sequence[str], root: str | Path, *, nproc: int = 2, timeout: float = 300
) -> tuple[Path, Path]:
    """Run ``python -m module *args`` once as one process and once under ``torchrun --standalone
    --nproc-per-node=nproc`` (gloo on CPU), with ``--out-dir root/one`` and ``root/two`` and one thread per
    process; asserts both exit 0 (showing the end of stderr otherwise) and that one process reports a run
    directory (rank 0 only), and returns the two out dirs, whose logged losses the caller compares."""
    root = Path(root)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    launchers = {
        "one": [sys.executable, "-m", module],
        "two": [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}"]
        + ["-m", module],
    }
    for name, launcher in launchers.items():
        cmd = [*launcher, *args, "--out-dir", str(root / name)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, check=False)
        assert done.returncode == 0, f"{name} process(es) exited {done.returncode}:\n{done.stderr[-2000:]}"
        reports = done.stdout.count("run directory:")
        assert reports == 1, f"{name}: {reports} processes reported a run directory (only rank 0 should)"
    return root / "one", root / "two"


def assert_valid_run_dir(path: str | Path) -> dict[str, Any]:
    """Check the docs/architecture.md §5 files of a finished run; returns its results."""
    path = Path(path)
    for name in ("config.json", "env.json", "results.json", "report.md"):
        assert (path / name).is_file(), f"{path} lacks {name}"
    cfg = json.loads((path / "config.json").read_text())
    assert {"method", "seed", "config", "config_hash"} <= set(cfg), f"config.json keys: {sorted(cfg)}"
    env = json.loads((path / "env.json").read_text())
    assert {"python", "packages", "device", "seed"} <= set(env), f"env.json keys: {sorted(env)}"
    results = json.loads((path / "results.json").read_text())
    assert isinstance(results.get("claims"), list), "results.json lacks the evaluated 'claims' list"
    if (path / "metrics.jsonl").exists():
        for line in (path / "metrics.jsonl").read_text().splitlines():
            assert "step" in json.loads(line)
    assert (path / "report.md").read_text().startswith("# "), "report.md has no title"
    return results


def smoke_run(spec: MethodSpec[Any], out_dir: str | Path, **overrides: Any) -> tuple[RunDir, dict[str, Any]]:
    """Run ``spec``'s smoke preset on the CPU into ``out_dir`` and check the run directory."""
    import dataclasses

    cfg = dataclasses.replace(spec.preset("smoke"), **overrides)
    run, results, _ = execute(spec, cfg, CommonFlags(seed=0, device="cpu", out_dir=Path(out_dir), quiet=True))
    assert_valid_run_dir(run.path)
    return run, results


def _equal_outputs(a: Any, b: Any, where: str) -> None:
    import numpy as np

    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor), f"{where}: tensor vs {type(b).__name__}"
        assert a.shape == b.shape and a.dtype == b.dtype, f"{where}: {a.shape}/{a.dtype} vs {b.shape}/{b.dtype}"
        assert torch.equal(a, b), f"{where}: outputs differ (max |diff| {float((a.double() - b.double()).abs().max())})"
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.shape == b.shape, f"{where}: array shapes differ"
        assert np.array_equal(a, b), f"{where}: outputs differ"
    elif isinstance(a, Mapping):
        assert isinstance(b, Mapping) and set(a) == set(b), f"{where}: keys differ"
        for k in a:
            _equal_outputs(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, list | tuple):
        assert isinstance(b, list | tuple) and len(a) == len(b), f"{where}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _equal_outputs(x, y, f"{where}[{i}]")
    elif hasattr(a, "to_tuple") and callable(a.to_tuple):  # transformers / diffusers ModelOutput
        _equal_outputs(a.to_tuple(), b.to_tuple(), where)
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def assert_models_roundtrip(run: RunDir, probes: Mapping[str, Callable[[Any], Any] | torch.Tensor]) -> None:
    """Every model ``run`` saved loads back with :func:`iclr26_shared.models.load_model` and gives the
    in-memory model's outputs on a fixed input bit for bit.

    ``probes`` maps each saved model's name to the input tensor to call it on, or to a function
    ``probe(model) -> outputs`` (tensors, arrays, tuples, dicts, model outputs). Both models are put in
    eval mode and run without gradients. (A model whose parameters have ``requires_grad=False``, e.g.
    an EMA copy, can differ from its loaded copy by one ulp on the CPU, since ``from_pretrained`` gives
    trainable parameters: set ``requires_grad_(True)`` before saving.) Every saved model needs a probe,
    and the run must have saved at least one: a method whose models silently stop being saved fails.
    """
    from iclr26_shared.models import list_models, load_model

    saved = list_models(run.path)
    assert saved, f"{run.path} saved no model"
    assert set(saved) == set(run.saved_models), f"saved on disk {sorted(saved)} vs in memory {sorted(run.saved_models)}"
    unprobed = sorted(set(saved) - set(probes))
    assert not unprobed, f"no probe for the saved models {unprobed}"
    for name, probe in probes.items():
        assert name in saved, f"probe for {name!r}, but the run saved only {sorted(saved)}"
        loaded, original = load_model(run.path, name), run.saved_models[name]
        assert type(loaded) is type(original), f"{name}: loaded a {type(loaded).__name__}"
        call: Callable[[Any], Any] = (lambda m, x=probe: m(x)) if isinstance(probe, torch.Tensor) else probe
        outs = []
        for model in (original, loaded):
            was_training = getattr(model, "training", None)
            if isinstance(model, torch.nn.Module):
                model.eval()
            with torch.no_grad():
                outs.append(call(model))
            if isinstance(model, torch.nn.Module) and was_training:
                model.train()
        _equal_outputs(outs[0], outs[1], name)


# --------------------------------------------------------------------------------------------------
# Degenerate results for claims()
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Arms:
    """Where the arms of one compared metric sit in a method's results, and the metric's trivial level.

    Paths are ``/``-separated keys into the nested results (an all-digit part indexes a list), e.g.
    ``"test/deql/recall@20"``. The value at a path may be a number or any nesting of lists/dicts of
    numbers (a curve, a per-length table): the cases below replace every number in it.

    Attributes:
        ours: Paths of the paper method's value(s).
        others: Paths of the baselines' (and ablations') values.
        trivial: The level of the trivial answer (majority class, mean predictor, "always in", ...).
        worse: A value worse than ``trivial`` in the metric's direction, or None to skip that case.
    """

    ours: Sequence[str]
    others: Sequence[str]
    trivial: float
    worse: float | None = None


def _split(path: str) -> list[str | int]:
    return [int(p) if p.isdigit() else p for p in path.strip("/").split("/")]


def _get(tree: Any, path: str) -> Any:
    node = tree
    for key in _split(path):
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            raise KeyError(f"results have no {path!r} (stuck at {key!r})") from None
    return node


def _set(tree: Any, path: str, value: Any) -> None:
    *parents, last = _split(path)
    node = tree
    for key in parents:
        node = node[key]
    node[last] = value


def _fill(value: Any, number: float) -> Any:
    """``value`` with every number (not bool) replaced by ``number``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return number
    if isinstance(value, Mapping):
        return {k: _fill(v, number) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_fill(v, number) for v in value]
    return value


def _mutable(value: Any) -> Any:
    """``value`` with every tuple made a list and every mapping a dict (in-memory results may hold
    tuples; results.json would hold lists), so paths can be replaced."""
    if isinstance(value, Mapping):
        return {k: _mutable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_mutable(v) for v in value]
    return value


def degenerate_cases(results: Mapping[str, Any], arms: Sequence[Arms]) -> dict[str, dict[str, Any]]:
    """Degenerate copies of ``results``: ``"every arm equal"`` (each baseline's value replaced by ours),
    ``"every arm at the trivial answer"`` and ``"ours worse than the trivial answer"`` (where ``worse``
    is given). Each copy changes only the paths ``arms`` names."""
    import copy

    if not arms:
        return {}
    tree: dict[str, Any] = _mutable(results)
    equal, trivial, worse = (copy.deepcopy(tree) for _ in range(3))
    for a in arms:
        for path in a.ours:
            _set(trivial, path, _fill(_get(tree, path), a.trivial))
            if a.worse is not None:
                _set(worse, path, _fill(_get(tree, path), a.worse))
        for path in a.others:
            source = _get(tree, a.ours[0])
            _set(equal, path, copy.deepcopy(source))
            _set(trivial, path, _fill(_get(tree, path), a.trivial))
    cases: dict[str, dict[str, Any]] = {"every arm equal": equal, "every arm at the trivial answer": trivial}
    if any(a.worse is not None for a in arms):
        cases["ours worse than the trivial answer"] = worse
    return cases


def _claim_key(c: Claim) -> tuple[str, str]:
    return c.claim, c.metric


def _same(x: float, y: float) -> bool:
    import math

    return (math.isnan(x) and math.isnan(y)) or x == y


def _changed(c: Claim, before: Claim | None) -> bool:
    if before is None:
        return True
    return not (_same(float(c.ours), float(before.ours)) and _same(c.reference, before.reference))


def assert_no_claim_holds(
    claims: MethodSpec[Any] | Callable[[Mapping[str, Any]], Sequence[Claim]],
    results: Mapping[str, Any],
    arms: Sequence[Arms] = (),
    *,
    extra_cases: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, list[Claim]]:
    """Feed ``claims`` (a spec's ``claims`` or the function itself) the degenerate cases of
    :func:`degenerate_cases` and any ``extra_cases`` of the method's own; assert that in each case no
    claim whose compared values the case changed holds, and that each case changes at least one claim
    (a misnamed path fails here rather than passing silently). In "every arm equal" an explicit
    non-inferiority claim (negative margin) is exempt: a tie is what it claims. Returns the claims of
    every case.
    """
    fn = claims.check_claims if isinstance(claims, MethodSpec) else claims
    base = {_claim_key(c): c for c in fn(results)}
    assert base, "claims() returned no claims for the real results"
    cases = {**degenerate_cases(results, arms), **dict(extra_cases or {})}
    assert cases, "no degenerate case: give arms or extra_cases"
    out: dict[str, list[Claim]] = {}
    for case, degenerate in cases.items():
        got = list(fn(degenerate))
        out[case] = got
        touched = [c for c in got if _changed(c, base.get(_claim_key(c)))]
        assert touched, f"{case!r} changed no claim's compared values: check the Arms paths"
        if case == "every arm equal":  # a non-inferiority claim (margin < 0) holds at a tie by its own text
            touched = [c for c in touched if c.margin >= 0]
        holding = [f"{c.claim} ({c.metric}: ours {c.ours!r} vs {c.reference!r})" for c in touched if c.holds]
        assert not holding, f"{case!r}: these claims still hold: {holding}"
    return out


# --------------------------------------------------------------------------------------------------
# The toy method
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToyConfig:
    """Minibatch SGD on ridge regression ``min_w |Xw - y|²/n + l2 |w|²``."""

    n: PosInt = 256
    """Number of samples."""
    dim: PosInt = 8
    """Number of features."""
    l2: NonNegFloat = 0.1
    """Ridge penalty."""
    lr: PosFloat = 0.05
    """SGD step size."""
    batch_size: PosInt = 32
    """Minibatch size."""
    steps: PosInt = 400
    """SGD steps."""
    checkpoint_every: PosInt = 50
    """Steps between checkpoints."""
    crash_at: int = -1
    """Test hook: raise RuntimeError after this step (before it is checkpointed); -1 never."""
    sleep_s: NonNegFloat = 0.0
    """Test hook: seconds to sleep per step (to kill a run mid-way)."""

    def __post_init__(self) -> None:
        validate(self)
        if self.batch_size > self.n:
            raise ConfigError("batch_size", self.batch_size, f"at most n = {self.n}")


def _toy_run(cfg: ToyConfig, run: RunDir) -> dict[str, Any]:
    gen = make_generator(run.seed)
    x = torch.randn(cfg.n, cfg.dim, generator=gen, dtype=torch.float64)
    w_true = torch.randn(cfg.dim, generator=gen, dtype=torch.float64)
    y = x @ w_true + 0.1 * torch.randn(cfg.n, generator=gen, dtype=torch.float64)

    def loss(w: torch.Tensor) -> float:
        return float(((x @ w - y) ** 2).mean() + cfg.l2 * (w**2).sum())

    w = torch.zeros(cfg.dim, dtype=torch.float64)
    start = 0
    ckpt = run.load_checkpoint()
    if ckpt is not None:
        start, state = ckpt
        w = state["w"]
        gen.set_state(state["gen"])
        set_rng_state(state["rng"])
    with run.progress(cfg.steps, "toy", completed=start) as bar:
        for step in range(start + 1, cfg.steps + 1):
            idx = torch.randint(0, cfg.n, (cfg.batch_size,), generator=gen)
            xb, yb = x[idx], y[idx]
            grad = 2 * xb.T @ (xb @ w - yb) / cfg.batch_size + 2 * cfg.l2 * w
            w = w - cfg.lr * grad
            current = loss(w)
            run.log(step, loss=current)
            bar.advance(loss=current)
            if cfg.sleep_s:
                time.sleep(cfg.sleep_s)
            if step == cfg.crash_at:
                raise RuntimeError(f"toy crash at step {step}")
            if step % cfg.checkpoint_every == 0 or step == cfg.steps:
                run.save_checkpoint(step, {"w": w, "gen": gen.get_state(), "rng": get_rng_state()})
    w_star = torch.linalg.solve(x.T @ x / cfg.n + cfg.l2 * torch.eye(cfg.dim, dtype=torch.float64), x.T @ y / cfg.n)
    rows = run.read_metrics()
    plot_curves(
        run.figure_path("loss"),
        {"SGD": ([r["step"] for r in rows], [r["loss"] for r in rows])},
        xlabel="step",
        ylabel="ridge objective",
        logy=True,
    )
    return {"sgd_loss": loss(w), "closed_form_loss": loss(w_star), "w": w.tolist(), "steps": cfg.steps}


def _toy_claims(results: Mapping[str, Any]) -> list[Claim]:
    ours, best = results["sgd_loss"], results["closed_form_loss"]
    return [
        Claim(
            claim="minibatch SGD gets within 5% of the ridge optimum",
            metric="SGD objective / optimum",
            ours=ours / best,
            threshold=1.05,
            better="lower",
            paper="(toy: optimum)",
        )
    ]


def _toy_report(results: Mapping[str, Any]) -> str:
    return f"SGD objective {results['sgd_loss']:.6g} vs closed form {results['closed_form_loss']:.6g}."


TOY_SPEC: MethodSpec[ToyConfig] = MethodSpec(
    name="toy-ridge",
    domain="testing",
    paper="(test method) ridge regression by SGD",
    config=ToyConfig,
    presets={"smoke": ToyConfig(steps=60, checkpoint_every=20), "quick": ToyConfig(), "full": ToyConfig(steps=2000)},
    run=_toy_run,
    claims=_toy_claims,
    summary="Test method: SGD on ridge regression vs the closed form (exercises runs, resume, claims).",
    report=_toy_report,
)


@dataclass(frozen=True)
class ToyDDPConfig:
    """Linear regression with ``torch.nn.Linear`` and SGD, data-parallel under torchrun."""

    n: PosInt = 512
    """Number of samples."""
    dim: PosInt = 8
    """Number of features."""
    batch_size: PosInt = 32
    """Global batch (split evenly over the ranks)."""
    steps: PosInt = 60
    """SGD steps."""
    lr: PosFloat = 0.05
    """SGD step size."""
    checkpoint_every: PosInt = 20
    """Steps between checkpoints."""
    crash_at: int = -1
    """Test hook: raise RuntimeError after this step (before it is checkpointed); -1 never."""

    def __post_init__(self) -> None:
        validate(self)
        if self.batch_size > self.n:
            raise ConfigError("batch_size", self.batch_size, f"at most n = {self.n}")


class ToyLinear(torch.nn.Linear, PyTorchModelHubMixin):
    """``nn.Linear`` with the hub mixin: the toy's trained model, saved and loaded like every method's."""

    def __init__(self, in_features: int, out_features: int = 1) -> None:
        super().__init__(in_features, out_features)


def _toy_ddp_run(cfg: ToyDDPConfig, run: RunDir) -> dict[str, Any]:
    dist = run.dist
    gen = make_generator(run.seed)  # the same stream on every rank: data and batch indices agree
    x = torch.randn(cfg.n, cfg.dim, generator=gen)
    y = x @ torch.randn(cfg.dim, generator=gen) + 0.1 * torch.randn(cfg.n, generator=gen)
    torch.manual_seed(run.seed)
    model = ToyLinear(cfg.dim, 1)
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    start = 0
    ckpt = run.load_checkpoint()
    if ckpt is not None:
        start, state = ckpt
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        gen.set_state(state["gen"])
    ddp = dist.wrap(model)
    for step in range(start + 1, cfg.steps + 1):
        idx = dist.shard(torch.randint(0, cfg.n, (cfg.batch_size,), generator=gen), what="batch_size")
        loss = torch.nn.functional.mse_loss(ddp(x[idx]).squeeze(-1), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        run.log(step, **dist.mean({"loss": float(loss.detach())}))
        if step == cfg.crash_at:
            raise RuntimeError(f"toy crash at step {step}")
        if step % cfg.checkpoint_every == 0 or step == cfg.steps:
            run.save_checkpoint(step, {"model": model.state_dict(), "opt": opt.state_dict(), "gen": gen.get_state()})
    with torch.no_grad():
        full = float(torch.nn.functional.mse_loss(model(x).squeeze(-1), y))
    run.save_model("linear", model)
    return {"final_loss": full, "world_size": dist.world_size, "steps": cfg.steps}


def _toy_ddp_dry_run(cfg: ToyDDPConfig, device: torch.device) -> dict[str, Any]:
    """The toy's ``dry_run``: the model and optimizer at cfg's sizes, one SGD step and one eval at batch 2."""
    x, y = torch.randn(2, cfg.dim, device=device), torch.randn(2, device=device)
    model = ToyLinear(cfg.dim, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    loss = torch.nn.functional.mse_loss(model(x).squeeze(-1), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        ev = float(torch.nn.functional.mse_loss(model(x).squeeze(-1), y))
    return {
        "parameters": sum(p.numel() for p in model.parameters()),
        "train_loss": float(loss.detach()),
        "eval_loss": ev,
    }


def _toy_ddp_claims(results: Mapping[str, Any]) -> list[Claim]:
    return [Claim("SGD fits the linear model", "final MSE", results["final_loss"], threshold=0.05, better="lower")]


TOY_DDP_SPEC: MethodSpec[ToyDDPConfig] = MethodSpec(
    name="toy-ddp",
    domain="testing",
    paper="(test method) data-parallel SGD on linear regression",
    config=ToyDDPConfig,
    presets={"smoke": ToyDDPConfig(), "quick": ToyDDPConfig(steps=200), "full": ToyDDPConfig(steps=1000)},
    run=_toy_ddp_run,
    claims=_toy_ddp_claims,
    summary="Test method: torchrun/DDP through iclr26_shared.distributed.",
    dry_run=_toy_ddp_dry_run,
)


def fake_image_dataset(
    n_train: int = 40, n_test: int = 20, shape: tuple[int, ...] = (8, 8), num_classes: int = 4, seed: int = 0
) -> ImageDataset:
    """A tiny seeded :class:`ImageDataset` whose classes are separable (class c brightens row block c)."""
    import numpy as np

    rng = np.random.default_rng(seed)

    def make(n: int) -> tuple[np.ndarray, np.ndarray]:
        y = np.arange(n) % num_classes
        x = rng.integers(0, 64, size=(n, *shape))
        rows = max(1, shape[0] // num_classes)
        for i, c in enumerate(y):
            x[i, c * rows : (c + 1) * rows] += 160
        return x.clip(0, 255).astype(np.uint8), y.astype(np.int64)

    xtr, ytr = make(n_train)
    xte, yte = make(n_test)
    return ImageDataset("fake", xtr, ytr, xte, yte, tuple(f"class{c}" for c in range(num_classes)))


def check_domain_cli(main: Callable[[list[str]], int], methods: Mapping[str, MethodSpec[Any]], domain: str) -> None:
    """The contract every domain CLI keeps: ``--help`` lists its methods, an unknown method exits 2 with
    one line, and ``METHODS`` is what the ``iclr26.methods`` entry point of ``domain`` exposes."""
    from importlib import metadata

    from iclr26_shared.spec import PRESET_NAMES

    res = run_cli(main, ["--help"])
    assert res.code == 0, res.err
    assert res.out.startswith(f"usage: iclr26-{domain}"), res.out
    assert all(name in res.out for name in methods)
    res = run_cli(main, ["no-such-method"])
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1, res.err
    assert "unknown method 'no-such-method'" in res.err
    eps = {ep.name: ep for ep in metadata.entry_points(group="iclr26.methods")}
    assert eps[domain].load() is methods, f"entry point {domain!r} does not expose cli.METHODS"
    for name, spec in methods.items():
        assert isinstance(spec, MethodSpec) and spec.name == name and spec.domain == domain
        assert set(PRESET_NAMES) <= set(spec.presets)


if __name__ == "__main__":  # `python -m iclr26_shared.testing <toy> ...` (and under torchrun)
    import sys

    from iclr26_shared.cli import run_methods

    sys.exit(run_methods({s.name: s for s in (TOY_SPEC, TOY_DDP_SPEC)}, prog="iclr26-testing", domain="testing"))
