"""Training loop: loss decreases on real data; one step through the transformers class equals the bare
SequenceModel's step bit for bit; an interrupted compare run resumes from finished sub-runs."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from iclr26_sequence_models.methods.selective_rope.config import PRESETS
from iclr26_sequence_models.methods.selective_rope.model import build_model
from iclr26_sequence_models.methods.selective_rope.spec import SPEC
from iclr26_sequence_models.methods.selective_rope.tasks import make_task
from iclr26_sequence_models.methods.selective_rope.train import lr_at, train_one
from iclr26_sequence_models.nn.hf import SelectiveRopeForCausalLM
from iclr26_sequence_models.nn.model import SequenceModel
from iclr26_shared.runner import CommonFlags, execute


def test_lm_loss_decreases_on_bible_bytes() -> None:
    smoke = PRESETS["smoke"]
    cfg = dataclasses.replace(smoke, task="lm", lm=dataclasses.replace(smoke.lm, steps=25, lr=3e-3))
    s = cfg.settings("lm")
    task = make_task(s, seed=0)
    torch.manual_seed(0)
    model = build_model(s, "selective", task.vocab_size)
    before = task.evaluate(model, torch.device("cpu"))["val_bpb"]
    out = train_one(model, task, s, cfg, torch.device("cpu"))
    assert out["metric"] < before - 1.0, (before, out["metric"])  # 8 bits/byte at init → well below
    assert len(out["curve"]) >= 2 and out["params"] == model.num_parameters(only_trainable=True)


def _old_path_step(task_name: str, position: str, seed: int) -> tuple[SequenceModel, dict, float]:
    """One training step as the experiment ran it before it trained through the transformers class
    (build_model + train_one of commit 16558c9, written out): a bare SequenceModel drawn after
    manual_seed(seed), mean cross-entropy over the labelled tokens in fp32, clip (when the task clips), AdamW
    (no decay on 1-d parameters; the task's β2 and decay) at the step-0 lr of a 1-step run (warm-up of
    max(1, int(0.1)) = 1 step: the peak lr). Returns the model, its initial weights and the loss."""
    cfg = PRESETS["smoke"]
    s = cfg.settings(task_name)
    task = make_task(s, seed=0)
    options = {"rope_theta": cfg.rope_theta} if position == "rope" else {}
    if position == "selective":
        options = dict(s.selective)
    layer_options = {"expand_k": s.expand_k, "use_short_conv": s.use_short_conv} if s.layer == "gla" else {}
    torch.manual_seed(seed)
    model = SequenceModel(
        vocab_size=task.vocab_size,
        hidden_size=s.hidden_size,
        num_layers=s.num_layers,
        layer=s.layer,  # type: ignore[arg-type]
        num_heads=s.num_heads,
        position=position,
        position_options=options,
        layer_options=layer_options,
    ).train()
    init = {k: v.clone() for k, v in model.state_dict().items()}
    opt = torch.optim.AdamW(  # the task's official optimiser (state, copy) or the top-level one (mqar, lm)
        [
            {"params": [p for p in model.parameters() if p.dim() >= 2], "weight_decay": s.training["weight_decay"]},
            {"params": [p for p in model.parameters() if p.dim() < 2], "weight_decay": 0.0},
        ],
        lr=s.lr,
        betas=(0.9, s.training["beta2"]),
        eps=1e-8,
    )
    x, y = task.train_batch(0)
    logits, _ = model(x)
    loss = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=-100)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if s.training["grad_clip"] > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), s.training["grad_clip"])
    opt.step()
    return model, init, loss.item()


@pytest.mark.parametrize(
    ("task_name", "position"), [("copy", "selective"), ("lm", "selective"), ("mqar", "rope"), ("state", "nope")]
)
def test_one_step_through_the_hf_class_equals_the_bare_model_step(task_name: str, position: str) -> None:
    """The experiment's model is SelectiveRopeForCausalLM: from the same seed it holds the weights the old
    path's bare SequenceModel drew, and one ``train_one`` step leaves the same weights and the same loss, bit
    for bit (copying and MQAR have masked labels; the LM has full-rank φ, SiLU conv and the gate)."""
    old, init, old_loss = _old_path_step(task_name, position, seed=5)
    cfg = PRESETS["smoke"]
    s = dataclasses.replace(cfg.settings(task_name), steps=1)
    task = make_task(s, seed=0)
    torch.manual_seed(5)
    new = build_model(s, position, task.vocab_size, cfg.rope_theta)
    assert isinstance(new, SelectiveRopeForCausalLM)
    state = new.model.state_dict()
    assert state.keys() == init.keys() and all(torch.equal(state[k], v) for k, v in init.items())
    out = train_one(new, task, s, cfg, torch.device("cpu"))
    assert out["curve"][0]["loss"] == old_loss
    state = new.model.state_dict()
    changed = [k for k, v in old.state_dict().items() if not torch.equal(state[k], v)]
    assert not changed, changed
    assert any(not torch.equal(state[k], v) for k, v in init.items())  # the step moved the weights
    assert out["params"] == sum(p.numel() for p in old.parameters() if p.requires_grad)


@pytest.mark.parametrize("task", ["state", "copy"])  # copy: Selective RoPE's bias x gate sweep
def test_resume_skips_finished_sub_runs(tmp_path: Path, task: str) -> None:
    cfg = dataclasses.replace(PRESETS["smoke"], task=task)
    flags = CommonFlags(seed=0, device="cpu", out_dir=tmp_path, quiet=True)
    run, first, _ = execute(SPEC, cfg, flags)
    lines = run.metrics_path.read_text().splitlines()
    run.results_path.unlink()  # as if killed after the last checkpoint
    run2, second, _ = execute(SPEC, cfg, dataclasses.replace(flags, resume=True))
    assert run2.path == run.path
    assert run2.metrics_path.read_text().splitlines() == lines  # nothing retrained
    assert second["tasks"][task]["runs"] == first["tasks"][task]["runs"]


def _untimed(tree: Any) -> Any:
    """``tree`` without its wall-clock fields (``*seconds*``): two runs differ only in those."""
    if isinstance(tree, dict):
        return {k: _untimed(v) for k, v in tree.items() if "seconds" not in k}
    if isinstance(tree, list):
        return [_untimed(v) for v in tree]
    return tree


@pytest.mark.parametrize("task", ["state", "copy"])  # copy: the chosen candidate of a sweep is not the last one
def test_killed_between_checkpoint_and_model_save_still_saves_the_chosen_model(
    tmp_path: Path, task: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 52: a kill after a position's last candidate is checkpointed but before its model is saved lost
    that model on resume (the checkpoint held numbers only). The checkpoint now holds the chosen-so-far
    candidate's weights: the resumed run saves the uninterrupted run's weights, tensor for tensor."""
    import safetensors.torch

    from iclr26_shared.runs import RunDir

    cfg = dataclasses.replace(PRESETS["smoke"], task=task)
    flags = CommonFlags(seed=0, device="cpu", out_dir=tmp_path / "whole", quiet=True)
    whole, first, _ = execute(SPEC, cfg, flags)
    save_model = RunDir.save_model

    def killed(self: RunDir, name: str, *args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt  # the process dies before writing the first model

    monkeypatch.setattr(RunDir, "save_model", killed)
    cut = dataclasses.replace(flags, out_dir=tmp_path / "cut")
    with pytest.raises(KeyboardInterrupt):
        execute(SPEC, cfg, cut)
    monkeypatch.setattr(RunDir, "save_model", save_model)
    resumed, second, _ = execute(SPEC, cfg, dataclasses.replace(cut, resume=True))
    assert _untimed(second["tasks"][task]["runs"]) == _untimed(first["tasks"][task]["runs"])
    names = sorted(p.name for p in (whole.path / "models").iterdir())
    assert names and names == sorted(p.name for p in (resumed.path / "models").iterdir())
    for name in names:
        a = safetensors.torch.load_file(whole.path / "models" / name / "model.safetensors")
        b = safetensors.torch.load_file(resumed.path / "models" / name / "model.safetensors")
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a), name


