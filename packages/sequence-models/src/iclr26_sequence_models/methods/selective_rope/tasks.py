"""The four tasks behind one interface: vocabulary, seeded training batches, evaluation metrics.

Every task yields ``(inputs [B, T], labels [B, T])`` with label −100 where no loss is taken, and
evaluates a model into a dict whose ``"metric"`` entry is the headline number of the task:

* ``state``: token accuracy of the running group product at the test length (paper: length 512);
* ``copy``: mean per-token copy accuracy over the evaluation lengths beyond the training range (exact
  string accuracy per length is reported too);
* ``mqar``: accuracy at the query positions;
* ``lm``: bits per byte on the held-out books (lower is better).
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from iclr26_sequence_models.data.bible import BibleCorpus, load_bible
from iclr26_sequence_models.data.copying import CopyTokens, copy_eval_batch, copy_train_batch
from iclr26_sequence_models.data.mqar import IGNORE_INDEX, multiquery_ar
from iclr26_sequence_models.data.state_tracking import make_group, word_problem
from iclr26_sequence_models.methods.selective_rope.config import TaskSettings

__all__ = ["HIGHER_IS_BETTER", "Task", "make_task", "model_logits"]

#: Direction of each task's headline metric.
HIGHER_IS_BETTER = {"state": True, "copy": True, "mqar": True, "lm": False}

_EVAL_BATCH = 64


class Task(Protocol):
    """What the training loop needs from a task."""

    vocab_size: int

    def train_batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Inputs and labels of training step ``step`` (a pure function of seed and step)."""
        ...

    def evaluate(self, model: nn.Module, device: torch.device, small: bool = False) -> dict[str, Any]:
        """Metrics on the test set; ``small`` uses a quarter of it (learning curves)."""
        ...

    def validate(self, model: nn.Module, device: torch.device) -> float:
        """The headline metric on a validation set drawn apart from the test set (used to pick a learning
        rate or a Selective RoPE variant, so the reported test number is not the one it was chosen on)."""
        ...


def _seed(*parts: int) -> int:
    return int(np.random.SeedSequence(list(parts)).generate_state(1)[0])


