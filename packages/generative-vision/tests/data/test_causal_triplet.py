"""The MuJoCo Causal-Triplet-style generator: determinism per seed, actions change the image, split rules
never leak held-out pairs or classes into training, the cache round-trips and rejects a bad file."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np
import pytest

from iclr26_generative_vision.data.causal_triplet import (
    NOUN_VERBS,
    NOUNS,
    VERBS,
    antonym_index,
    compositional_split,
    draw_sample,
    load_or_render,
    make_split,
    render_pairs,
    systematic_split,
    valid_pairs,
)
from iclr26_shared.errors import DataError


def test_rendering_is_deterministic_per_seed_and_order_free() -> None:
    a, va, na = render_pairs(38, size=16, seed=3, indices=[4, 9])
    b, vb, nb = render_pairs(38, size=16, seed=3, indices=[9, 4])
    c, _, _ = render_pairs(38, size=16, seed=4, indices=[4, 9])
    assert a.shape == (2, 2, 16, 16, 3) and a.dtype == np.uint8
    assert np.array_equal(a, b[::-1]) and np.array_equal(va, vb[::-1]) and np.array_equal(na, nb[::-1])
    assert not np.array_equal(a, c)  # another seed draws other scenes


def test_every_action_changes_the_image_and_labels_are_valid() -> None:
    n = len(valid_pairs())
    images, verbs, nouns = render_pairs(n, size=24, seed=0)  # the schedule covers every valid pair once
    assert sorted(zip(verbs.tolist(), nouns.tolist(), strict=True)) == sorted(valid_pairs())
    diff = np.abs(images[:, 0].astype(int) - images[:, 1].astype(int)).reshape(n, -1).max(1)
    assert (diff > 0).all(), [(VERBS[v], NOUNS[o]) for v, o, d in zip(verbs, nouns, diff, strict=True) if d == 0]
    for v, o in zip(verbs, nouns, strict=True):
        assert VERBS[v] in NOUN_VERBS[NOUNS[o]]


def _state(verb: str, noun: str, index: int) -> tuple[float, float]:
    """(before, after) of the state an action changes: openness, glow, or the object's x offset from the
    camera's aim."""
    s = draw_sample(0, index, VERBS.index(verb), NOUNS.index(noun), 0)
    if verb in ("open", "close"):
        return s.openness
    if verb in ("turn-on", "turn-off"):
        return s.glow
    return s.pos[0] - s.camera[3], s.pos[0] + s.shift - s.camera[3]


@pytest.mark.parametrize(
    ("verb", "antonym", "noun"),
    [("open", "close", "cabinet"), ("close", "open", "chest"), ("turn-on", "turn-off", "lamp"),
     ("turn-off", "turn-on", "tv"), ("move-left", "move-right", "cup"), ("move-right", "move-left", "ball")],
)  # fmt: skip
def test_no_antonym_is_the_mirror_image_of_its_verb(verb: str, antonym: str, noun: str) -> None:
    """Issue 36: the swapped (after, before) states of the antonym never fall in the verb's own support
    (version 2 drew them from the same distribution: every held-out comp pair looked like a swapped
    training pair). Support edges by hand: open after >= 0.7 vs a swapped close after <= 0.6; turn-on
    after <= 0.6 vs swapped turn-off after >= 0.8; a move starts within 0.03 of the aim, a swapped one
    at least 0.13 - 0.03 away."""
    own = np.array([_state(verb, noun, i) for i in range(200)])
    swapped = np.array([_state(antonym, noun, i)[::-1] for i in range(200)])
    if verb.startswith("move"):
        assert np.abs(own[:, 0]).max() <= 0.03 and np.abs(swapped[:, 0]).min() >= 0.1
    elif verb in ("open", "turn-off"):  # the verb's high state vs the antonym's
        hi = 1 if verb == "open" else 0
        assert own[:, hi].min() >= 0.7 and swapped[:, hi].max() <= 0.6
    else:  # close, turn-on: the antonym's high state is above the verb's
        hi = 0 if verb == "close" else 1
        assert own[:, hi].max() <= 0.6 and swapped[:, hi].min() >= 0.7


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_compositional_split_keeps_verb_noun_and_antonym_in_iid(seed: int) -> None:
    pairs = valid_pairs()
    held = compositional_split(pairs, 0.3, seed)
    iid = set(pairs) - held
    assert held and len(held) <= int(0.3 * len(pairs))
    for v, n in held:
        assert any(iv == v for iv, _ in iid) and any(inn == n for _, inn in iid)
        ant = antonym_index(v)
        assert ant is not None and (ant, n) in iid  # a verb without an antonym (recolour) is never held out


def test_systematic_split_holds_out_the_middle_of_the_count_ranking() -> None:
    nouns = np.repeat(np.arange(8), [1, 2, 3, 4, 5, 6, 7, 8])  # descending: 7 6 5 4 3 2 1 0
    assert systematic_split(nouns, 0.4) == {4, 3}  # k = int(3.2) = 3, slice [4 − 1 : 4 + 1]
    assert systematic_split(np.repeat(np.arange(10), np.arange(10, 0, -1)), 0.4) == {3, 4, 5, 6}
    assert systematic_split(np.repeat(np.arange(3), [5, 1, 9]), 0.1) == {2, 0}  # at least two: [0:2] of 2 0 1


@pytest.mark.parametrize("kind", ["comp", "noun"])
def test_splits_never_leak_held_out_pairs_or_classes_into_training(kind: Literal["comp", "noun"]) -> None:
    rng = np.random.default_rng(0)
    pairs = np.asarray(valid_pairs())[rng.integers(len(valid_pairs()), size=600)]
    verbs, nouns = pairs[:, 0], pairs[:, 1]
    s = make_split(kind, verbs, nouns, ood_fraction=0.3 if kind == "comp" else 0.4, iid_test_fraction=0.2, seed=1)
    parts = [set(s.train.tolist()), set(s.iid_test.tolist()), set(s.ood_test.tolist())]
    assert sum(map(len, parts)) == 600 and not (parts[0] & parts[1] or parts[0] & parts[2] or parts[1] & parts[2])
    if kind == "comp":
        held = set(s.held_out)
        train_pairs = set(zip(verbs[s.train].tolist(), nouns[s.train].tolist(), strict=True))
        ood_pairs = set(zip(verbs[s.ood_test].tolist(), nouns[s.ood_test].tolist(), strict=True))
        assert ood_pairs == held and not (train_pairs & held)
    else:
        held_n = set(s.held_out)
        assert set(nouns[s.ood_test].tolist()) == held_n
        assert not set(nouns[s.train].tolist()) & held_n and not set(nouns[s.iid_test].tolist()) & held_n
    assert set(verbs[s.ood_test].tolist()) <= set(verbs[s.train].tolist())


def test_cache_round_trips_and_rejects_a_bad_file(tmp_path: Path) -> None:
    data, hit = load_or_render(40, size=16, seed=0, max_distractors=0, cache_dir=tmp_path)
    again, hit2 = load_or_render(40, size=16, seed=0, max_distractors=0, cache_dir=tmp_path)
    assert (hit, hit2) == (False, True) and np.array_equal(data.images, again.images)
    (path,) = tmp_path.iterdir()
    path.write_bytes(b"not an npz")
    with pytest.raises(DataError, match=path.name):
        load_or_render(40, size=16, seed=0, max_distractors=0, cache_dir=tmp_path)
