"""CryoLVM library: cryo-EM density maps (I/O, simulation, metrics, baselines) and the 3-D networks.

Public API::

    from iclr26_science.cryoem import load_structure, molmap, fsc, fsc_resolution, cc, read_map, write_map
    atoms = load_structure("1hvr")                     # a PDB from MDAnalysisTests' data (a pinned sdist)
    target = molmap(atoms, resolution=4.0, apix=1.5)   # Chimera molmap's Gaussian model
    freqs, curve = fsc(prediction, target.data, apix=1.5)
    res = fsc_resolution(freqs, curve, 0.5)            # Å
    model = molmap(atoms, 4.0, grid=my_map)            # a model map on a map's own grid
    restored = restore(my_map, net)                    # a trained SCUNet3D on a whole map (tiled)
    fine_tune([my_map], [model], net)                  # train it further on your own map pairs
    pretrain(net, ["a.mrc", "b.mrc"], save_to="pre/")  # JEPA pre-training of its encoder on your own maps

Needs the ``cryoem`` extra (mrcfile, MDAnalysis); without it, importing this package
raises :class:`~iclr26_science._extras.MissingExtraError` naming the extra.
"""

# ruff: noqa: E402  (the extra is checked before the subpackages import its libraries)
from iclr26_science._extras import require

require("cryoem", __name__)

from iclr26_science.cryoem.baselines import WienerFilter, global_sharpen, guinier_bfactor, local_scale
from iclr26_science.cryoem.finetune import FineTuneSettings, MapPair, fine_tune, map_pairs
from iclr26_science.cryoem.jepa import (
    JEPA3D,
    ema_momentum,
    sample_masks,
    sincos_3d,
    token_spread,
    variance_covariance_penalty,
)
from iclr26_science.cryoem.losses import histogram_js, restoration_loss, soft_histogram
from iclr26_science.cryoem.metrics import (
    amplitude_deviation,
    atom_mask,
    cc,
    fsc,
    fsc_resolution,
    radial_amplitude,
    relative_bfactor,
    shell_index,
)
from iclr26_science.cryoem.mrc import REAL_MODES, DensityMap, read_map, write_map
from iclr26_science.cryoem.pairs import (
    TASKS,
    Degradation,
    Pair,
    make_pair,
    normalise,
    random_crops,
    scale_positive,
)
from iclr26_science.cryoem.pretrain import PretrainSettings, pretrain, pretrain_maps
from iclr26_science.cryoem.restore import VOXEL_RANGE, checked_apix, resample, restore
from iclr26_science.cryoem.scunet import (
    FRN3d,
    SCBlock3d,
    SCUNet3D,
    SwinBlock3d,
    WindowAttention3d,
    naive_window_attention,
)
from iclr26_science.cryoem.simulate import (
    MOLMAP_SIGMA_FACTOR,
    add_noise,
    apply_bfactor,
    apply_missing_wedge,
    box_for,
    frequency_grid,
    lowpass,
    missing_wedge_mask,
    molmap,
)
from iclr26_science.cryoem.structures import ATOMIC_NUMBERS, STRUCTURES, Atoms, adk_frames, load_structure
from iclr26_science.cryoem.tiling import gaussian_window, tile_starts, tiled_inference

__all__ = [
    "VOXEL_RANGE",
    "checked_apix",
    "PretrainSettings",
    "pretrain",
    "pretrain_maps",
    "ATOMIC_NUMBERS",
    "FRN3d",
    "FineTuneSettings",
    "MapPair",
    "TASKS",
    "Degradation",
    "Pair",
    "make_pair",
    "normalise",
    "random_crops",
    "scale_positive",
    "JEPA3D",
    "SCBlock3d",
    "SCUNet3D",
    "SwinBlock3d",
    "WindowAttention3d",
    "ema_momentum",
    "histogram_js",
    "naive_window_attention",
    "restoration_loss",
    "sample_masks",
    "sincos_3d",
    "soft_histogram",
    "token_spread",
    "variance_covariance_penalty",
    "WienerFilter",
    "MOLMAP_SIGMA_FACTOR",
    "REAL_MODES",
    "STRUCTURES",
    "Atoms",
    "DensityMap",
    "add_noise",
    "adk_frames",
    "apply_bfactor",
    "apply_missing_wedge",
    "amplitude_deviation",
    "atom_mask",
    "box_for",
    "cc",
    "fine_tune",
    "frequency_grid",
    "fsc",
    "fsc_resolution",
    "gaussian_window",
    "global_sharpen",
    "guinier_bfactor",
    "load_structure",
    "local_scale",
    "lowpass",
    "map_pairs",
    "missing_wedge_mask",
    "molmap",
    "radial_amplitude",
    "read_map",
    "relative_bfactor",
    "resample",
    "restore",
    "shell_index",
    "tile_starts",
    "tiled_inference",
    "write_map",
]
