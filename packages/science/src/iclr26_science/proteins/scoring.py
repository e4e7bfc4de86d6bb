"""Zero-shot fitness scores of a masked protein LM and their Spearman correlation with measured fitness.

For a wild type ``x`` (``L`` residues) and a mutant with substitutions ``{(i, wt_i -> mt_i)}``:

- masked marginals (Meier et al. 2021; ProteinTTT's ``_ttt_score_seq_pseudo_perplexity``, used for ProteinGym):
  ``score = Σ_i [log p(x_i = mt_i | x_{\\i}) − log p(x_i = wt_i | x_{\\i})]`` with position ``i`` masked in the
  wild type; one forward pass per position gives the ``[L, V]`` log-probability matrix.
- wild-type marginals: the same sum with nothing masked (one forward pass).
- pseudo-log-likelihood: ``PLL(mutant) − PLL(wild type)``, ``PLL(s) = Σ_i log p(s_i | s_{\\i})`` (L passes per
  sequence).

Log-probabilities are over the model's whole vocabulary (``log_softmax`` of the logits), as in the paper's
code. Sequences longer than the model window use ProteinGym's ``get_optimal_window`` around the masked
position. The pseudo-perplexity is ``exp(−mean_i log p(x_i | x_{\\i}))``.

Every call that takes a model takes the same kinds as :func:`~iclr26_science.proteins.ttt.ttt`: a
:class:`MaskedLM`, a fair-esm ``ESM2`` or a ``transformers`` masked LM (``vocab=``: its tokenizer or token
list; see :func:`~iclr26_science.proteins.lm.as_masked_lm`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import torch

from iclr26_science.proteins.lm import MaskedLM, as_masked_lm
from iclr26_science.proteins.tokens import Mutation, apply_mutations, check_sequence, parse_mutations

__all__ = [
    "ScoreKind",
    "masked_marginals",
    "mutant_scores",
    "optimal_window",
    "pseudo_log_likelihood",
    "pseudo_perplexity",
    "score_mutants",
    "spearman",
    "wildtype_marginals",
]

ScoreKind = Literal["masked_marginal", "wildtype_marginal", "pseudo_ll"]


def optimal_window(position: int, seq_len: int, window: int) -> tuple[int, int]:
    """ProteinGym's ``get_optimal_window``: a ``window``-long slice of ``[0, seq_len)`` centred on ``position``."""
    half = window // 2
    if seq_len <= window:
        return 0, seq_len
    if position < half:
        return 0, window
    if position >= seq_len - half:
        return seq_len - window, seq_len
    return max(0, position - half), min(seq_len, position + half)


def _clamp(lm: MaskedLM, window: int) -> int:
    limit = lm.max_tokens
    return window if limit is None else min(window, limit)


def _eval_logits(lm: MaskedLM, tokens: torch.Tensor) -> torch.Tensor:
    was = lm.training
    lm.eval()
    try:
        with torch.no_grad():
            return lm(tokens.to(lm.device)).float().cpu()
    finally:
        lm.train(was)


@torch.no_grad()
def masked_marginals(
    model: Any, seq: str, *, batch_size: int = 64, window: int = 1024, vocab: Any = None
) -> torch.Tensor:
    """``[L, V]`` log-probabilities, row ``i`` from the wild type with residue ``i`` masked (windows of at
    most ``window`` tokens, clamped to the model's position limit)."""
    lm = as_masked_lm(model, vocab)
    window = _clamp(lm, window)
    ids = torch.tensor(lm.alphabet.encode(seq))  # [T = L + 2]
    t = ids.numel()
    out = torch.empty(0)
    by_len: dict[int, list[tuple[int, int, int]]] = {}  # windows of one length run together (odd windows vary)
    for p in range(1, t - 1):
        start, end = optimal_window(p, t, window)
        by_len.setdefault(end - start, []).append((p, start, end))
    for items in by_len.values():
        for k in range(0, len(items), batch_size):
            chunk = items[k : k + batch_size]
            batch = []
            for p, start, end in chunk:
                x = ids.clone()
                x[p] = lm.alphabet.mask
                batch.append(x[start:end])
            logp = torch.log_softmax(_eval_logits(lm, torch.stack(batch)), dim=-1)  # [b, T', V]
            rows = logp[torch.arange(len(chunk)), torch.tensor([p - start for p, start, _ in chunk])]
            if out.numel() == 0:
                out = torch.empty(t - 2, rows.shape[-1])
            out[torch.tensor([p - 1 for p, _, _ in chunk])] = rows
    return out


