"""The pinned wheel whose data files this domain reads (entry point ``iclr26.wheels``; see
:mod:`iclr26_shared.wheeldata`): fetched by sha256 on first use, never installed or imported."""

from __future__ import annotations

from iclr26_shared.wheeldata import PinnedWheel

__all__ = ["GRASPOLOGIC", "WHEELS"]

#: graspologic 3.4.4 (MIT) ships the Drosophila larva mushroom-body connectome (Eichler et al. 2017) and the
#: mouse DTI connectomes (Wang et al. 2020); its code and pins (numpy<2, gensim, numba, ...) are never installed.
GRASPOLOGIC = PinnedWheel(
    name="graspologic",
    version="3.4.4",
    filename="graspologic-3.4.4-py3-none-any.whl",
    sha256="4ea5cd50f10eaff3fa90f18a8f66b1f5f42c724ac6aeb95e9f081632fc8d2d00",
    members=("graspologic/datasets/drosophila/", "graspologic/datasets/mice/"),
    size=5200993,
    what="drosophila and mouse DTI connectomes as graspologic 3.4.4 (MIT) ships them",
)

WHEELS = (GRASPOLOGIC,)
