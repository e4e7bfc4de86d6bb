"""Config of the ``selective-rope`` method: a frozen dataclass, the per-task budget tables and presets.

Hyper-parameters left at ``None`` take the value of the chosen task in the budget table ``scale``
(:data:`TASK_TABLES`); the Selective RoPE switches left at ``None`` take the paper's setting for that
task (:data:`PAPER_SELECTIVE`). :meth:`SelectiveRopeConfig.settings` resolves both. This module imports
no torch, so ``iclr26 list`` stays fast.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import annotated_types as at

from iclr26_shared.config import NonNegFloat, NonNegInt, PosFloat, PosInt, validate
from iclr26_shared.errors import ConfigError

__all__ = [
    "PAPER_SELECTIVE",
    "POSITIONS",
    "PRESETS",
    "TASKS",
    "TASK_TABLES",
    "SelectiveRopeConfig",
    "TaskSettings",
]

TASKS = ("state", "copy", "mqar", "lm")
TaskName = Literal["state", "copy", "mqar", "lm"]
POSITIONS = ("nope", "rope", "selective")


@dataclass(frozen=True)
class TaskSettings:
    """Everything one training run of one task needs (resolved from the config)."""

    task: str
    layer: str
    hidden_size: int
    num_layers: int
    num_heads: int
    expand_k: float
    use_short_conv: bool
    steps: int
    batch_size: int
    lr: float
    seq_len: int
    eval_len: int
    eval_size: int
    eval_every: int
    vocab_size: int
    mqar_kv_pairs: int
    copy_min_len: int
    copy_max_len: int
    copy_eval_lengths: tuple[int, ...]
    group: str
    selective: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON form (results.json)."""
        return dataclasses.asdict(self)


# Per-task paper settings of Selective RoPE (configs/*/*.yaml of the official code,
# github.com/timurcarstensen/selective-rope).
PAPER_SELECTIVE: dict[str, dict[str, Any]] = {
    # state tracking: temp_type rope, theta 1 (all ω = 1), bias on, gate off, short conv on φ
    "state": dict(temp_type="rope", temp_theta=1.0, temp_max=1.0, use_bias=True, use_gate=False, skip_conv=False),
    # copying: skip_conv, rfa spectrum theta 0.9999, temp_max 0.25 (gate and bias were swept; we take both off)
    "copy": dict(temp_type="rfa", temp_theta=0.9999, temp_max=0.25, use_bias=False, use_gate=False, skip_conv=True),
    # MQAR: the module defaults (rope spectrum 500000, low-rank φ)
    "mqar": dict(temp_type="rope", temp_theta=500_000.0, temp_max=1.0, use_bias=False, use_gate=False, skip_conv=False),
    # LM main sweep: full-rank φ, SiLU after the conv, standard phase gate, no bias
    "lm": dict(
        temp_type="rope",
        temp_theta=500_000.0,
        temp_max=1.0,
        use_bias=False,
        use_gate=True,
        skip_conv=False,
        conv_act="silu",
        phi_parametrization="full-rank",
    ),
}

_BASE: dict[str, dict[str, Any]] = {
    # paper: 1-layer GLA, hidden 384, 12 heads, expand_k 1, short conv, lr 5e-4, train 128 / test 512
    "state": dict(layer="gla", num_layers=1, expand_k=1.0, use_short_conv=True, seq_len=128, eval_len=512, lr=5e-4),
    # paper: 4-layer GLA, hidden 512, 16 heads, expand_k 1, no short conv, lr 2e-3, train 2-64 / eval 2-512
    "copy": dict(layer="gla", expand_k=1.0, use_short_conv=False, lr=2e-3),
    # Zoology MQAR: 2 layers; vocab 8192 in the paper (smaller here), power-law gaps
    "mqar": dict(layer="gla", num_layers=2, expand_k=0.5, use_short_conv=True, lr=3e-3),
    # LM: GLA with short conv, expand_k 0.5, AdamW lr 5e-4 in the paper (scaled up for tiny models)
    "lm": dict(layer="gla", expand_k=0.5, use_short_conv=True, vocab_size=256, lr=2e-3),
}