@torch.no_grad()
def wildtype_marginals(model: Any, seq: str, *, window: int = 1024, vocab: Any = None) -> torch.Tensor:
    """``[L, V]`` log-probabilities of the unmasked wild type (one pass per window)."""
    lm = as_masked_lm(model, vocab)
    window = _clamp(lm, window)
    ids = torch.tensor(lm.alphabet.encode(seq))
    t = ids.numel()
    if t <= window:
        return torch.log_softmax(_eval_logits(lm, ids[None]), dim=-1)[0, 1:-1]
    out = []
    for p in range(1, t - 1):
        start, end = optimal_window(p, t, window)
        out.append(torch.log_softmax(_eval_logits(lm, ids[None, start:end]), dim=-1)[0, p - start])
    return torch.stack(out)


def pseudo_perplexity(log_probs: torch.Tensor, seq: str, lm_or_ids: Any, *, vocab: Any = None) -> float:
    """``exp(−mean_i log_probs[i, x_i])`` for the residues of ``seq`` (``log_probs`` from :func:`masked_marginals`;
    ``lm_or_ids``: the model, any kind, or the residues' token ids)."""
    if isinstance(lm_or_ids, Sequence) and not isinstance(lm_or_ids, str):
        ids = [int(i) for i in lm_or_ids]
    else:
        ids = as_masked_lm(lm_or_ids, vocab).alphabet.encode(seq)[1:-1]
    lp = log_probs[torch.arange(len(ids)), torch.tensor(ids)]
    return float(torch.exp(-lp.mean()))


def mutant_scores(
    log_probs: torch.Tensor, model: Any, mutants: Sequence[Sequence[Mutation]], *, vocab: Any = None
) -> np.ndarray:
    """``Σ_i log_probs[i, mt_i] − log_probs[i, wt_i]`` per mutant (``[M]``)."""
    idx = as_masked_lm(model, vocab).alphabet.index
    lp = log_probs.double().numpy()
    return np.array([sum(lp[m.pos, idx[m.mt]] - lp[m.pos, idx[m.wt]] for m in muts) for muts in mutants])


def pseudo_log_likelihood(
    model: Any, seq: str, *, batch_size: int = 64, window: int = 1024, vocab: Any = None
) -> float:
    """``Σ_i log p(s_i | s_{\\i})``."""
    lm = as_masked_lm(model, vocab)
    lp = masked_marginals(lm, seq, batch_size=batch_size, window=window)
    ids = torch.tensor(lm.alphabet.encode(seq)[1:-1])
    return float(lp[torch.arange(len(ids)), ids].double().sum())


def score_mutants(
    model: Any,
    wild_type: str,
    mutants: Sequence[str | Sequence[Mutation]],
    kind: ScoreKind = "masked_marginal",
    *,
    batch_size: int = 64,
    window: int = 1024,
    vocab: Any = None,
) -> np.ndarray:
    """Zero-shot scores (``[M]``, higher = fitter) of ``mutants`` (``"A12G"``/``"A12G:K15R"`` strings or parsed).

    ``model``: any model :func:`~iclr26_science.proteins.ttt.ttt` takes (a :class:`MaskedLM`, a fair-esm
    ``ESM2``, a ``transformers`` masked LM with ``vocab`` its tokenizer or token list)."""
    lm = as_masked_lm(model, vocab)
    wt = check_sequence(wild_type, "wild-type sequence")
    parsed = [parse_mutations(m, wt) if isinstance(m, str) else tuple(m) for m in mutants]
    if kind == "masked_marginal":
        return mutant_scores(masked_marginals(lm, wt, batch_size=batch_size, window=window), lm, parsed)
    if kind == "wildtype_marginal":
        return mutant_scores(wildtype_marginals(lm, wt, window=window), lm, parsed)
    if kind == "pseudo_ll":
        base = pseudo_log_likelihood(lm, wt, batch_size=batch_size, window=window)
        return np.array(
            [
                pseudo_log_likelihood(lm, apply_mutations(wt, m), batch_size=batch_size, window=window) - base
                for m in parsed
            ]
        )
    raise ValueError(f"unknown score kind {kind!r}")


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks with ties averaged (1-based)."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x), dtype=np.float64)
    xs = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and xs[j + 1] == xs[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Spearman's rank correlation (Pearson correlation of tie-averaged ranks); NaN when either side is constant."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or len(a) < 2:
        raise ValueError(f"spearman needs two 1-d arrays of the same length >= 2, got {a.shape} and {b.shape}")
    ra, rb = _ranks(a), _ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = float(np.sqrt((ra**2).sum() * (rb**2).sum()))
    return float((ra * rb).sum() / den) if den > 0 else float("nan")
