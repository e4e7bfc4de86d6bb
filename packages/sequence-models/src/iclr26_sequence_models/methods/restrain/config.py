"""Config of the ``restrain`` method (RESTRAIN vs TTRL vs ablations vs gold-label GRPO, no torch here).

The paper's hyper-parameters n, σ, k, κ, δ, ε, β were not recovered (research notes §2.2): every one is a
field, with defaults chosen for the CPU setting and documented in the package README.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Annotated, Any, Literal, Self

import annotated_types as at

from iclr26_shared.config import NonNegFloat, NonNegInt, PosFloat, PosInt, UnitFloat, validate
from iclr26_shared.errors import ConfigError

__all__ = [
    "PRESETS",
    "QUICK_VARIANTS",
    "TRL_NAMES",
    "VARIANTS",
    "RestrainConfig",
    "RestrainTrainConfig",
    "check_inputs",
]

Variant = Literal["ttrl", "restrain", "no_plw", "no_nrp", "no_pw", "gold"]
#: Every variant the method knows: TTRL, full RESTRAIN, its three ablations, GRPO with gold labels.
VARIANTS: tuple[Variant, ...] = ("ttrl", "restrain", "no_plw", "no_nrp", "no_pw", "gold")
#: TRL ``GRPOConfig`` names → :class:`RestrainTrainConfig` fields (:meth:`RestrainTrainConfig.from_trl`).
TRL_NAMES: dict[str, str] = {
    "num_generations": "rollouts",
    "beta": "kl_beta",
    "learning_rate": "lr",
    "epsilon": "clip_eps",
    "num_iterations": "ppo_epochs",
    "max_completion_length": "max_new_tokens",
    "max_grad_norm": "grad_clip",
    "max_steps": "steps",
}
#: The quick preset's runs: −PLW and −NRP are left out. At quick scale (n = 8 rollouts, a tiny base whose
#: majority share is ~0.63) they are near-copies of RESTRAIN: the pseudo-label weights put nearly all weight
#: on the majority (σ 0.3) and NRP fires on at most 3 % of the prompts (κ 3), and the measured σ sweep
#: (0.1-1.0) and κ sweep (2-5, NRP firing on up to 40 %) moved RESTRAIN by less than the seed spread (README,
#: restrain results), so no quick setting makes their ablation claim measurable. ``full`` keeps all six.
QUICK_VARIANTS: tuple[Variant, ...] = ("ttrl", "restrain", "no_pw", "gold")


@dataclass(frozen=True)
class RestrainTrainConfig:
    """What :func:`~iclr26_sequence_models.methods.restrain.train.train_label_free` reads: the RL loop and the
    RESTRAIN objective (GRPO's clipped surrogate with group-normalised advantages, pseudo-label weights,
    negative rollout penalisation, prompt weights), on any model and prompts. No task, model size or
    evaluation: those are the experiment's (:class:`RestrainConfig`).

    Our GRPO equals TRL's ``GRPOConfig(loss_type="grpo", scale_rewards="group")``: token mean per sequence,
    then mean over the group (TRL's default ``loss_type="dapo"`` divides by the number of tokens in the whole
    batch instead), advantages divided by the group's std + ``adv_eps`` (1e-4 as in TRL). TRL's names are
    aliases: ``num_generations`` (``rollouts``), ``beta`` (``kl_beta``), and :meth:`from_trl` takes a
    ``GRPOConfig``'s keyword arguments.
    """

    steps: PosInt = 200
    """RL steps per variant."""
    prompts_per_step: PosInt = 32
    """Prompts per RL step (divided over torchrun processes)."""
    rollouts: Annotated[int, at.Ge(2)] = 8
    """n: rollouts per prompt."""
    max_new_tokens: PosInt = 4
    """Completion length cap."""
    temperature: PosFloat = 1.0
    """Rollout sampling temperature."""
    top_p: Annotated[float, at.Interval(gt=0, le=1)] = 1.0
    """Rollout nucleus sampling."""
    lr: PosFloat = 3e-5
    """RL learning rate (AdamW, no warm-up, constant). The paper trains at 1e-6 (a 4B model, ~1/300 of its
    pre-training peak); 3e-5 is 1/100 of the tiny model's pre-training lr. At 1e-4 and above even gold-reward
    GRPO loses reward in its first steps (Adam's sign-like steps overshoot the sharp minimum the tiny model
    was pre-trained into), see the README's diagnosis."""
    clip_eps: Annotated[float, at.Interval(gt=0, lt=1)] = 0.2
    """ε of GRPO's ratio clip."""
    kl_beta: NonNegFloat = 0.0
    """β of the KL penalty to the frozen base model (0: none, as in TTRL)."""
    ppo_epochs: PosInt = 1
    """Optimiser steps per rollout batch (>1 makes the ratio clip active)."""
    grad_clip: PosFloat = 1.0
    """Gradient-norm clip."""
    logprob_batch: NonNegInt = 0
    """Rollouts per log-prob forward (old, reference and training passes; the training pass accumulates
    gradients over chunks of whole prompt groups). 0: all of a step's rollouts in one forward; set it so a
    real model's fp32 ``[rows, T, vocab]`` logits fit in memory."""
    disable_dropout: bool = True
    """Switch the policy's dropout off (TRL's GRPOTrainer default): with dropout on, the GRPO ratio of the
    sampled tokens is not 1 on-policy."""
    lora_r: NonNegInt = 0
    """LoRA rank (peft's ``LoraConfig``); 0: full fine-tuning of every weight (the paper's setting)."""
    lora_alpha: PosInt = 16
    """LoRA scale α (the update is (α/r) B A x)."""
    lora_dropout: UnitFloat = 0.0
    """LoRA dropout (switched off with the rest when ``disable_dropout``)."""
    lora_targets: tuple[str, ...] = ()
    """Module names LoRA wraps (e.g. ``q_proj``, ``v_proj``); empty: peft's default for the architecture."""
    bf16: bool = False
    """bf16 autocast of the forward passes (mixed precision, fp32 weights: TRL's ``bf16=True``); off: fp32."""
    adv_eps: PosFloat = 1e-4
    """ε in the group-normalised advantage (r − mean)/(std + ε)."""
    k: UnitFloat = 1.0
    """Centre k of the Gaussian pseudo-label weight g(f) = exp(−(f−k)²/2σ²)."""
    sigma: PosFloat = 0.3
    """Bandwidth σ of the Gaussian pseudo-label weight."""
    kappa: NonNegInt = 3
    """κ: negative rollout penalisation when the majority count is below κ (0 disables)."""
    delta: NonNegFloat = 0.5
    """δ: the advantage of every rollout of a penalised prompt is −δ."""
    prompt_k: UnitFloat = 1.0
    """Centre of the prompt weight u_x = g(c_ref/n)."""
    prompt_sigma: PosFloat = 0.3
    """Bandwidth of the prompt weight."""

    def __post_init__(self) -> None:
        validate(self)
        self._check()

    def _check(self) -> None:
        """Cross-field rules between this object's fields (subclasses add theirs)."""
        if self.kappa > self.rollouts:
            raise ConfigError("kappa", self.kappa, f"<= rollouts = {self.rollouts}")

    @property
    def num_generations(self) -> int:
        """TRL's name for ``rollouts`` (completions sampled per prompt)."""
        return self.rollouts

    @property
    def beta(self) -> float:
        """TRL's name for ``kl_beta`` (the KL coefficient; TRL's default 0.0, as ours)."""
        return self.kl_beta

    @classmethod
    def from_trl(cls, **trl: Any) -> Self:
        """This config from TRL ``GRPOConfig`` keyword arguments (``num_generations``, ``beta``,
        ``learning_rate``, ``epsilon``, ``num_iterations``, ``max_completion_length``, ``max_grad_norm``,
        ``max_steps``, ``temperature``, ``top_p``, ``bf16``, ``disable_dropout``), mixed with our own field
        names. ``loss_type`` must be ``"grpo"`` and ``scale_rewards`` ``"group"``/True: the only forms our
        loss computes; any other TRL setting is refused, naming it."""
        own = {f.name for f in fields(cls)}
        out: dict[str, Any] = {}
        for name, value in trl.items():
            if name == "loss_type":
                if value != "grpo":
                    raise ConfigError("loss_type", value, "'grpo' (token mean per sequence, the only form computed)")
            elif name == "scale_rewards":
                if value not in ("group", True):
                    raise ConfigError("scale_rewards", value, "'group' or True (the group std, the only form computed)")
            elif name in TRL_NAMES:
                out[TRL_NAMES[name]] = value
            elif name in own:
                out[name] = value
            else:
                raise ConfigError(name, value, f"a field of {cls.__name__} or one of TRL's " + ", ".join(TRL_NAMES))
        return cls(**out)


