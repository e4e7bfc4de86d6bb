"""Real node-classification graphs from the ``graspologic`` 3.4.4 wheel (its data files only).

* ``drosophila-left`` / ``drosophila-right``: the larval *Drosophila* mushroom-body connectome
  (Eichler et al. 2017): 209 / 213 neurons, directed synapse counts; labels are the cell types
  Kenyon cell (K), input (I), output (O) and projection neuron (P). The wheel ships no node features,
  so the features are the adjacency spectral embedding (ASE, graspologic's standard): the top
  ``dim`` left and right singular vectors of ``log(1 + A)`` scaled by the square roots of the
  singular values (``[n, 2·dim]``).
* ``mouse-dti``: a mouse DTI connectome (sub-54776 of the graspologic ``mice`` set): 332 brain regions
  (166 per hemisphere), streamline counts as edges (each region keeps its ``topk`` strongest
  connections, made symmetric); labels are the 7 macro-structures of ``blocks.csv`` (isocortex,
  pallium, subpallium, diencephalon, midbrain, hindbrain, white matter); features are the region's
  diffusion statistics (log volume, ADC, DWI, the three eigenvalues, FA, RD; z-scored).

graspologic's code is never installed or imported: the pinned wheel's data files are fetched once into the
data cache by sha256 (:mod:`iclr26_shared.wheeldata`, :data:`iclr26_graphs.wheels.GRASPOLOGIC`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from iclr26_graphs.wheels import GRASPOLOGIC
from iclr26_shared.errors import DataError
from iclr26_shared.wheeldata import wheel_path

__all__ = ["load_drosophila", "load_mouse_dti"]

MOUSE_BLOCKS = ("isocortex", "pallium", "subpallium", "diencephalon", "midbrain", "hindbrain", "white_matter")


def _ase(a: np.ndarray, dim: int) -> np.ndarray:
    u, s, vt = np.linalg.svd(np.log1p(a.astype(np.float64)))
    dim = min(dim, len(s))
    scale = np.sqrt(s[:dim])
    return np.concatenate([u[:, :dim] * scale, vt[:dim].T * scale], axis=1)


def load_drosophila(
    side: str = "left", dim: int = 16
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, tuple[str, ...]]:
    """The left or right mushroom-body connectome: ``(x [n, 2·dim], edge_index [2, 2M], y [n], classes)``."""
    if side not in ("left", "right"):
        raise DataError(f"drosophila side {side!r}: expected 'left' or 'right'")
    root = wheel_path(GRASPOLOGIC, "graspologic", "datasets", "drosophila", purpose="the drosophila connectome")
    adj_path, lab_path = root / f"{side}_adjacency.csv", root / f"{side}_cell_labels.csv"
    try:
        a = np.loadtxt(adj_path, dtype=np.int64)
        labels = np.loadtxt(lab_path, dtype=str)
    except (OSError, ValueError) as err:
        raise DataError(f"cannot read {adj_path} / {lab_path}: {err}") from None
    if a.ndim != 2 or a.shape[0] != a.shape[1] or (a < 0).any():
        raise DataError(f"{adj_path}: expected a square non-negative count matrix, got shape {a.shape}")
    if labels.shape != (a.shape[0],):
        raise DataError(f"{lab_path}: expected {a.shape[0]} labels, got shape {labels.shape}")
    classes = tuple(sorted(set(labels.tolist())))
    y = torch.as_tensor(np.searchsorted(np.array(classes), labels), dtype=torch.long)
    sym = (a + a.T) > 0
    np.fill_diagonal(sym, False)
    src, dst = np.nonzero(sym)
    x = torch.as_tensor(_ase(a, dim), dtype=torch.float32)
    x = (x - x.mean(0)) / x.std(0).clamp(min=1e-8)
    return x, torch.as_tensor(np.stack([src, dst]), dtype=torch.long), y, classes


def _mouse_features(path: Path, n: int) -> np.ndarray:
    try:
        raw = np.genfromtxt(path, delimiter=",", skip_header=3)
    except (OSError, ValueError) as err:
        raise DataError(f"cannot read {path}: {err}") from None
    if raw.ndim != 2 or raw.shape[1] != 10:
        raise DataError(f"{path}: expected rows ROI,voxels,volume_mm3,adc,dwi,e1,e2,e3,fa,rd; got shape {raw.shape}")
    roi = raw[:, 0].astype(int)
    # node i < 166 is left ROI i + 1; node i ≥ 166 is right ROI 1000 + (i − 166) + 1 (atlas DB2_symmetric)
    want = np.concatenate([np.arange(1, n // 2 + 1), 1000 + np.arange(1, n // 2 + 1)])
    index = {r: k for k, r in enumerate(roi)}
    missing = [int(r) for r in want if r not in index]
    if missing:
        raise DataError(f"{path}: ROIs {missing[:5]} are missing")
    feats = raw[[index[r] for r in want], 2:]  # volume_mm3 .. rd
    feats[:, 0] = np.log(feats[:, 0])
    if not np.isfinite(feats).all():
        raise DataError(f"{path}: non-finite feature values")
    return (feats - feats.mean(0)) / np.maximum(feats.std(0), 1e-12)


def load_mouse_dti(
    subject: str = "54776", topk: int = 10
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, tuple[str, ...]]:
    """A mouse DTI connectome: ``(x [332, 8], edge_index, y [332] in 7 macro-structures, classes)``."""
    root = wheel_path(GRASPOLOGIC, "graspologic", "datasets", "mice", purpose="the mouse DTI connectomes")
    edges_path = root / "edgelists" / f"sub-{subject}_ses-1_dti.edgelist"
    blocks_path = root / "blocks.csv"
    if not edges_path.is_file():
        raise DataError(f"mouse subject {subject!r}: {edges_path} does not exist")
    blocks = np.genfromtxt(blocks_path, delimiter=",", dtype=str, skip_header=1)
    if blocks.ndim != 2 or blocks.shape[1] != 4:
        raise DataError(f"{blocks_path}: expected columns block,hemisphere,i,j")
    n = int(blocks[:, 3].astype(int).max())
    y = np.full(n, -1)
    for name, _, i, j in blocks:
        y[int(i) : int(j)] = MOUSE_BLOCKS.index(name)
    if (y < 0).any():
        raise DataError(f"{blocks_path}: the blocks do not cover all {n} regions")
    try:
        el = np.loadtxt(edges_path)
    except (OSError, ValueError) as err:
        raise DataError(f"cannot read {edges_path}: {err}") from None
    if el.ndim != 2 or el.shape[1] != 3 or el[:, :2].max() >= n or el[:, :2].min() < 0:
        raise DataError(f"{edges_path}: expected 'i j weight' rows with ids in [0, {n})")
    w = np.zeros((n, n))
    i, j = el[:, 0].astype(int), el[:, 1].astype(int)
    np.maximum.at(w, (i, j), el[:, 2])
    w = np.maximum(w, w.T)
    np.fill_diagonal(w, 0)
    keep = np.zeros_like(w, dtype=bool)
    top = np.argsort(-w, axis=1)[:, :topk]
    keep[np.arange(n)[:, None], top] = True
    keep &= w > 0
    keep |= keep.T
    src, dst = np.nonzero(keep)
    x = _mouse_features(root / "features" / f"{subject}.csv", n)
    return (
        torch.as_tensor(x, dtype=torch.float32),
        torch.as_tensor(np.stack([src, dst]), dtype=torch.long),
        torch.as_tensor(y, dtype=torch.long),
        MOUSE_BLOCKS,
    )
