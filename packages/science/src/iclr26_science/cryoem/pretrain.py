"""JEPA pre-training of a restoration network's encoder on your own density maps (CryoLVM §3.1).

``pretrain(network, maps)``:

1. read each map (a :class:`~iclr26_science.cryoem.mrc.DensityMap`, an MRC path read with ``mrcfile``, or an
   array/tensor ``[D, H, W]`` / ``[1, D, H, W]`` already at the network's voxel size and in ``[z, y, x]``
   order); resample maps with a voxel size to ``network.apix`` (a network built without one is trained at the
   first map's, as :func:`~iclr26_science.cryoem.finetune.fine_tune` does) and scale each to ``[0, 1]``
   (:func:`~iclr26_science.cryoem.pairs.scale_positive`);
2. wrap ``network``'s encoder in :class:`~iclr26_science.cryoem.jepa.JEPA3D` (context encoder = the network's
   patch embedding + down stages + body, an EMA target twin, a small transformer predictor);
3. for ``steps`` steps draw ``batch_size`` random ``crop³`` crops holding density, sample I-JEPA's
   context/target patch blocks, take an AdamW step on the smooth-L1 distance between the predicted and the
   target encoder's (layer-normed) target-patch tokens, and move the target encoder by EMA (momentum
   cosine from ``ema_start`` to 1).

This is the ``cryolvm`` method's pre-training phase (``methods/cryolvm/train.py: pretrain``) without its run
directory. The network is trained in place (its decoder is untouched) and returned in eval mode with
``network.history`` (one row per step: ``step``, ``loss``, ``momentum``); ``save_to=folder`` writes it with
``save_pretrained`` (``SCUNet3D.from_pretrained(folder)`` reads it back); fine-tune it next on map pairs
with :func:`~iclr26_science.cryoem.finetune.fine_tune`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import annotated_types as at
import numpy as np
import torch

from iclr26_science.cryoem._inputs import map_list, read_checked
from iclr26_science.cryoem.finetune import MapPair
from iclr26_science.cryoem.jepa import JEPA3D, ema_momentum, sample_masks
from iclr26_science.cryoem.mrc import DensityMap
from iclr26_science.cryoem.pairs import random_crops, scale_positive
from iclr26_science.cryoem.restore import checked_apix, resample
from iclr26_science.cryoem.scunet import SCUNet3D
from iclr26_shared.config import NonNegFloat, NonNegInt, PosFloat, PosInt, validate
from iclr26_shared.errors import ConfigError, DataError
from iclr26_shared.progress import ProgressBar

__all__ = ["PretrainSettings", "pretrain", "pretrain_maps"]


@dataclass(frozen=True)
class PretrainSettings:
    """The JEPA pre-training recipe (the ``cryolvm`` method's defaults)."""

    steps: PosInt = 2000
    """AdamW steps."""
    lr: PosFloat = 1e-3
    """AdamW learning rate."""
    weight_decay: NonNegFloat = 0.05
    """AdamW weight decay."""
    batch_size: PosInt = 8
    """Crops per step."""
    crop: NonNegInt = 0
    """Crop edge in voxels (0: ``network.crop``, else 48, the paper's); a multiple of the network's ``2^L``."""
    embed_dim: Annotated[int, at.Ge(6)] = 128
    """Token width of the JEPA embedding."""
    predictor_dim: Annotated[int, at.Ge(6)] = 128
    """Predictor width."""
    predictor_depth: PosInt = 3
    """Predictor transformer layers."""
    predictor_heads: PosInt = 4
    """Predictor attention heads (a divisor of ``predictor_dim``)."""
    targets: PosInt = 4
    """Target blocks per sample (I-JEPA: 4)."""
    ema_start: Annotated[float, at.Interval(ge=0, le=1)] = 0.996
    """EMA momentum at step 0 (cosine to 1)."""
    smooth_l1_beta: PosFloat = 1.0
    """β of the smooth-L1 loss."""
    context_input: Literal["zero-input", "drop-tokens"] = "zero-input"
    """What the context encoder sees (see :class:`~iclr26_science.cryoem.jepa.JEPA3D`)."""
    min_density: Annotated[float, at.Interval(ge=0, le=1)] = 0.5
    """A crop must reach this scaled density somewhere (crops hold density, not solvent)."""
    seed: NonNegInt = 0
    """Seed of the JEPA heads' initialisation, the crops and the masks."""

    def __post_init__(self) -> None:
        validate(self)
        if self.predictor_dim % self.predictor_heads:
            want = f"a divisor of predictor_dim = {self.predictor_dim}"
            raise ConfigError("predictor_heads", self.predictor_heads, want)


def _volume(m: Any, where: str) -> tuple[np.ndarray, float | None]:
    """A map's ``[z, y, x]`` values and its voxel size (None for a bare array/tensor)."""
    dm = read_checked(m, where)
    if dm is not None:
        return dm.data, checked_apix(dm, where)
    if isinstance(m, torch.Tensor):
        m = m.detach().cpu().numpy()
    if not isinstance(m, np.ndarray):
        raise DataError(f"{where}: expected a DensityMap, an MRC path, or an array/tensor [D, H, W], got "
                        f"{type(m).__name__}")  # fmt: skip
    arr = m[0] if m.ndim == 4 and m.shape[0] == 1 else m
    if arr.ndim != 3:
        raise DataError(f"{where}: expected a 3-D map [D, H, W] (or [1, D, H, W]), got shape {tuple(m.shape)}")
    arr = np.asarray(arr, dtype=np.float32)
    if not np.isfinite(arr).all():
        raise DataError(f"{where}: {int((~np.isfinite(arr)).sum())} NaN/inf voxels")
    return arr, None


def pretrain_maps(maps: Sequence[Any], apix: float | None, crop: int) -> tuple[list[MapPair], float | None]:
    """Step 1 of the module docstring: the scaled maps (as unlabelled :class:`MapPair` s, ``y = x``) at ``apix``
    (default the first map's that has one) and the voxel size used; a map smaller than ``crop`` on an axis
    after resampling, a constant map, or an empty list is a one-line DataError naming it."""
    maps = map_list(maps, "pretrain", "maps")
    out: list[MapPair] = []
    for i, m in enumerate(maps):
        where = f"maps[{i}]" + (f" ({m})" if isinstance(m, str | Path) else "")
        arr, size = _volume(m, where)
        if size is not None:
            apix = apix or size
            arr = resample(DensityMap(arr, (size, size, size)), apix).data
        if min(arr.shape) < crop:
            raise DataError(f"{where}: map of shape {arr.shape} (at the network's voxel size {apix} Å) is smaller "
                            f"than the crop {crop} on an axis: pad it or lower the crop")  # fmt: skip
        if float(arr.max() - arr.min()) <= 0:
            raise DataError(f"{where}: the map is constant (no density to learn from)")
        x = scale_positive(arr)
        out.append(MapPair(where, x, x))
    return out, apix


def pretrain(
    network: SCUNet3D,
    maps: Sequence[DensityMap | str | Path | np.ndarray | torch.Tensor],
    settings: PretrainSettings | None = None,
    *,
    device: str | torch.device = "cpu",
    progress: bool = True,
    callback: Callable[[dict[str, float]], bool | None] | None = None,
    save_to: str | Path | None = None,
) -> SCUNet3D:
    """JEPA-pre-train ``network``'s encoder on ``maps`` in place (see the module docstring).

    Args:
        network: The restoration network (a fresh :class:`SCUNet3D` or ``SCUNet3D.from_pretrained(folder)``).
        maps: Your density maps: DensityMaps, MRC paths, or arrays/tensors at the network's voxel size.
        settings: The recipe (default :class:`PretrainSettings`, the method's).
        device: Where to train.
        progress: Show a progress bar (a log line every 10 s when stderr is not a terminal).
        callback: Called with each step's row; returning True stops there.
        save_to: A folder to ``save_pretrained`` the result into.

    Returns:
        ``network`` in eval mode, with ``network.history`` (per step: ``step``, ``loss``, ``momentum``).
    """
    s = settings or PretrainSettings()
    f = 2**network.levels
    crop = int(s.crop or network.crop or 48)
    if crop % f:
        raise DataError(f"pretrain: crop {crop} must be a multiple of the network's 2^L = {f}")
    pairs, _ = pretrain_maps(maps, network.apix, crop)
    dev = torch.device(device)
    torch.manual_seed(s.seed)
    g = crop // f
    jepa = JEPA3D(
        network, (g, g, g), embed_dim=s.embed_dim, predictor_dim=s.predictor_dim, predictor_depth=s.predictor_depth,
        predictor_heads=s.predictor_heads, beta=s.smooth_l1_beta, context_input=s.context_input,
    ).to(dev)  # fmt: skip
    opt = torch.optim.AdamW(jepa.online_parameters(), lr=s.lr, weight_decay=s.weight_decay)
    rng = np.random.default_rng(s.seed * 7919 + 11)
    history: list[dict[str, float]] = []
    try:
        with ProgressBar(s.steps, "cryolvm pretrain", quiet=not progress) as bar:
            for step in range(s.steps):
                x, _ = random_crops(pairs, crop, s.batch_size, rng, min_target=s.min_density)
                ctx, tgt = sample_masks(jepa.grid, rng, targets=s.targets)
                jepa.train()
                loss = jepa(torch.from_numpy(x).to(dev), ctx.to(dev), tgt.to(dev))
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                momentum = ema_momentum(step + 1, s.steps, s.ema_start)
                jepa.update_target(momentum)
                row = {"step": float(step), "loss": float(loss.detach()), "momentum": momentum}
                history.append(row)
                bar.advance(loss=row["loss"])
                if callback is not None and callback(row):
                    break
    finally:
        for part in (network.up, network.tail):  # JEPA3D froze the decoder; give the network back trainable
            part.requires_grad_(True)
    network.history = history
    network.eval()
    if save_to is not None:
        network.save_pretrained(save_to)
    return network
