"""ProteinTTT: test-time training of a masked protein LM on the one protein it is asked about.

Bushuiev et al., *One protein is all you need* (ICLR 2026, arXiv 2411.02109), §3 and the reference code
(``proteinttt/base.py``). For a target ``x`` and a pre-trained model ``f(·; θ₀)``:

    θ ← θ₀                      (optionally LoRA adapters injected; then only they train)
    for step in 0 .. T·ags:
        batch = bs copies of x (or bs rows of its MSA), random crop of crop_size tokens    [bs, T']
        mask 15 % of the residue tokens of each copy: 80 % -> <mask>, 10 % -> a random token of the
        vocabulary's standard_toks (the reference; or of the 20 amino acids), 10 % unchanged
        if step % ags == 0: score x (pseudo-perplexity, optional) and keep the best state (optional)
        loss = mean_b mean_{i ∈ M_b} −log p_θ(x_i | x̃_b)           ("cross_entropy")
           or  mean over every token of the crop of −log p_θ(x_i | x̃_b)  ("unnormalized_cross_entropy")
        loss.backward()            (summed over ags micro-batches: gradients are not divided by ags)
        every ags micro-steps: skip if any gradient is NaN/Inf; else clip (optional), SGD step (lr 4e-4,
            momentum 0, weight decay 0), LR schedule step (optional: cosine, cosine_warmup); zero_grad
    predict with θ_T (or, automatic_best_state_reset, the best scored state); reset() restores θ₀ bit for bit

The token-embedding table is frozen (the paper's ``_ttt_get_frozen_modules``); the model is in eval mode
except during each forward/backward of a training micro-step (so dropout acts only there). The crop is
clamped to the model's position limit (AntiBERTy: 512 tokens; ESM-2's rotary embeddings have none).

LoRA (``lora_rank > 0``): ``y = W x + s · B A x`` with ``s = lora_alpha`` (``lora_scaling="reference"``: the
reference's lora_diffusion adapters, set up for its ESMFold recipe, which keeps the best step by pLDDT) or
``s = lora_alpha / r`` (``"peft"``: Hugging Face PEFT's convention, a step r times smaller).

For your own model: :func:`ttt` (``adapted = ttt(sequence, model)``) takes a :class:`MaskedLM`, a fair-esm
``ESM2`` or a ``transformers`` masked LM (e.g. ``EsmForMaskedLM``; see :func:`as_masked_lm`); LoRA
adapters go into the linear layers of the modules named by ``lora_targets`` (fair-esm:
``MultiheadAttention``; HF ESM: ``EsmAttention``; BERT: ``BertAttention``). The adapted state saves
and reloads: :meth:`ProteinTTT.save_adapter` / :func:`~iclr26_science.proteins.lora.load_adapter` (the
LoRA adapter only, in PEFT's file layout; or every trained tensor for full fine-tuning).
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import annotated_types as at
import torch
import torch.nn.functional as F

from iclr26_science.proteins.lm import MaskedLM, as_masked_lm
from iclr26_science.proteins.lora import inject_lora, lora_parameters, remove_lora, save_adapter
from iclr26_science.proteins.scoring import masked_marginals, pseudo_perplexity
from iclr26_science.proteins.tokens import check_sequence
from iclr26_shared.config import AllowLargeInt, NonNegFloat, NonNegInt, PosFloat, PosInt, UnitFloat, validate
from iclr26_shared.errors import ConfigError, DataError

__all__ = ["ProteinTTT", "TTTResult", "TTTSettings", "mlm_loss", "ttt"]

LossKind = Literal["cross_entropy", "unnormalized_cross_entropy"]


@dataclass(frozen=True)
class TTTSettings:
    """The recipe's switches (names and defaults of the reference ``TTTConfig``)."""

    lr: PosFloat = 4e-4
    """Learning rate."""
    ags: PosInt = 16
    """Gradient-accumulation micro-steps per optimiser step (gradients are summed, not averaged)."""
    steps: NonNegInt = 30
    """Optimiser steps T."""
    batch_size: PosInt = 2
    """Masked copies of the target per micro-step."""
    mask_ratio: Annotated[float, at.Interval(gt=0, lt=1)] = 0.15
    """Share of the non-special tokens of each copy selected for the MLM loss."""
    bert_leave_prob: UnitFloat = 0.1
    """Share of selected tokens left unchanged."""
    bert_replace_prob: UnitFloat = 0.1
    """Share of selected tokens replaced by a random token (the rest become ``<mask>``)."""
    replace_vocab: Literal["standard_toks", "amino_acids"] = "standard_toks"
    """Where random replacements come from: the vocabulary's non-special tokens (the reference's
    ``standard_toks``: with ESM-2 also X B U Z O . -) or the 20 standard amino acids."""
    crop_size: PosInt = 1024
    """Longest crop of the tokenised sequence (specials included) per copy; clamped to the model's
    position limit (:attr:`MaskedLM.max_tokens`)."""
    loss_kind: LossKind = "cross_entropy"
    """Per-copy mean over masked tokens, then batch mean; or token mean over the whole crop."""
    optimizer: Literal["sgd", "adamw"] = "sgd"
    """Optimiser (paper default SGD)."""
    momentum: NonNegFloat = 0.0
    """SGD momentum (paper 0)."""
    weight_decay: NonNegFloat = 0.0
    """Weight decay (paper 0)."""
    lora_rank: NonNegInt = 0
    """LoRA rank r (0 = fine-tune every parameter but the frozen ones)."""
    lora_alpha: PosFloat = 32.0
    """LoRA α (reference 32)."""
    lora_scaling: Literal["reference", "peft"] = "reference"
    """Adapter output scale: α (the reference's lora_diffusion) or α / r (Hugging Face PEFT)."""
    lora_targets: tuple[str, ...] = ("MultiheadAttention", "EsmAttention", "BertAttention")
    """Class names of the modules whose linear layers get adapters (fair-esm ESM-2's, HF ESM's and BERT's
    attention blocks)."""
    freeze_embeddings: bool = True
    """Keep the token-embedding table fixed (paper: yes)."""
    score_every_step: bool = False
    """Compute the target's pseudo-perplexity at every optimiser step (step 0 included; L forward passes each)."""
    automatic_best_state_reset: bool = True
    """The reference's switch (default on): after the loop, restore the scored state with the best
    confidence. The reference's confidence comes from a model's ``_ttt_eval_step`` (ESMFold: pLDDT; the
    masked LMs return none, so they keep θ_T); here it is the pseudo-perplexity (lowest wins, earliest on
    ties) when ``score_every_step`` is set, and without scoring there is no confidence and θ_T is kept."""
    perplexity_early_stopping: NonNegFloat = 0.0
    """Stop once the scored pseudo-perplexity falls below this (0 = never)."""
    skip_nonfinite_grads: bool = True
    """Skip an optimiser step (and zero its gradients, with a warning) when any accumulated gradient is NaN
    or ±Inf (the reference always does)."""
    gradient_clip: bool = False
    """Clip the accumulated gradients' global L2 norm before each optimiser step (reference default off)."""
    gradient_clip_max_norm: PosFloat = 1.0
    """The clipping norm (reference 1.0)."""
    lr_scheduler: Literal["none", "cosine", "cosine_warmup"] = "none"
    """Learning-rate schedule over the ``steps`` optimiser steps (reference default none): ``cosine``
    (``CosineAnnealingLR(T_max=steps, eta_min=lr_min)``) or ``cosine_warmup`` (linear warm-up over
    ``lr_warmup_steps``, then cosine from lr to ``lr_min``), stepped after each optimiser step taken."""
    lr_warmup_steps: NonNegInt = 0
    """Warm-up optimiser steps of ``cosine_warmup`` (reference 0)."""
    lr_min: NonNegFloat = 0.0
    """The schedule's final learning rate (reference 0)."""
    seed: Annotated[int, at.Ge(0), at.Lt(2**64), AllowLargeInt] = 0
    """Seed of the masking / cropping / MSA-row generator (any ``torch.Generator`` seed, < 2**64: the
    experiment passes ``--seed`` plus a target index, above the default integer bound)."""

    def __post_init__(self) -> None:
        validate(self)
        if self.bert_leave_prob + self.bert_replace_prob > 1:
            raise ConfigError(
                "bert_replace_prob", self.bert_replace_prob, f"<= 1 - bert_leave_prob = {1 - self.bert_leave_prob}"
            )
        if self.lr_min > self.lr:
            raise ConfigError("lr_min", self.lr_min, f"<= lr = {self.lr}")
        if self.lr_warmup_steps > 0 and self.lr_scheduler != "cosine_warmup":
            raise ConfigError("lr_warmup_steps", self.lr_warmup_steps, "0 unless lr_scheduler is 'cosine_warmup'")
        if self.perplexity_early_stopping > 0 and not self.score_every_step:
            raise ConfigError(
                "perplexity_early_stopping", self.perplexity_early_stopping, "0 unless score_every_step is set"
            )
        if self.crop_size < 3:
            raise ConfigError("crop_size", self.crop_size, ">= 3 (specials plus one residue)")


