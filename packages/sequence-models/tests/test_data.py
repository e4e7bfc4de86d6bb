"""Generators are deterministic per seed and their labels are right (checked by independent solvers)."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
import torch

from iclr26_sequence_models.data import (
    CopyTokens,
    copy_eval_batch,
    copy_train_batch,
    load_bible,
    make_group,
    multiquery_ar,
    word_problem,
)
from iclr26_sequence_models.data.mqar import IGNORE_INDEX


def test_mqar_deterministic_and_labels_solved() -> None:
    a = multiquery_ar(128, 50, 64, seed=3, num_kv_pairs=8)
    b = multiquery_ar(128, 50, 64, seed=3, num_kv_pairs=8)
    c = multiquery_ar(128, 50, 64, seed=4, num_kv_pairs=8)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[0], c[0])
    x, y = a
    assert x.shape == y.shape == (50, 64)
    for row in range(50):
        context = {int(x[row, 2 * i]): int(x[row, 2 * i + 1]) for i in range(8)}  # key -> value
        assert all(1 <= key < 64 for key in context) and all(64 <= v < 128 for v in context.values())
        positions = (y[row] != IGNORE_INDEX).nonzero().flatten().tolist()
        assert len(positions) == 8
        for p in positions:
            assert p >= 16 and int(x[row, p]) in context
            assert int(y[row, p]) == context[int(x[row, p])]


def test_mqar_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="even"):
        multiquery_ar(128, 2, 63, 0)
    with pytest.raises(ValueError, match="exceed"):
        multiquery_ar(32, 2, 64, 0)


def _compose(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(b[a[i]] for i in range(len(a)))


@pytest.mark.parametrize("name,order", [("S2", 2), ("S3", 6), ("A5", 60), ("S5", 120)])
def test_word_problem_labels(name: str, order: int) -> None:
    group = make_group(name)
    assert group.order == order and group.elements[0] == tuple(range(len(group.elements[0])))
    x, y = word_problem(group, 6, 40, seed=1)
    x2, _ = word_problem(group, 6, 40, seed=1)
    assert torch.equal(x, x2) and x.shape == (6, 41)
    assert (x[:, 0] == order).all() and (y[:, 0] == -100).all()
    x, y = x[:, 1:], y[:, 1:]
    for row in range(6):
        acc = group.elements[int(x[row, 0])]
        for t in range(40):
            if t:
                acc = _compose(acc, group.elements[int(x[row, t])])
            assert group.elements[int(y[row, t])] == acc


def test_parity_is_running_xor() -> None:
    x, y = word_problem(make_group("S2"), 8, 64, seed=0, bos=False)
    assert torch.equal(y, x.cumsum(1) % 2)


def test_copy_batches() -> None:
    tok = CopyTokens()
    rng1, rng2 = np.random.default_rng(5), np.random.default_rng(5)
    x, y, m = copy_train_batch(tok, 3, 60, 2, 10, rng1)
    assert torch.equal(x, copy_train_batch(tok, 3, 60, 2, 10, rng2)[0])
    assert x.shape == y.shape == m.shape == (3, 60)
    assert torch.equal(x[:, 1:], y[:, :-1])
    # independent check: every masked target equals the token |s|+1 places before it in the sequence
    seq = torch.cat([x[:, :1], y], dim=1)
    for row in range(3):
        s = seq[row].tolist()
        for i, flag in enumerate(m[row].tolist()):
            if flag:
                j = i + 1
                start = max(p for p in range(j) if s[p] == tok.sep)
                bos = max(p for p in range(start) if s[p] == tok.bos)
                n = start - bos - 1
                expect = tok.eos if j - start - 1 == n else s[bos + 1 + (j - start - 1)]
                assert s[j] == expect
    ex, ey, em = copy_eval_batch(tok, 4, 7, np.random.default_rng(0))
    assert ex.shape == (4, 2 * 7 + 2) and int(em.sum()) == 4 * 8
    with pytest.raises(ValueError, match="context"):
        copy_train_batch(tok, 1, 10, 2, 8, rng1)


def test_bible_corpus_split_by_book() -> None:
    corpus = load_bible()
    assert len(corpus.train_books) + len(corpus.val_books) == 66
    assert not set(corpus.train_books) & set(corpus.val_books)
    assert corpus.train.dtype == torch.uint8 and corpus.train.numel() > 3_000_000
    text = bytes(corpus.train[:200].tolist()).decode()
    assert "In the beginning God created" in text
    x, y = corpus.batch("val", 4, 32, torch.Generator().manual_seed(0))
    assert x.shape == (4, 32) and torch.equal(x[:, 1:], y[:, :-1])


def test_all_groups_are_closed() -> None:
    for name in ("S3", "A5"):
        g = make_group(name)
        elems = set(g.elements)
        assert all(_compose(a, b) in elems for a, b in itertools.product(g.elements, repeat=2))


def test_lm_trivial_levels_against_hand_counts() -> None:
    """The LM task's trivial levels (the claims' chance for bits/byte): the add-one-smoothed unigram and
    bigram byte models of the training bytes, scored on the task's val windows, equal counts done by hand
    with Python dicts on a small corpus."""
    import math
    from collections import Counter

    from iclr26_sequence_models.data.bible import BibleCorpus
    from iclr26_sequence_models.methods.selective_rope.config import PRESETS
    from iclr26_sequence_models.methods.selective_rope.tasks import LmTask

    train = list(b"in the beginning god created the heaven and the earth. " * 3)
    val = list(b"and the earth was without form, and void; and darkness was upon the face of the deep.")
    corpus = BibleCorpus(torch.tensor(train, dtype=torch.uint8), torch.tensor(val, dtype=torch.uint8), ("a",), ("b",))
    settings = dataclasses.replace(PRESETS["smoke"].settings("lm"), eval_size=3, seq_len=16)
    task = LmTask(settings, seed=0, corpus=corpus)
    x, y = task.val
    uni, bi = Counter(train), Counter(zip(train[:-1], train[1:], strict=True))
    prev = Counter(train[:-1])
    pairs = list(zip(x.reshape(-1).tolist(), y.reshape(-1).tolist(), strict=True))
    want_uni = -sum(math.log2((uni[b] + 1) / (len(train) + 256)) for _, b in pairs) / len(pairs)
    want_bi = -sum(math.log2((bi[(a, b)] + 1) / (prev[a] + 256)) for a, b in pairs) / len(pairs)
    assert task.unigram_bpb == pytest.approx(want_uni, rel=1e-12)
    assert task.bigram_bpb == pytest.approx(want_bi, rel=1e-12)
    assert 0.0 < task.unigram_bpb < 8.0 and task.bigram_bpb > 0.0