@pytest.mark.slow
@pytest.mark.xfail(
    reason="the quick budget (400 steps) sits at the edge of learning parity: Selective RoPE stayed at chance "
    "at seeds 0 and 1 (rank 32, and rank 16 at seed 1) in the re-measurement; see the README's Results",
    strict=False,
)
def test_selective_rope_learns_parity_and_rope_does_not() -> None:
    """The paper's headline (quick-preset state task, a few CPU minutes): train 64, test 256."""
    cfg = PRESETS["quick"]
    s = cfg.settings("state")
    task = make_task(s, seed=0)
    acc = {}
    for position in ("rope", "selective"):
        torch.manual_seed(0)
        model = build_model(s, position, task.vocab_size)
        acc[position] = train_one(model, task, s, cfg, torch.device("cpu"))["metric"]
    assert acc["selective"] > 0.95 and acc["rope"] < 0.6, acc


def test_lr_schedules_by_hand() -> None:
    """Warm-up to the peak, then cosine or linear decay to 0 (the official copying trainer's linear)."""
    assert lr_at(0, 100, 1.0, 0.1) == pytest.approx(0.1) and lr_at(9, 100, 1.0, 0.1) == pytest.approx(1.0)
    assert lr_at(55, 100, 1.0, 0.1, "linear") == pytest.approx(0.5)  # (55 - 10) / 90 of the way
    assert lr_at(55, 100, 1.0, 0.1, "cosine") == pytest.approx(0.5)  # cos(π/2) at the same point
    assert lr_at(32, 100, 1.0, 0.1, "linear") == pytest.approx(1 - 22 / 90)
    assert lr_at(32, 100, 1.0, 0.1, "cosine") == pytest.approx(0.5 * (1 + math.cos(math.pi * 22 / 90)))
    assert lr_at(0, 100, 2.0, 0.0) == 2.0  # no warm-up: the official state trainer's cosine from step 0