@dataclass
class TTTResult:
    """What one :meth:`ProteinTTT.ttt` call did.

    Attributes:
        history: One row per optimiser step ``t = 0..T``: ``step``, ``loss`` (the last micro-batch loss
            before it, None at 0), ``lr`` (the learning rate of the next step), ``perplexity`` (when scored).
        selected_step: The step whose state the model now holds.
        skipped_steps: Optimiser steps (0-based) skipped for NaN/Inf gradients.
        trainable_params: How many parameters trained.
        seconds: Wall time of the loop.
    """

    history: list[dict[str, Any]] = field(default_factory=list)
    selected_step: int = 0
    skipped_steps: list[int] = field(default_factory=list)
    trainable_params: int = 0
    seconds: float = 0.0


def mlm_loss(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor, kind: LossKind) -> torch.Tensor:
    """The TTT loss. ``logits [B, T, V]``, ``targets [B, T]`` (the unmasked tokens), ``mask [B, T]`` bool.

    ``cross_entropy``: ``mean_b mean_{i: mask[b,i]} CE(logits[b,i], targets[b,i])`` (rows without a masked
    token are skipped). ``unnormalized_cross_entropy``: ``mean_{b,i} CE`` over every token (the reference
    code's definition: masked, unmasked and special positions alike).
    """
    v = logits.shape[-1]
    if kind == "unnormalized_cross_entropy":
        return F.cross_entropy(logits.reshape(-1, v).float(), targets.reshape(-1))
    ce = F.cross_entropy(logits.reshape(-1, v).float(), targets.reshape(-1), reduction="none").view(targets.shape)
    m = mask.to(ce.dtype)
    per_seq = (ce * m).sum(1) / m.sum(1).clamp(min=1)
    keep = mask.any(1)
    return per_seq[keep].mean()