@dataclass(frozen=True)
class RestrainConfig(RestrainTrainConfig):
    """RESTRAIN (Yu et al., ICLR 2026): label-free GRPO on unlabelled prompts with self-penalisation; the
    experiment (the ``restrain`` CLI and ``iclr26 reproduce``): the training fields of
    :class:`RestrainTrainConfig` plus the task, the base model and the evaluation."""

    model: Literal["tiny", "smollm2"] = "tiny"
    """Policy: 'tiny' (a small Llama pre-trained here to partial competence) or 'smollm2' (SmolLM2-135M-Instruct)."""
    tiny_hidden: PosInt = 64
    """Hidden width of the tiny Llama."""
    tiny_layers: PosInt = 2
    """Layers of the tiny Llama."""
    tiny_heads: PosInt = 4
    """Attention heads of the tiny Llama."""
    pretrain_steps: NonNegInt = 600
    """Supervised pre-training steps of the tiny base model on the labelled pretrain split (0: random init)."""
    pretrain_batch: PosInt = 64
    """Pre-training batch size."""
    pretrain_lr: PosFloat = 3e-3
    """Pre-training learning rate (AdamW)."""
    terms: Annotated[int, at.Interval(ge=2, le=5)] = 3
    """Terms per chain_sum problem."""
    digits: Annotated[int, at.Interval(ge=1, le=3)] = 1
    """Digits per term."""
    n_pretrain: PosInt = 1024
    """Labelled problems for pre-training the tiny base model."""
    n_train: PosInt = 64
    """Unlabelled training prompts (their answers are never read by the label-free variants)."""
    n_test: PosInt = 256
    """Held-out test problems (pass@1)."""
    prompt_source: Literal["test", "train"] = "test"
    """RL prompts: 'test' = test-time RL on the unlabelled test prompts (TTRL's protocol and RESTRAIN's
    test-time variant; their answers are never read by the label-free variants), 'train' = the unlabelled
    train split, evaluated on the held-out test split."""
    variants: tuple[Variant, ...] = QUICK_VARIANTS
    """Which runs to train (all from the same base model, prompts and seed): any of ttrl, restrain, no_plw,
    no_nrp, no_pw, gold (quick leaves out no_plw and no_nrp: near-copies of restrain at this scale, README)."""
    eval_samples: PosInt = 4
    """Samples per test problem for pass@1 (averaged) and majority-vote accuracy."""
    eval_temperature: PosFloat = 0.6
    """Sampling temperature of the evaluation."""
    eval_every: NonNegInt = 25
    """Steps between curve points (0: start and end only)."""
    curve_size: PosInt = 128
    """Test problems used for curve points (the final evaluation uses all n_test)."""

    def _check(self) -> None:
        super()._check()
        if not self.variants:
            raise ConfigError("variants", self.variants, "at least one of " + ", ".join(VARIANTS))
        if len(set(self.variants)) != len(self.variants):
            raise ConfigError("variants", self.variants, "no repeated variant")
        if self.curve_size > self.n_test:
            raise ConfigError("curve_size", self.curve_size, f"<= n_test = {self.n_test}")
        if self.tiny_hidden % self.tiny_heads or (self.tiny_hidden // self.tiny_heads) % 2:
            raise ConfigError(
                "tiny_heads", self.tiny_heads, f"a divisor of tiny_hidden {self.tiny_hidden} giving an even head width"
            )
        pool = self.n_test if self.prompt_source == "test" else self.n_train
        if self.prompts_per_step > pool:
            raise ConfigError(
                "prompts_per_step",
                self.prompts_per_step,
                f"<= the {pool} {self.prompt_source} prompts of the experiment's task "
                f"(n_{self.prompt_source}); in your own code train_label_free takes a RestrainTrainConfig (no task)",
            )


PRESETS: dict[str, RestrainConfig] = {
    "smoke": RestrainConfig(
        tiny_hidden=32,
        pretrain_steps=20,
        pretrain_batch=32,
        n_pretrain=128,
        n_train=32,
        n_test=32,
        steps=3,
        prompts_per_step=4,
        rollouts=4,
        kappa=2,
        eval_every=2,
        eval_samples=2,
        curve_size=16,
    ),
    "quick": RestrainConfig(),
    # SmolLM2-135M-Instruct on 2-term 2-digit chain sums in chat form (GPU): paper-like n = 16
    "full": replace(
        RestrainConfig(),
        model="smollm2",
        variants=VARIANTS,
        terms=2,
        digits=2,
        n_pretrain=1,
        prompt_source="train",
        n_train=2048,
        n_test=500,
        steps=200,
        prompts_per_step=32,
        rollouts=16,
        max_new_tokens=48,
        kappa=5,
        lr=1e-6,
        kl_beta=0.001,
        eval_samples=4,
        curve_size=200,
        eval_every=20,
        pretrain_steps=0,
    ),
    # SmolLM2-135M-Instruct on CPU: a short demonstration of the same loop at the size 2 CPU cores allow
    # (~40 CPU-seconds per RL step of 2 prompts x 8 rollouts, full fine-tuning in fp32), test-time RL on 32
    # chat prompts of 2-term 1-digit chain sums; far below the paper's budget, so its numbers are a smoke
    # check of the SmolLM2 path, not a test of the claims
    "smollm2": RestrainConfig(
        model="smollm2",
        terms=2,
        digits=1,
        n_pretrain=1,
        pretrain_steps=0,
        n_train=8,
        n_test=32,
        variants=("ttrl", "restrain"),
        steps=6,
        prompts_per_step=2,
        rollouts=8,
        max_new_tokens=12,
        kappa=3,
        lr=1e-5,
        eval_samples=2,
        eval_every=3,
        curve_size=16,
    ),
}


def check_inputs(cfg: RestrainConfig) -> None:
    """The experiment needs the ``llm`` extra (the sentence embedder, peft, gguf, accelerate): checked
    by the CLI before torch is imported; one line naming the extra when a package of it is missing."""
    from iclr26_sequence_models._extras import require_llm

    require_llm("restrain")
