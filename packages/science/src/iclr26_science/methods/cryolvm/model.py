"""The networks of a ``cryolvm`` run, built from its config: the SCUNet3D and its JEPA pre-training wrapper."""

from __future__ import annotations

from iclr26_science.cryoem import JEPA3D, SCUNet3D
from iclr26_science.methods.cryolvm.config import CryoLVMConfig

__all__ = ["build_jepa", "build_unet", "copy_encoder"]


def build_unet(cfg: CryoLVMConfig) -> SCUNet3D:
    """The restoration network (1 channel in, 1 out)."""
    return SCUNet3D(
        1,
        1,
        dim=cfg.dim,
        depths=cfg.depths,
        head_dim=cfg.head_dim,
        window=cfg.window,
        residual=cfg.residual,
        apix=cfg.apix,
        crop=cfg.crop,
    )


def build_jepa(cfg: CryoLVMConfig, backbone: SCUNet3D) -> JEPA3D:
    """JEPA around ``backbone``'s encoder for ``crop³`` inputs (one token per ``2^L`` patch)."""
    g = cfg.crop // 2**backbone.levels
    return JEPA3D(
        backbone, (g, g, g), embed_dim=cfg.embed_dim, predictor_dim=cfg.predictor_dim,
        predictor_depth=cfg.predictor_depth, predictor_heads=cfg.predictor_heads, beta=cfg.smooth_l1_beta,
        vc_weight=cfg.jepa_vc_weight, context_input=cfg.jepa_context,
    )  # fmt: skip


def copy_encoder(source: SCUNet3D, dest: SCUNet3D) -> int:
    """Copy the encoder weights (head, down stages, body) of ``source`` into ``dest``; returns how many tensors."""
    n = 0
    for a, b in zip(source.encoder_modules(), dest.encoder_modules(), strict=True):
        b.load_state_dict(a.state_dict())
        n += len(a.state_dict())
    return n
