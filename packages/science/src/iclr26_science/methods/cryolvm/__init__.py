"""CryoLVM: *Self-supervised Learning from Cryo-EM Density Maps with Large Vision Models* (ICLR 2026,
arXiv 2602.02620): a 3-D JEPA-pre-trained Swin-Conv-UNet restores density maps (sharpening,
super-resolution, missing wedge). Light: the spec and config import no torch."""

__all__: list[str] = []
