"""Classic spatial verification (the baseline a reviewer asked for): RANSAC homography on mutual nearest
neighbours of the local descriptors; the number of inliers is the pair's score (OpenCV ``findHomography``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["mutual_nearest_neighbours", "ransac_inliers"]


def mutual_nearest_neighbours(q: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(i, j)`` of the pairs that are each other's nearest neighbour (cosine of unit rows)."""
    if len(q) == 0 or len(x) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    sim = q @ x.T
    fwd = sim.argmax(1)
    bwd = sim.argmax(0)
    i = np.nonzero(bwd[fwd] == np.arange(len(q)))[0]
    return i, fwd[i]


def ransac_inliers(
    q: np.ndarray, q_xy: np.ndarray, x: np.ndarray, x_xy: np.ndarray, *, threshold: float = 5.0, seed: int = 0
) -> int:
    """RANSAC inliers of a homography fitted to the mutual nearest neighbours (0 with fewer than 4 matches).

    ``q [M, D]``, ``q_xy [M, 2]`` (pixels), likewise ``x``; ``threshold`` is the reprojection error in pixels.
    ``seed`` seeds OpenCV's RANSAC (any non-negative integer; above 2**31 - 1 through ``derive_seed``).
    """
    import cv2

    i, j = mutual_nearest_neighbours(q, x)
    if len(i) < 4:
        return 0
    from iclr26_shared.seeding import derive_seed

    # OpenCV's RNG seed is a C int: a larger seed (--seed goes up to 2**32 - 1) is mapped into it
    cv2.setRNGSeed(seed if 0 <= seed < 2**31 else derive_seed(seed, "cv2", bits=31))
    h, inl = cv2.findHomography(q_xy[i], x_xy[j], cv2.RANSAC, threshold, maxIters=500, confidence=0.995)
    if h is None or inl is None:
        return 0
    return int(inl.sum())