class _ScriptedValidation:
    """The smoke state task with a validation metric read from a script; records the weights it scored."""

    def __init__(self, task: Any, script: list[float]) -> None:
        self.task, self.script, self.seen, self.batches = task, list(script), [], 0
        self.vocab_size = task.vocab_size

    def train_batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        self.batches += 1
        return self.task.train_batch(step)

    def evaluate(self, model: torch.nn.Module, device: torch.device, small: bool = False) -> dict[str, Any]:
        out = self.task.evaluate(model, device, small)
        out["weights"] = {k: v.clone() for k, v in model.state_dict().items()}
        return out

    def validate(self, model: torch.nn.Module, device: torch.device) -> float:
        self.seen.append({k: v.clone() for k, v in model.state_dict().items()})
        return self.script[len(self.seen) - 1]


@pytest.mark.parametrize(("script", "best", "stopped"), [([0.3, 0.8, 0.5, 0.6], 1, None), ([0.3, 0.5, 0.995], 2, 3)])
def test_select_best_reports_the_best_validation_checkpoint_and_stops_at_099(
    script: list[float], best: int, stopped: int | None
) -> None:
    """The official protocol: validation every eval point, the test metrics of the best-validation weights,
    and a stop once validation reaches 0.99 (no further training batch is drawn)."""
    cfg = PRESETS["smoke"]
    s = dataclasses.replace(cfg.settings("state"), steps=8, eval_every=2)
    assert s.training["select_best"] and s.training["stop_at"] == 0.99  # the state task's defaults
    task = _ScriptedValidation(make_task(s, seed=0), script)
    torch.manual_seed(0)
    model = build_model(s, "selective", task.vocab_size)
    out = train_one(model, task, s, cfg, torch.device("cpu"))  # type: ignore[arg-type]
    assert out["best_step"] == 2 * (best + 1) and out["best_val_metric"] == script[best]
    assert out["steps_run"] == (2 * stopped if stopped else 8) == task.batches
    assert [p["val_metric"] for p in out["curve"]] == script[: len(out["curve"])]
    final_weights = out["final"]["weights"]  # the test set was scored with the best checkpoint's weights
    assert all(torch.equal(final_weights[k], v) for k, v in task.seen[best].items())
    assert any(not torch.equal(final_weights[k], v) for k, v in task.seen[-1].items()) or best == len(task.seen) - 1


def test_select_best_off_reports_the_final_model() -> None:
    cfg = PRESETS["smoke"]
    s = dataclasses.replace(cfg.settings("mqar"), steps=4, eval_every=2)
    assert not s.training["select_best"]
    torch.manual_seed(0)
    task = make_task(s, seed=0)
    out = train_one(build_model(s, "rope", task.vocab_size), task, s, cfg, torch.device("cpu"))
    assert out["steps_run"] == 4 and "best_step" not in out and "val_metric" not in out["curve"][0]