_SCALES: dict[str, dict[str, dict[str, Any]]] = {
    "smoke": {
        "state": dict(hidden_size=32, num_heads=2, steps=6, batch_size=8, seq_len=32, eval_len=64, eval_size=16),
        "copy": dict(
            hidden_size=32,
            num_layers=1,
            num_heads=2,
            steps=6,
            batch_size=4,
            seq_len=48,
            copy_min_len=2,
            copy_max_len=8,
            copy_eval_lengths=(4, 16),
            eval_size=8,
        ),
        "mqar": dict(
            hidden_size=32,
            num_heads=2,
            steps=6,
            batch_size=8,
            seq_len=32,
            eval_len=32,
            eval_size=16,
            vocab_size=64,
            mqar_kv_pairs=4,
        ),
        "lm": dict(hidden_size=32, num_layers=1, num_heads=2, steps=6, batch_size=4, seq_len=64, eval_size=4),
    },
    "quick": {
        # train 64 / test 256 (the paper's 4x extrapolation at half the length), lr 1e-2 (see README)
        "state": dict(
            hidden_size=64, num_heads=4, steps=400, batch_size=32, lr=1e-2, seq_len=64, eval_len=256, eval_size=128
        ),
        "copy": dict(
            hidden_size=64,
            num_layers=2,
            num_heads=4,
            steps=300,
            batch_size=16,
            seq_len=128,
            copy_min_len=2,
            copy_max_len=16,
            copy_eval_lengths=(8, 16, 24, 32, 48, 64),
            eval_size=64,
        ),
        # MQAR at T 32 with 4 pairs and vocabulary 64, lr 1e-2: at T 64 / 8 pairs / vocab 256 every position
        # stays at chance for 300 steps (the MQAR plateau), which measures nothing
        "mqar": dict(
            hidden_size=64,
            num_heads=4,
            steps=300,
            batch_size=32,
            lr=1e-2,
            seq_len=32,
            eval_len=32,
            eval_size=512,
            vocab_size=64,
            mqar_kv_pairs=4,
        ),
        # T 128 (half the cost of T 256): every position trains 3 learning rates (lr_sweep)
        "lm": dict(hidden_size=128, num_layers=2, num_heads=4, steps=250, batch_size=16, seq_len=128, eval_size=64),
    },
    "full": {
        "state": dict(hidden_size=384, num_heads=12, steps=10_000, batch_size=64, eval_size=1000),
        "copy": dict(
            hidden_size=512,
            num_layers=4,
            num_heads=16,
            steps=5000,
            batch_size=32,
            seq_len=420,
            copy_min_len=2,
            copy_max_len=64,
            copy_eval_lengths=(16, 32, 64, 128, 256, 512),
            eval_size=128,
        ),
        "mqar": dict(
            hidden_size=128,
            num_heads=4,
            steps=20_000,
            batch_size=64,
            seq_len=256,
            eval_len=256,
            eval_size=3000,
            vocab_size=8192,
            mqar_kv_pairs=16,
        ),
        "lm": dict(
            hidden_size=512,
            num_layers=8,
            num_heads=4,
            steps=20_000,
            batch_size=32,
            seq_len=1024,
            eval_size=512,
            lr=1e-3,
        ),
    },
}

_COMMON: dict[str, Any] = dict(
    num_layers=2,
    expand_k=0.5,
    use_short_conv=False,
    seq_len=128,
    eval_len=128,
    eval_size=256,
    eval_every=0,
    vocab_size=0,
    mqar_kv_pairs=8,
    copy_min_len=2,
    copy_max_len=64,
    copy_eval_lengths=(32, 64, 128),
    group="S2",
)

#: ``TASK_TABLES[scale][task]``: the budget and architecture of each task at each scale.
TASK_TABLES: dict[str, dict[str, dict[str, Any]]] = {
    scale: {task: {**_COMMON, **_BASE[task], **table[task]} for task in TASKS} for scale, table in _SCALES.items()
}


#: Config fields that, when set, replace the task table's value.
_TABLE_OVERRIDES = (
    "steps",
    "batch_size",
    "lr",
    "hidden_size",
    "num_layers",
    "num_heads",
    "seq_len",
    "eval_len",
    "eval_every",
    "layer",
)
#: Selective RoPE switches that, when set, replace the paper's per-task setting.
_SELECTIVE_OVERRIDES = (
    "phi_parametrization",
    "skip_conv",
    "use_bias",
    "use_gate",
    "temp_type",
    "temp_theta",
    "temp_max",
)


