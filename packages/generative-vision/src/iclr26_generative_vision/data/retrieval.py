"""An offline instance-retrieval benchmark from the photographs that ship in scikit-image's wheel.

HPatches-style construction (known homographies as ground truth): every source photograph is cut into
non-overlapping square windows spaced apart ("instances"); an instance's *views* are warps of the source
image by a random homography that maps the window's corners to jittered corners, with a photometric
change (gamma, contrast, brightness, blur, noise). Positives of a query are exactly the views of its own
instance (correct by construction: the windows of one photograph never overlap, even after jitter);
every view of another instance, including the other windows of the same photograph (the hard
negatives), is a negative.

Each instance has one query (its un-warped window) and ``views_per_instance`` database views, half
"easy" (small jitter, mild photometric change) and half "hard" (large jitter, rotation, scale, strong
photometric change); as in the revisited Oxford/Paris protocol the Medium score counts both as positives
and the Hard score counts only the hard ones (easy ones are ignored, "junk").

Sources are grouped into domains (:data:`DOMAINS`): natural photographs (the training domain), textures,
documents/text and scientific/object images. Local descriptors are OpenCV SIFT (its PyPI wheel; no
weights) turned into RootSIFT; the global descriptor that makes the shortlist is the L2-normalised mean
RootSIFT of an image (a crude aggregation, deliberately weaker than the local matching it is re-ranked by).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from iclr26_shared.data import register_dataset
from iclr26_shared.errors import DataError

__all__ = [
    "DOMAINS",
    "Difficulty",
    "RetrievalSet",
    "Views",
    "extract_sift",
    "load_sources",
    "make_domain",
    "random_homography",
    "retrieval_benchmark",
]

Difficulty = Literal["query", "easy", "hard"]

#: Source photographs of scikit-image (offline, in its wheel) by domain. ``natural`` is the training domain.
DOMAINS: dict[str, tuple[str, ...]] = {
    "natural": ("astronaut", "chelsea", "coffee", "rocket", "camera", "stereo_motorcycle"),
    "textures": ("brick", "grass", "gravel"),
    "documents": ("page", "text"),
    "science": ("coins", "cell", "clock", "hubble_deep_field", "immunohistochemistry", "retina", "moon"),
}


def _grey(img: np.ndarray) -> np.ndarray:
    if img.dtype == bool:
        img = img.astype(np.uint8) * 255
    if img.ndim == 3:
        rgb = img[..., :3].astype(np.float64)
        img = rgb @ np.array([0.299, 0.587, 0.114])
    img = np.asarray(img, dtype=np.float64)
    if img.max() <= 1.0:
        img = img * 255.0
    return np.clip(img, 0, 255).astype(np.uint8)


def load_sources(names: tuple[str, ...], short_side: int) -> dict[str, np.ndarray]:
    """Grey ``uint8`` source photographs from ``skimage.data``, resized so the short side is ``short_side``."""
    import cv2
    import skimage.data

    out: dict[str, np.ndarray] = {}
    for name in names:
        loader = getattr(skimage.data, name, None)
        if loader is None:
            raise DataError(f"skimage.data has no image {name!r} (scikit-image >= 0.24 ships it in its wheel)")
        img = loader()
        if name == "stereo_motorcycle":
            img = img[0]
        grey = _grey(np.asarray(img))
        if grey.ndim != 2 or min(grey.shape) < 32:
            raise DataError(f"skimage.data.{name}: expected a 2-D image of side >= 32, got {grey.shape}")
        scale = short_side / min(grey.shape)
        size = (round(grey.shape[1] * scale), round(grey.shape[0] * scale))
        out[name] = cv2.resize(grey, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC)
    return out


def random_homography(
    corners: np.ndarray, out_size: int, rng: np.random.Generator, *, jitter: float, rotation_deg: float, scale: float
) -> np.ndarray:
    """The homography ``H`` (3×3) that maps a source quadrilateral to the output square ``[0, out_size]²``.

    The quadrilateral is the window ``corners`` (4×2, clockwise from top-left) rotated about its centre by
    a uniform angle in ``±rotation_deg``, scaled by ``exp(U(-log scale, log scale))`` and with every corner
    moved by up to ``jitter`` × the window side. ``cv2.warpPerspective(src, H, (out_size, out_size))`` is the view.
    """
    import cv2

    side = float(np.linalg.norm(corners[1] - corners[0]))
    centre = corners.mean(0)
    a = math.radians(rng.uniform(-rotation_deg, rotation_deg))
    s = math.exp(rng.uniform(-math.log(scale), math.log(scale))) if scale > 1 else 1.0
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    quad = (corners - centre) @ rot.T * s + centre + rng.uniform(-jitter, jitter, size=(4, 2)) * side
    square = np.array([[0, 0], [out_size, 0], [out_size, out_size], [0, out_size]], dtype=np.float32)
    return cv2.getPerspectiveTransform(quad.astype(np.float32), square)


def _photometric(img: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    import cv2

    x = img.astype(np.float32) / 255.0
    x = np.power(np.clip(x, 1e-4, 1.0), math.exp(rng.uniform(-0.6, 0.6) * strength))  # gamma
    x = (x - 0.5) * math.exp(rng.uniform(-0.5, 0.3) * strength) + 0.5 + rng.uniform(-0.15, 0.15) * strength
    if strength > 0.5:
        x = cv2.GaussianBlur(x, (0, 0), sigmaX=rng.uniform(0.3, 1.2) * strength)
    x = x + rng.normal(0.0, 0.02 * strength, size=x.shape).astype(np.float32)
    return (np.clip(x, 0, 1) * 255).astype(np.uint8)


#: (corner jitter, rotation degrees, scale range, photometric strength) per difficulty.
_LEVELS: dict[str, tuple[float, float, float, float]] = {
    "query": (0.0, 0.0, 1.0, 0.0),
    "easy": (0.06, 8.0, 1.1, 0.4),
    "hard": (0.12, 25.0, 1.25, 1.0),
}


def extract_sift(img: np.ndarray, max_keypoints: int) -> tuple[np.ndarray, np.ndarray]:
    """OpenCV SIFT on a grey image: the ``max_keypoints`` strongest, as RootSIFT ``[n, 128]`` and ``xy [n, 2]``.

    RootSIFT (Arandjelović & Zisserman, 2012): L1-normalise, square root; rows then have unit L2 norm.
    """
    import cv2

    sift = cv2.SIFT_create(nfeatures=max_keypoints)  # pyright: ignore[reportAttributeAccessIssue]
    kps, desc = sift.detectAndCompute(img, None)
    if desc is None or len(kps) == 0:
        return np.zeros((0, 128), np.float32), np.zeros((0, 2), np.float32)
    order = np.argsort([-k.response for k in kps], kind="stable")[:max_keypoints]
    d = desc[order].astype(np.float32)
    d = np.sqrt(d / np.maximum(d.sum(1, keepdims=True), 1e-12))
    xy = np.array([kps[i].pt for i in order], dtype=np.float32)
    return d, xy


@dataclass
class Views:
    """Local descriptors of a set of images, padded: ``desc [n, N, D]``, ``xy [n, N, 2]``, ``mask [n, N]``.

    ``D`` is 128 (RootSIFT, the patch CNN) or the backbone width (DINOv2).
    ``mask`` is True where a descriptor is real (False on padding). ``glob [n, D]`` is the global
    descriptor, ``instance [n]`` the instance id (positives share it), ``difficulty`` per view.
    """

    desc: np.ndarray
    xy: np.ndarray
    mask: np.ndarray
    glob: np.ndarray
    instance: np.ndarray
    difficulty: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.instance)

    def take(self, idx: np.ndarray) -> Views:
        """The views at ``idx``."""
        return Views(
            self.desc[idx],
            self.xy[idx],
            self.mask[idx],
            self.glob[idx],
            self.instance[idx],
            [self.difficulty[i] for i in idx],
        )


def _pack(items: list[tuple[np.ndarray, np.ndarray]], n_max: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    dim = next((d.shape[1] for d, _ in items if d.ndim == 2 and d.shape[1]), 128)  # 128 (SIFT, CNN) or DINOv2's D
    desc = np.zeros((len(items), n_max, dim), np.float32)
    xy = np.zeros((len(items), n_max, 2), np.float32)
    mask = np.zeros((len(items), n_max), bool)
    for i, (d, p) in enumerate(items):
        desc[i, : len(d)], xy[i, : len(d)], mask[i, : len(d)] = d, p, True
    return desc, xy, mask


@dataclass
class RetrievalSet:
    """One domain's benchmark: ``queries`` (one per instance) and ``database`` (its views)."""

    domain: str
    queries: Views
    database: Views
    sources: dict[str, int]

    def positives(self) -> np.ndarray:
        """``bool [num_queries, num_database]``: same instance."""
        return self.queries.instance[:, None] == self.database.instance[None, :]

    def hard_positives(self) -> np.ndarray:
        """``bool [num_queries, num_database]``: same instance and a hard view."""
        hard = np.array([d == "hard" for d in self.database.difficulty])
        return self.positives() & hard[None, :]


