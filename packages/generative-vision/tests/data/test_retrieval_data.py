"""The offline retrieval benchmark: homographies map windows to views, positives/negatives are correct by
construction (no hard view reaches another instance's window), RootSIFT, domains, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from iclr26_generative_vision.data.retrieval import (
    _LEVELS,  # pyright: ignore[reportPrivateUsage]
    DOMAINS,
    extract_sift,
    load_sources,
    make_domain,
    random_homography,
    retrieval_benchmark,
)
from iclr26_shared.data import available_datasets
from iclr26_shared.errors import DataError


def _corners(x: float, y: float, w: float) -> np.ndarray:
    return np.array([[x, y], [x + w, y], [x + w, y + w], [x, y + w]], np.float64)


def test_query_homography_maps_the_window_onto_the_view() -> None:
    h = random_homography(_corners(40, 30, 96), 128, np.random.default_rng(0), jitter=0, rotation_deg=0, scale=1)
    pts = np.c_[_corners(40, 30, 96), np.ones(4)] @ h.T
    np.testing.assert_allclose(pts[:, :2] / pts[:, 2:], [[0, 0], [128, 0], [128, 128], [0, 128]], atol=1e-6)


def test_no_view_reaches_another_instances_window() -> None:
    # windows are spaced by half a window: the source region of every view must stay within that gap
    rng = np.random.default_rng(0)
    w, out = 96.0, 128
    corners = _corners(200, 200, w)
    square = np.array([[0, 0, 1], [out, 0, 1], [out, out, 1], [0, out, 1]], np.float64)
    worst = 0.0
    for level in ("easy", "hard"):
        jit, rot, scl, _ = _LEVELS[level]
        for _ in range(300):
            h = random_homography(corners, out, rng, jitter=jit, rotation_deg=rot, scale=scl)
            src = square @ np.linalg.inv(h).T
            src = src[:, :2] / src[:, 2:]
            beyond = np.maximum(corners.min(0) - src, src - corners.max(0)).max()
            worst = max(worst, float(beyond))
    assert 0.2 * w < worst < 0.5 * w  # hard views do move, but never across the half-window gap


def test_rootsift_rows_have_unit_norm_and_the_cap_holds() -> None:
    img = load_sources(("astronaut",), 256)["astronaut"]
    desc, xy = extract_sift(img, 50)
    assert desc.shape == (50, 128) and xy.shape == (50, 2) and desc.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(desc, axis=1), 1.0, atol=1e-5)
    assert extract_sift(np.zeros((64, 64), np.uint8), 50)[0].shape == (0, 128)  # a flat image has no keypoint


def test_positives_are_the_views_of_the_query_instance() -> None:
    src = load_sources(("brick", "camera"), 256)
    rs = make_domain("t", src, window=64, out_size=96, views_per_instance=4, max_keypoints=32, seed=0)
    n_inst = len(rs.queries)
    assert n_inst == sum(rs.sources.values()) and len(rs.database) == 4 * n_inst
    pos = rs.positives()
    assert (pos.sum(1) == 4).all() and (rs.hard_positives().sum(1) == 2).all()
    for i in range(n_inst):
        assert set(np.nonzero(pos[i])[0]) == set(np.nonzero(rs.database.instance == rs.queries.instance[i])[0])
    assert rs.database.difficulty[:4] == ["easy", "hard", "easy", "hard"]
    assert rs.database.mask.any(1).all() and rs.queries.mask.sum(1).min() >= 8
    np.testing.assert_allclose(np.linalg.norm(rs.database.glob, axis=1), 1.0, atol=1e-5)
    # a fixed seed rebuilds the same benchmark
    again = make_domain("t", src, window=64, out_size=96, views_per_instance=4, max_keypoints=32, seed=0)
    np.testing.assert_array_equal(again.database.desc, rs.database.desc)


def test_domains_are_registered_offline_and_bad_names_raise() -> None:
    assert available_datasets("retrieval")["skimage-retrieval"].offline
    assert set(DOMAINS) == {"natural", "textures", "documents", "science"}
    with pytest.raises(DataError, match="unknown retrieval domain"):
        retrieval_benchmark(("landmarks",))
    with pytest.raises(DataError, match="no image 'lena'"):
        load_sources(("lena",), 128)
    with pytest.raises(DataError, match="views_per_instance"):
        make_domain("t", {}, window=64, out_size=64, views_per_instance=0, max_keypoints=8, seed=0)
    with pytest.raises(DataError, match="no instance"):
        make_domain(
            "t",
            {"flat": np.zeros((256, 256), np.uint8)},
            window=64,
            out_size=64,
            views_per_instance=2,
            max_keypoints=8,
            seed=0,
        )