@dataclass(frozen=True)
class SelectiveRopeConfig:
    """Selective RoPE vs RoPE vs NoPE on state tracking, copying, MQAR and byte-level LM.

    Fields left at ``None`` take the task's value from the ``scale`` table (or the paper's Selective RoPE
    setting for that task).
    """

    task: Literal["state", "copy", "mqar", "lm", "all"] = "all"
    """Task: state (group word problems), copy, mqar, lm (King James Bible bytes), or all four in turn."""
    compare: bool = True
    """Train nope, rope and selective under the same budget and seeds (else only --position)."""
    position: Literal["nope", "rope", "selective"] = "selective"
    """Position encoding when --compare is off."""
    layer: Literal["gla", "gdn", "attn", "fox"] | None = None
    """Host layer (None: the task's default, GLA everywhere as in the paper's synthetic runs)."""
    scale: Literal["smoke", "quick", "full"] = "quick"
    """Budget table that fills the fields left at None."""
    group: Literal["S2", "S3", "A5", "S5"] = "S2"
    """Group of the state-tracking word problem (S2 = parity)."""
    steps: PosInt | None = None
    """Optimizer steps per run."""
    batch_size: PosInt | None = None
    """Sequences per step."""
    lr: PosFloat | None = None
    """Peak AdamW learning rate (linear warm-up, cosine decay)."""
    hidden_size: PosInt | None = None
    """Model width D."""
    num_layers: PosInt | None = None
    """Number of blocks."""
    num_heads: PosInt | None = None
    """Heads per mixer."""
    seq_len: PosInt | None = None
    """Training sequence length T (state: 128 in the paper)."""
    eval_len: PosInt | None = None
    """Test sequence length (state: 512 in the paper; mqar: the test T)."""
    eval_every: NonNegInt | None = None
    """Steps between learning-curve evaluations (0: about 10 points per run)."""
    mqar_kv_pairs: PosInt | None = None
    """MQAR: key-value pairs per sequence."""
    mqar_vocab: PosInt | None = None
    """MQAR: vocabulary size (keys from the lower half, values from the upper half; > seq_len)."""
    weight_decay: NonNegFloat = 0.1
    """AdamW weight decay (not applied to biases, norms, gains)."""
    warmup_frac: Annotated[float, at.Interval(ge=0, lt=1)] = 0.1
    """Fraction of steps of linear warm-up."""
    grad_clip: PosFloat = 1.0
    """Gradient-norm clip."""
    phi_parametrization: Literal["low-rank", "full-rank"] | None = None
    """Selective RoPE phase projection (None: the task's paper setting; low-rank otherwise)."""
    phi_proj_rank: PosInt = 32
    """Rank r of the low-rank phase projection (32 in every official config; the module's default is 16)."""
    skip_conv: bool | None = None
    """First difference instead of the short convolution on φ (None: paper setting per task)."""
    conv_act: Literal["none", "silu"] | None = None
    """Activation after the φ short convolution (None: paper setting per task)."""
    use_bias: bool | None = None
    """Add exp(β) to the phase increments (a RoPE component) (None: paper setting per task)."""
    use_gate: bool | None = None
    """Phase gate σ(gate(x̂)) (None: paper setting per task)."""
    gate_parametrization: Literal["standard", "low-rank", "gla"] = "standard"
    """Phase gate form: one scalar per head, low-rank per head, or per frequency."""
    temp_type: Literal["rope", "rfa"] | None = None
    """Temperature spectrum ω (None: paper setting per task)."""
    temp_theta: PosFloat | None = None
    """Spectrum parameter: >= 1 for rope, in (0, 1) for rfa."""
    temp_max: PosFloat | None = None
    """Largest temperature."""
    temp_grad: bool = False
    """Train the temperatures (frozen in the paper)."""
    rope_theta: PosFloat = 500_000.0
    """Base of plain RoPE (the paper's code uses 500000)."""
    lr_sweep: tuple[TaskName, ...] = ("lm",)
    """Tasks whose learning rate is tuned per position: each position trains at lr × every ``lr_factors``
    entry and reports the run with the best validation metric (the paper tunes lr per positional scheme)."""
    lr_factors: Annotated[tuple[PosFloat, ...], at.MinLen(1)] = (0.5, 1.0, 2.0)
    """Learning-rate multipliers tried on the ``lr_sweep`` tasks."""
    bias_gate_sweep: tuple[TaskName, ...] = ("copy",)
    """Tasks on which Selective RoPE trains with ``use_bias`` and ``use_gate`` each on and off (the paper's
    copying sweep) and reports the variant with the best validation metric; a switch set explicitly
    (``--use-bias``/``--use-gate``) is not swept."""

    def __post_init__(self) -> None:
        validate(self)
        for task in self.tasks:
            self.settings(task)  # raises ConfigError for inconsistent sizes

    @property
    def tasks(self) -> tuple[str, ...]:
        """The tasks this config runs."""
        return TASKS if self.task == "all" else (self.task,)

    @property
    def positions(self) -> tuple[str, ...]:
        """The position encodings this config trains."""
        return POSITIONS if self.compare else (self.position,)

    def lrs(self, task: str) -> tuple[float, ...]:
        """The learning rates each position of ``task`` trains with (one unless the task is swept)."""
        lr = self.settings(task).lr
        return tuple(lr * f for f in self.lr_factors) if task in self.lr_sweep else (lr,)

    def selective_variants(self, task: str) -> tuple[dict[str, bool], ...]:
        """The Selective RoPE switch overrides tried on ``task`` (``({},)`` unless bias/gate are swept)."""
        if task not in self.bias_gate_sweep:
            return ({},)
        bias = (False, True) if self.use_bias is None else (self.use_bias,)
        gate = (False, True) if self.use_gate is None else (self.use_gate,)
        return tuple({"use_bias": b, "use_gate": g} for b in bias for g in gate)

    def settings(self, task: str) -> TaskSettings:
        """Resolve the task table and the overrides into :class:`TaskSettings`; checks sizes."""
        table = dict(TASK_TABLES[self.scale][task])
        for name in _TABLE_OVERRIDES:
            if getattr(self, name) is not None:
                table[name] = getattr(self, name)
        table["group"] = self.group
        if task == "mqar":
            if self.mqar_kv_pairs is not None:
                table["mqar_kv_pairs"] = self.mqar_kv_pairs
            if self.mqar_vocab is not None:
                table["vocab_size"] = self.mqar_vocab
        table["task"] = task
        sel = dict(PAPER_SELECTIVE[task])
        sel.setdefault("phi_parametrization", "low-rank")
        sel.setdefault("conv_act", None)
        for name in _SELECTIVE_OVERRIDES:
            if getattr(self, name) is not None:
                sel[name] = getattr(self, name)
        if self.conv_act is not None:
            sel["conv_act"] = None if self.conv_act == "none" else self.conv_act
        sel.update(
            phi_proj_rank=self.phi_proj_rank, gate_parametrization=self.gate_parametrization, temp_grad=self.temp_grad
        )
        if sel["temp_type"] == "rope" and sel["temp_theta"] < 1.0:
            raise ConfigError("temp_theta", sel["temp_theta"], "a number >= 1 for temp_type 'rope'")
        if sel["temp_type"] == "rfa" and not 0.0 < sel["temp_theta"] < 1.0:
            raise ConfigError("temp_theta", sel["temp_theta"], "a number in (0, 1) for temp_type 'rfa'")
        table["selective"] = sel
        s = TaskSettings(**table)
        self._check_sizes(s)
        return s

    def _check_sizes(self, s: TaskSettings) -> None:
        if s.hidden_size % s.num_heads:
            raise ConfigError("hidden_size", s.hidden_size, f"a multiple of num_heads = {s.num_heads}")
        key_dim = s.hidden_size if s.layer in ("attn", "fox", "gdn") else int(s.hidden_size * s.expand_k)
        head = key_dim // s.num_heads
        if key_dim % s.num_heads or head % 2:
            raise ConfigError(
                "num_heads", s.num_heads, f"a divisor of the key width {key_dim} giving an even head dim (got {head})"
            )
        if s.task == "mqar":
            if s.seq_len % 2 or s.eval_len % 2:
                raise ConfigError("seq_len", s.seq_len, "an even MQAR length (also eval_len)")
            if 4 * s.mqar_kv_pairs > min(s.seq_len, s.eval_len):
                raise ConfigError("seq_len", s.seq_len, f">= 4 * {s.mqar_kv_pairs} key-value pairs")
            if s.vocab_size <= max(s.seq_len, s.eval_len):
                raise ConfigError("seq_len", s.seq_len, f"below the MQAR vocabulary {s.vocab_size}")
        if s.task == "copy" and s.seq_len <= 2 * s.copy_max_len + 3:
            raise ConfigError("seq_len", s.seq_len, f"> 2 * copy_max_len + 3 = {2 * s.copy_max_len + 3}")


PRESETS: dict[str, SelectiveRopeConfig] = {
    "smoke": SelectiveRopeConfig(scale="smoke"),
    "quick": SelectiveRopeConfig(scale="quick"),
    "full": SelectiveRopeConfig(scale="full"),
}