def _windows(shape: tuple[int, int], window: int, gap: float, margin: int) -> list[tuple[int, int]]:
    stride = int(round(window * (1 + gap)))
    ys = range(margin, shape[0] - margin - window + 1, stride)
    xs = range(margin, shape[1] - margin - window + 1, stride)
    return [(y, x) for y in ys for x in xs]


def make_domain(
    domain: str,
    sources: dict[str, np.ndarray],
    *,
    window: int,
    out_size: int,
    views_per_instance: int,
    max_keypoints: int,
    seed: int,
    max_instances_per_source: int = 0,
    include_queries: bool = True,
    min_keypoints: int = 8,
    describe: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]] | None = None,
) -> RetrievalSet:
    """Build one domain: instances from every source, a query per instance and its warped views.

    ``views_per_instance`` database views alternate easy/hard. Windows are spaced by half a window and kept
    a quarter window from the border. The hardest warp reaches at most ``0.5·1.25·(cos 25° + sin 25°) − 0.5 +
    0.12 ≈ 0.45`` of a window beyond its own window, so no database view of one instance shows any part of
    another instance's query window (positives and negatives are exact; views of neighbouring instances may
    share a strip of the gap, which matters only for training triplets). A
    window any of whose views has fewer than ``min_keypoints`` SIFT keypoints (sky, flat background) is
    not an instance. ``include_queries=False`` makes only database views (training data). ``describe(img)``
    returns ``(desc [n, D], xy [n, 2])`` of a view (default: :func:`extract_sift` with ``max_keypoints``).
    """
    import cv2

    if views_per_instance < 1:
        raise DataError(f"views_per_instance must be >= 1, got {views_per_instance}")
    rng = np.random.default_rng(seed)
    q_items: list[tuple[np.ndarray, np.ndarray]] = []
    d_items: list[tuple[np.ndarray, np.ndarray]] = []
    q_inst: list[int] = []
    d_inst: list[int] = []
    d_diff: list[str] = []
    counts: dict[str, int] = {}
    inst = 0
    for name, img in sources.items():
        wins = _windows(img.shape[:2], window, gap=0.5, margin=window // 4)
        if max_instances_per_source:
            wins = wins[:max_instances_per_source]
        counts[name] = len(wins)
        for y, x in wins:
            corners = np.array([[x, y], [x + window, y], [x + window, y + window], [x, y + window]], np.float64)
            levels = (["query"] if include_queries else []) + [
                "easy" if v % 2 == 0 else "hard" for v in range(views_per_instance)
            ]
            items = []
            for level in levels:
                jit, rot, scl, photo = _LEVELS[level]
                h = random_homography(corners, out_size, rng, jitter=jit, rotation_deg=rot, scale=scl)
                view = cv2.warpPerspective(img, h, (out_size, out_size), borderMode=cv2.BORDER_REFLECT)
                view = _photometric(view, rng, photo) if photo > 0 else view
                items.append((level, describe(view) if describe else extract_sift(view, max_keypoints)))
            if min(len(d) for _, (d, _) in items) < min_keypoints:
                counts[name] -= 1  # a flat window (sky, background): too few keypoints to be an instance
                continue
            for level, item in items:
                if level == "query":
                    q_items.append(item)
                    q_inst.append(inst)
                else:
                    d_items.append(item)
                    d_inst.append(inst)
                    d_diff.append(level)
            inst += 1
    if inst == 0:
        raise DataError(f"domain {domain!r}: no instance fits windows of {window} px with >= {min_keypoints} keypoints")

    def views(items: list[tuple[np.ndarray, np.ndarray]], ids: list[int], diff: list[str]) -> Views:
        desc, xy, mask = _pack(items, max_keypoints)
        glob = (desc * mask[..., None]).sum(1)
        glob /= np.maximum(np.linalg.norm(glob, axis=1, keepdims=True), 1e-12)
        return Views(desc, xy, mask, glob.astype(np.float32), np.asarray(ids, np.int64), diff)

    queries = views(q_items, q_inst, ["query"] * len(q_inst))
    database = views(d_items, d_inst, d_diff)
    return RetrievalSet(domain, queries, database, counts)


def retrieval_benchmark(
    domains: tuple[str, ...] = tuple(DOMAINS),
    *,
    window: int = 96,
    out_size: int = 128,
    short_side: int = 448,
    views_per_instance: int = 4,
    max_keypoints: int = 128,
    seed: int = 0,
) -> dict[str, RetrievalSet]:
    """Every domain of :data:`DOMAINS` (or the ones named) as a :class:`RetrievalSet`."""
    unknown = [d for d in domains if d not in DOMAINS]
    if unknown:
        raise DataError(f"unknown retrieval domain(s) {unknown}; known: {', '.join(DOMAINS)}")
    return {
        d: make_domain(
            d,
            load_sources(DOMAINS[d], short_side),
            window=window,
            out_size=out_size,
            views_per_instance=views_per_instance,
            max_keypoints=max_keypoints,
            seed=seed + 1000 * i,
        )
        for i, d in enumerate(domains)
    }


register_dataset(
    "skimage-retrieval",
    retrieval_benchmark,
    description="instance retrieval from scikit-image's photographs: warped/photometric views, 4 domains",
    offline=True,
    kind="retrieval",
)