def model_logits(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``logits [B, T, V]`` of a :class:`~iclr26_sequence_models.nn.hf.SelectiveRopeForCausalLM` (its
    ``.logits``) or of a bare ``SequenceModel`` (the first of its ``(logits, cache)``)."""
    out = model(x)
    return out.logits if hasattr(out, "logits") else out[0]


@torch.no_grad()
def _logits(model: nn.Module, x: torch.Tensor, device: torch.device) -> torch.Tensor:
    outs = [model_logits(model, x[i : i + _EVAL_BATCH].to(device)).float().cpu() for i in range(0, len(x), _EVAL_BATCH)]
    return torch.cat(outs)


class StateTask:
    """Group word problem, tagging the running product; train at ``seq_len``, test at ``eval_len``."""

    def __init__(self, s: TaskSettings, seed: int) -> None:
        self.s, self.seed = s, seed
        self.group = make_group(s.group)
        self.vocab_size = self.group.order + 1  # elements + BOS
        self.test = word_problem(self.group, s.eval_size, s.eval_len, _seed(seed, 1))
        self.test_short = word_problem(self.group, s.eval_size, s.seq_len, _seed(seed, 2))

    def train_batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Fresh random words of the training length."""
        return word_problem(self.group, self.s.batch_size, self.s.seq_len, _seed(self.seed, 3, step))

    def evaluate(self, model: nn.Module, device: torch.device, small: bool = False) -> dict[str, Any]:
        """Token and sequence accuracy at the test and training lengths; chance = 1 / |G|."""
        n = max(1, len(self.test[0]) // 4) if small else len(self.test[0])
        out: dict[str, Any] = {"chance": 1.0 / self.group.order}
        for name, (x, y) in (("test", self.test), ("train_len", self.test_short)):
            pred = _logits(model, x[:n], device)[:, 1:].argmax(-1)
            ok = pred == y[:n, 1:]
            out[f"{name}_token_acc"] = ok.float().mean().item()
            out[f"{name}_seq_acc"] = ok.all(-1).float().mean().item()
            if name == "test":
                out["acc_by_position"] = ok.float().mean(0).tolist()[:: max(1, x.shape[1] // 32)]
        out["metric"] = out["test_token_acc"]
        return out

    def validate(self, model: nn.Module, device: torch.device) -> float:
        """Token accuracy at the test length on fresh words."""
        if not hasattr(self, "val"):
            self.val = word_problem(self.group, self.s.eval_size, self.s.eval_len, _seed(self.seed, 4))
        x, y = self.val
        return (_logits(model, x, device)[:, 1:].argmax(-1) == y[:, 1:]).float().mean().item()


class CopyTask:
    """Copying with length extrapolation: train on lengths ``[copy_min_len, copy_max_len]``."""

    def __init__(self, s: TaskSettings, seed: int) -> None:
        self.s, self.seed = s, seed
        self.tok = CopyTokens()
        self.vocab_size = self.tok.size
        rng = np.random.default_rng(_seed(seed, 1))
        self.tests = {n: copy_eval_batch(self.tok, s.eval_size, n, rng) for n in s.copy_eval_lengths}

    def train_batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Packed examples; labels −100 outside the answers."""
        rng = np.random.default_rng(_seed(self.seed, 3, step))
        x, y, m = copy_train_batch(
            self.tok, self.s.batch_size, self.s.seq_len, self.s.copy_min_len, self.s.copy_max_len, rng
        )
        return x, y.masked_fill(~m, IGNORE_INDEX)

    def validate(self, model: nn.Module, device: torch.device) -> float:
        """Token accuracy beyond the training lengths on fresh strings of the evaluation lengths."""
        if not hasattr(self, "vals"):
            rng = np.random.default_rng(_seed(self.seed, 4))
            self.vals = {n: copy_eval_batch(self.tok, self.s.eval_size, n, rng) for n in self.s.copy_eval_lengths}
        return self._evaluate(model, device, self.vals, small=False)["metric"]

    def evaluate(self, model: nn.Module, device: torch.device, small: bool = False) -> dict[str, Any]:
        """String accuracy (every answer token right, i.e. greedy decoding copies exactly) per length."""
        return self._evaluate(model, device, self.tests, small)

    def _evaluate(
        self,
        model: nn.Module,
        device: torch.device,
        tests: dict[int, tuple[torch.Tensor, torch.Tensor, torch.Tensor]],
        small: bool,
    ) -> dict[str, Any]:
        by_len, tok_by_len = {}, {}
        for n, (x, y, m) in tests.items():
            k = max(1, len(x) // 4) if small else len(x)
            pred = _logits(model, x[:k], device).argmax(-1)
            ok = (pred == y[:k]) | ~m[:k]
            by_len[str(n)] = ok.all(-1).float().mean().item()
            tok_by_len[str(n)] = ((pred == y[:k]) & m[:k]).sum().item() / max(1, m[:k].sum().item())
        beyond = [v for n, v in tok_by_len.items() if int(n) > self.s.copy_max_len]
        within = [v for n, v in tok_by_len.items() if int(n) <= self.s.copy_max_len]
        return {
            "string_acc_by_length": by_len,
            "token_acc_by_length": tok_by_len,
            "within_train_token_acc": float(np.mean(within)) if within else math.nan,
            "beyond_train_token_acc": float(np.mean(beyond)) if beyond else math.nan,
            "metric": float(np.mean(beyond)) if beyond else float(np.mean(within)),
            "chance": 1.0 / self.tok.vocab,
        }


class MqarTask:
    """Multi-query associative recall with fresh Zoology-style batches per step."""

    def __init__(self, s: TaskSettings, seed: int) -> None:
        self.s, self.seed = s, seed
        self.vocab_size = s.vocab_size
        self.test = multiquery_ar(s.vocab_size, s.eval_size, s.eval_len, _seed(seed, 1), num_kv_pairs=s.mqar_kv_pairs)

    def train_batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        """A fresh batch of MQAR sequences."""
        return multiquery_ar(
            self.s.vocab_size,
            self.s.batch_size,
            self.s.seq_len,
            _seed(self.seed, 3, step),
            num_kv_pairs=self.s.mqar_kv_pairs,
        )

    def evaluate(self, model: nn.Module, device: torch.device, small: bool = False) -> dict[str, Any]:
        """Accuracy over query positions."""
        x, y = self.test
        n = max(1, len(x) // 4) if small else len(x)
        pred = _logits(model, x[:n], device).argmax(-1)
        mask = y[:n] != IGNORE_INDEX
        acc = ((pred == y[:n]) & mask).sum().item() / max(1, mask.sum().item())
        # chance: recalling one of the sequence's values without its key (no association learned)
        return {"query_acc": acc, "metric": acc, "chance": 1.0 / self.s.mqar_kv_pairs}

    def validate(self, model: nn.Module, device: torch.device) -> float:
        """Query accuracy on fresh sequences."""
        if not hasattr(self, "val"):
            s = self.s
            self.val = multiquery_ar(
                s.vocab_size, s.eval_size, s.eval_len, _seed(self.seed, 4), num_kv_pairs=s.mqar_kv_pairs
            )
        x, y = self.val
        pred, mask = _logits(model, x, device).argmax(-1), y != IGNORE_INDEX
        return ((pred == y) & mask).sum().item() / max(1, mask.sum().item())


class LmTask:
    """Byte-level language modelling on the King James Bible, split by book."""

    def __init__(self, s: TaskSettings, seed: int, corpus: BibleCorpus | None = None) -> None:
        self.s, self.seed = s, seed
        self.corpus = corpus or load_bible()
        self.vocab_size = 256
        self.val = self.corpus.batch("val", s.eval_size, s.seq_len, torch.Generator().manual_seed(_seed(seed, 1)))
        # the trivial byte LMs, fitted on the training books (add-one smoothed) and scored on the val windows:
        # the mean predictor (byte frequencies) and the order-1 Markov chain (next byte given the current one)
        train = self.corpus.train.long()
        counts = torch.bincount(train, minlength=256).double() + 1.0
        logp = (counts / counts.sum()).log2()
        self.unigram_bpb = float(-logp[self.val[1].reshape(-1)].mean())
        pairs = torch.bincount(train[:-1] * 256 + train[1:], minlength=256 * 256).double().view(256, 256) + 1.0
        logp2 = (pairs / pairs.sum(1, keepdim=True)).log2()
        x, y = self.val[0].long(), self.val[1].long()
        self.bigram_bpb = float(-logp2[x.reshape(-1), y.reshape(-1)].mean())

    def train_batch(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Random training windows."""
        gen = torch.Generator().manual_seed(_seed(self.seed, 3, step))
        return self.corpus.batch("train", self.s.batch_size, self.s.seq_len, gen)

    def evaluate(self, model: nn.Module, device: torch.device, small: bool = False) -> dict[str, Any]:
        """Bits per byte = cross-entropy (nats) / ln 2 on held-out windows."""
        x, y = self.val
        n = max(1, len(x) // 4) if small else len(x)
        logits = _logits(model, x[:n], device)
        nats = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y[:n].reshape(-1)).item()
        return {
            "val_bpb": nats / math.log(2),
            "metric": nats / math.log(2),
            "unigram_bpb": self.unigram_bpb,
            "bigram_bpb": self.bigram_bpb,
        }

    def validate(self, model: nn.Module, device: torch.device) -> float:
        """Bits per byte on other windows of the held-out books."""
        if not hasattr(self, "tune"):
            gen = torch.Generator().manual_seed(_seed(self.seed, 4))
            self.tune = self.corpus.batch("val", self.s.eval_size, self.s.seq_len, gen)
        x, y = self.tune
        logits = _logits(model, x, device)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1)).item() / math.log(2)


def make_task(s: TaskSettings, seed: int) -> Task:
    """The task object of ``s.task``."""
    kinds = {"state": StateTask, "copy": CopyTask, "mqar": MqarTask, "lm": LmTask}
    return kinds[s.task](s, seed)  # type: ignore[return-value]