class ProteinTTT:
    """Test-time training around a :class:`MaskedLM` (modified in place; :meth:`reset` undoes it).

    Example::

        lm = load_antiberty()
        ttt = ProteinTTT(lm, TTTSettings(steps=30))
        ttt.ttt("EVQLVQSGPEVKK...")          # customise to this protein
        scores = score_mutants(lm, wt, ["E1A", "V2K:Q3R"])
        ttt.reset()                          # back to θ₀ exactly
    """

    def __init__(self, lm: MaskedLM, settings: TTTSettings | None = None) -> None:
        self.lm = lm
        self.settings = settings or TTTSettings()
        limit = lm.max_tokens
        #: The crop actually used: ``settings.crop_size`` clamped to the model's position limit.
        self.crop_size = self.settings.crop_size if limit is None else min(self.settings.crop_size, limit)
        self.generator = torch.Generator().manual_seed(self.settings.seed)
        self._initial = {k: v.detach().clone() for k, v in lm.state_dict().items()}
        self._initial_grad = {n: p.requires_grad for n, p in lm.named_parameters()}
        self._initial_training = lm.training
        #: The last :meth:`ttt` call's result (set by :func:`ttt`).
        self.result: TTTResult | None = None

    # ------------------------------------------------------------------ batches
    def tokenize(self, seq: str) -> torch.Tensor:
        """``[1, L + 2]`` token ids."""
        return torch.tensor([self.lm.alphabet.encode(seq, "target sequence")])

    def sample_batch(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Copies (or MSA rows) of ``x [N, T]``, cropped and BERT-masked: ``(masked, targets, mask)``, each
        ``[bs, T']``.

        Exactly ``int(n · mask_ratio)`` (at least 1) of the ``n`` residue tokens of each row are selected;
        special tokens (cls, eos, pad, unk, gaps) are never selected. The generator is drawn in the
        reference's order (``TTTModule._ttt_sample_batch``): rows, crop starts (drawn whenever the sequence is
        at least ``crop_size`` long), one ``randperm`` per row, then per row and selected position in
        ascending order one ``rand(1)`` and, for a replacement, one ``randint``; so with the same seed and
        inputs the batches are the reference's (``tests/proteins/test_ttt.py`` re-derives them).
        """
        s, g = self.settings, self.generator
        n_rows, t = x.shape
        bs = s.batch_size
        if n_rows == 1:
            rows = x.expand(bs, -1)
        elif n_rows >= bs:
            rows = x[torch.randint(0, n_rows, (bs,), generator=g)]
        else:
            rep = x.repeat(bs // n_rows + 1, 1)
            rows = rep[torch.randperm(rep.shape[0], generator=g)[:bs]]
        if t < self.crop_size:
            crop, starts = t, torch.zeros(bs, dtype=torch.long)
        else:
            crop, starts = self.crop_size, torch.randint(0, t - self.crop_size + 1, (bs,), generator=g)
        targets = torch.stack([rows[i, int(a) : int(a) + crop] for i, a in enumerate(starts)])
        alphabet = self.lm.alphabet
        is_aa = torch.isin(targets, torch.tensor(alphabet.residue_ids))
        aa = alphabet.standard_toks if s.replace_vocab == "standard_toks" else alphabet.aa_ids
        mask = torch.zeros_like(targets, dtype=torch.bool)
        for i in range(bs):
            cand = torch.nonzero(is_aa[i]).flatten()
            if cand.numel() == 0:
                continue
            k = max(1, int(cand.numel() * s.mask_ratio))
            mask[i, cand[torch.randperm(cand.numel(), generator=g)[:k]]] = True
        masked = targets.clone()
        keep_p, repl_p = s.bert_leave_prob, s.bert_replace_prob
        for i in range(bs):
            for j in torch.nonzero(mask[i]).flatten().tolist():
                if keep_p + repl_p <= 0:
                    masked[i, j] = alphabet.mask
                    continue
                u = float(torch.rand(1, generator=g))
                if u < 1 - keep_p - repl_p:
                    masked[i, j] = alphabet.mask
                elif u < 1 - keep_p:
                    masked[i, j] = aa[int(torch.randint(0, len(aa), (1,), generator=g))]
        return masked, targets, mask

    # ------------------------------------------------------------------ parameters
    def _frozen(self) -> set[int]:
        return {id(p) for p in self.lm.token_embedding.parameters()} if self.settings.freeze_embeddings else set()

    def trainable_parameters(self) -> list[torch.Tensor]:
        """Set ``requires_grad`` per the recipe and return the parameters that train (injects LoRA if asked)."""
        s = self.settings
        for p in self.lm.parameters():
            p.requires_grad_(False)
        if s.lora_rank > 0:
            if not lora_parameters(self.lm):
                scale = s.lora_alpha if s.lora_scaling == "reference" else s.lora_alpha / s.lora_rank
                inject_lora(self.lm, s.lora_rank, scale, s.lora_targets)
            params = lora_parameters(self.lm)
        else:
            frozen = self._frozen()
            params: list[torch.Tensor] = [p for p in self.lm.parameters() if id(p) not in frozen]
        for p in params:
            p.requires_grad_(True)
        return params

    def _optimizer(self, params: list[torch.Tensor]) -> torch.optim.Optimizer:
        s = self.settings
        if s.optimizer == "sgd":
            return torch.optim.SGD(params, lr=s.lr, momentum=s.momentum, weight_decay=s.weight_decay)
        return torch.optim.AdamW(params, lr=s.lr, weight_decay=s.weight_decay)

    def _scheduler(self, opt: torch.optim.Optimizer) -> torch.optim.lr_scheduler.LRScheduler | None:
        """The reference's schedules (``TTTModule.ttt``): stepped once per optimiser step taken."""
        s = self.settings
        if s.lr_scheduler == "cosine":
            return torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, s.steps), eta_min=s.lr_min)
        if s.lr_scheduler == "cosine_warmup":
            warmup, floor = s.lr_warmup_steps, s.lr_min / s.lr

            def factor(step: int) -> float:
                if warmup > 0 and step < warmup:
                    return (step + 1) / warmup
                progress = (step - warmup) / max(1, s.steps - warmup)
                return floor + 0.5 * (1.0 - floor) * (1.0 + math.cos(math.pi * progress))

            return torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda=factor)
        return None

    def _optimizer_step(
        self, opt: torch.optim.Optimizer, sched: torch.optim.lr_scheduler.LRScheduler | None,
        params: list[torch.Tensor], step: int,
    ) -> bool:  # fmt: skip
        """One optimiser step on the accumulated gradients, the reference's way: skipped (gradients zeroed,
        a warning) when any is NaN/Inf, else clipped (when asked), applied, and the schedule advanced.
        Returns whether the step was taken."""
        s = self.settings
        grads = [p.grad for p in params if p.grad is not None]
        if s.skip_nonfinite_grads and any(not bool(torch.isfinite(g).all()) for g in grads):
            opt.zero_grad(set_to_none=True)
            warnings.warn(f"ProteinTTT: NaN/Inf gradient at optimiser step {step}, step skipped", stacklevel=3)
            return False
        if s.gradient_clip and grads:
            torch.nn.utils.clip_grad_norm_([p for p in params if p.grad is not None], s.gradient_clip_max_norm)
        opt.step()
        if sched is not None:
            sched.step()
        opt.zero_grad(set_to_none=True)
        return True

    def _state(self) -> dict[str, torch.Tensor]:
        return {k: v.detach().clone() for k, v in self.lm.state_dict().items()}

    # ------------------------------------------------------------------ the loop
    def ttt(
        self,
        seq: str,
        msa: Sequence[str] | None = None,
        *,
        log: Callable[[dict[str, Any]], None] | None = None,
    ) -> TTTResult:
        """Customise the model to ``seq`` (in place). ``msa``: aligned homologues of equal length whose rows
        are sampled instead of copies (the paper's ``msa=True``; the target is prepended as row 0)."""
        s = self.settings
        target = check_sequence(seq, "target sequence")
        x = self.tokenize(target)
        if msa:
            rows = [target]
            for k, r in enumerate(msa):
                r = check_sequence(r, f"MSA row {k + 1}")
                if len(r) != len(target):
                    raise DataError(
                        f"MSA row {k + 1} has length {len(r)}, the target {len(target)}: rows must be aligned"
                    )
                rows.append(r)
            x = torch.tensor([self.lm.alphabet.encode(r) for r in rows])
        device = self.lm.device
        params = self.trainable_parameters()
        opt = self._optimizer(params)
        sched = self._scheduler(opt)
        opt.zero_grad(set_to_none=True)
        result = TTTResult(trainable_params=sum(p.numel() for p in params))
        best: tuple[float, int, dict[str, torch.Tensor]] | None = None
        loss: torch.Tensor | None = None
        t0 = time.perf_counter()
        self.lm.eval()
        total = s.steps * s.ags
        for micro in range(total + 1):
            if micro % s.ags == 0:
                step = micro // s.ags
                row: dict[str, Any] = {
                    "step": step, "loss": None if loss is None else float(loss.detach()),
                    "lr": float(opt.param_groups[0]["lr"]),
                }  # fmt: skip
                if s.score_every_step:
                    ppl = pseudo_perplexity(masked_marginals(self.lm, target, window=self.crop_size), target, self.lm)
                    row["perplexity"] = ppl
                    if s.automatic_best_state_reset and (best is None or ppl < best[0]):
                        best = (ppl, step, self._state())
                result.history.append(row)
                if log is not None:
                    log(row)
                if s.perplexity_early_stopping > 0 and row.get("perplexity", math.inf) < s.perplexity_early_stopping:
                    result.selected_step = step
                    break
            if micro == total:
                result.selected_step = s.steps
                break
            # after the last scoring, not before it: the final pass draws no batch it would not train on
            # (the generator carries on to the next sequence)
            masked, targets, mask = self.sample_batch(x)
            self.lm.train()
            logits = self.lm(masked.to(device))
            loss = mlm_loss(logits, targets.to(device), mask.to(device), s.loss_kind)
            loss.backward()
            if (micro + 1) % s.ags == 0 and not self._optimizer_step(opt, sched, params, micro // s.ags):
                result.skipped_steps.append(micro // s.ags)
            self.lm.eval()
        if best is not None:
            self.lm.load_state_dict(best[2])
            result.selected_step = best[1]
        for p in self.lm.parameters():
            p.requires_grad_(False)
        result.seconds = time.perf_counter() - t0
        return result

    def save_adapter(self, folder: str | Path, *, base_model: str = "") -> Path:
        """Save the trained LoRA adapters only (PEFT's layout; see :func:`~iclr26_science.proteins.lora.save_adapter`).
        Reload with ``load_adapter(base_model, folder)`` on a freshly loaded base model (or
        ``peft.PeftModel.from_pretrained(network, folder)``). Full fine-tuning has no adapter: save the network
        itself (``net.save_pretrained`` / ``torch.save(net.state_dict())``)."""
        if self.settings.lora_rank == 0:
            raise DataError("save_adapter needs LoRA (TTTSettings(lora_rank=r)); full fine-tuning changed every "
                            "weight: save the network itself")  # fmt: skip
        return save_adapter(self.lm, folder, base_model=base_model or self.lm.name)

    def reset(self) -> None:
        """Restore θ₀ bit for bit: remove LoRA adapters, copy every saved tensor back, restore flags and mode."""
        remove_lora(self.lm)
        state = self.lm.state_dict()
        if set(state) != set(self._initial):
            raise RuntimeError("the model's parameters changed names since ProteinTTT wrapped it; cannot reset")
        with torch.no_grad():
            for k, v in state.items():
                v.copy_(self._initial[k])
        for n, p in self.lm.named_parameters():
            p.requires_grad_(self._initial_grad.get(n, False))
        self.lm.train(self._initial_training)


def ttt(
    sequence: str,
    model: Any,
    settings: TTTSettings | None = None,
    *,
    msa: Sequence[str] | None = None,
    vocab: Sequence[str] | Any | None = None,
) -> ProteinTTT:
    """Customise ``model`` to one protein, in place, and return the handle that undoes it.

    Args:
        sequence: The target protein (one-letter codes; X B U Z O allowed).
        model: A :class:`MaskedLM`, a fair-esm ``ESM2`` or a ``transformers`` masked LM (see
            :func:`~iclr26_science.proteins.lm.as_masked_lm`).
        settings: The recipe (default :class:`TTTSettings`: the paper's lr 4e-4, ags 16, 30 steps, batch 2).
        msa: Aligned homologues (the paper's ``msa=True``).
        vocab: For a ``transformers`` model: its tokenizer or ordered token list (default fair-esm's).

    Returns:
        The :class:`ProteinTTT` whose ``.lm`` now scores with the adapted weights (``score_mutants(handle.lm,
        sequence, mutants)``), whose ``.result`` is the run's :class:`TTTResult`, and whose ``.reset()``
        restores the original weights bit for bit.
    """
    handle = ProteinTTT(as_masked_lm(model, vocab), settings)
    handle.result = handle.ttt(sequence, msa)
    return handle
