"""Opt-in DINOv2 local descriptors for the ELViS benchmark (the paper's backbone), from local weights only.

The paper describes each image by the ``N`` patch tokens of DINOv2's last layer (ℓ2-normalised, ``D = 768``
for ViT-B/14, N ≤ 700) and the CLS token as its global descriptor. Here an image view ``[H, W]`` (grey,
uint8) is replicated to RGB, resized to the nearest multiple of the patch size ``p``
(``H' = p·round(H/p)``), normalised with the ImageNet mean/std, and run through a Hugging Face
``Dinov2Model``; the patch tokens ``last_hidden_state[:, 1:]`` ``[(H'/p)·(W'/p), D]`` are the local
descriptors, their ``xy`` the patch centres in the view's pixel frame (for RANSAC). When there are more
than ``max_keypoints`` patches, ``select`` picks which are kept, as ``elvis/extract/extract.py``
(``process_image_batches`` + ``get_local``) does with ``torch.topk`` (highest weight first):

* ``"cls"`` (default): the official code's weight when it runs without its trained detector,
  ``w_n = cos(CLS, t_n)`` (``einsum('qd,qdji->qji', cls, normalize(feats))``), the top ``max_keypoints``
  in descending weight;
* ``"detector"``: the paper's pipeline, the weight of its trained ``SpatialAttention2d`` detector
  (:class:`SpatialAttention2d`, a port of ``extract/spatial_attention_2d.py``: 1×1 conv → BatchNorm →
  ReLU → 1×1 conv → softplus on the ``[1, D, H'/p, W'/p]`` token map), top-k in descending weight; the
  descriptors stay the ℓ2-normalised tokens, as in the official code. Its weights are the authors'
  ``<desc_name>_detector.pt`` (a ``{"state": state_dict}`` file the official extractor downloads), read
  here only from a local file (:func:`load_detector`);
* ``"norm"``: the largest token norms, kept in patch order (a saliency proxy; this package's earlier rule).

The global descriptor stays the benchmark's mean of local descriptors.

Weights are never downloaded: :func:`load_dinov2` reads a local checkpoint folder (``config.json`` and
``model.safetensors``/``pytorch_model.bin``, as written by ``save_pretrained``) or a model id that is
already in the Hugging Face cache, with ``local_files_only=True``; anything else is one
:class:`~iclr26_shared.errors.DataError` line saying what to put where.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from iclr26_shared.errors import DataError

if TYPE_CHECKING:
    from transformers import Dinov2Model

__all__ = ["DEFAULT_DINOV2", "SpatialAttention2d", "dinov2_describe", "load_detector", "load_dinov2"]

#: The model id looked up in the Hugging Face cache when no path is given (ViT-S/14; the paper uses ViT-B/14).
DEFAULT_DINOV2 = "facebook/dinov2-small"
_MEAN = (0.485, 0.456, 0.406)
_STD = (0.229, 0.224, 0.225)


def load_dinov2(source: str | None) -> Dinov2Model:
    """A ``Dinov2Model`` (eval mode) from a local folder or the Hugging Face cache; never downloads.

    ``source``: a folder holding a saved checkpoint, or a model id (default :data:`DEFAULT_DINOV2`) that must
    already be in the local Hugging Face cache. Raises one ``DataError`` line when neither is there.
    """
    try:
        from transformers import Dinov2Model
        from transformers.utils import logging as hf_logging
    except ImportError as err:  # pragma: no cover - transformers is a dependency of this package's env
        raise DataError("descriptor=dinov2 needs the 'transformers' package") from err
    hf_logging.disable_progress_bar()
    if source is None:
        name = DEFAULT_DINOV2
    elif Path(source).expanduser().exists():
        path = Path(source).expanduser()
        if not (path / "config.json").is_file():
            raise DataError(
                f"DINOv2 weights not found: {path} must be a folder with config.json and model.safetensors "
                "(a Hugging Face Dinov2Model saved with save_pretrained); pass that folder as --dinov2-weights"
            )
        name = str(path)
    elif source.count("/") == 1 and not source.startswith((".", "/", "~")):
        name = source  # a model id, looked up in the local Hugging Face cache only
    else:
        raise DataError(
            f"DINOv2 weights not found: no folder {source}; put a Dinov2Model folder (config.json + "
            "model.safetensors) there or pass another one as --dinov2-weights"
        )
    try:
        model = Dinov2Model.from_pretrained(name, local_files_only=True)
    except (OSError, ValueError) as err:
        raise DataError(
            f"DINOv2 weights not found: '{name}' is neither a local checkpoint folder nor in the Hugging Face "
            "cache (no downloads here); put a Dinov2Model folder (config.json + model.safetensors, e.g. "
            f"{DEFAULT_DINOV2}) on this machine and pass --dinov2-weights PATH"
        ) from err
    if not isinstance(model, Dinov2Model):  # pragma: no cover - from_pretrained returns the class it is called on
        raise DataError(f"'{name}' did not load as a Dinov2Model")
    return model.eval()


class SpatialAttention2d(nn.Module):
    """The official patch detector, ported with its names (``extract/spatial_attention_2d.py``, which ELViS's
    ``extract/extract_descriptors.py`` imports; read in pavelsuma/ames, the same authors' code).

    ``x [B, C, h, w] → (normalize(BN(conv1 x)) [B, C, h, w], softplus(conv2(ReLU(BN(conv1 x)))) [B, 1, h, w])``
    with 1×1 convolutions ``conv1: C → C`` and ``conv2: C → 1`` (both with bias), ``BatchNorm2d(C, eps=1e-5,
    momentum=0.1)`` and ``Softplus(beta=1, threshold=20)``; the convolution weights start from N(0, 2/fan_out)
    with fan_out = out_channels (ResNet-style, as the official ``init_weights``). The state-dict keys are the
    official ones (``conv1.*``, ``bn.*``, ``conv2.*``), so the authors' checkpoint loads with ``strict=True``.
    """

    def __init__(self, in_c: int, bn_eps: float = 1e-5, bn_mom: float = 0.1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_c, in_c, 1, 1)
        self.bn = nn.BatchNorm2d(in_c, eps=bn_eps, momentum=bn_mom)
        self.act1 = nn.ReLU()
        self.conv2 = nn.Conv2d(in_c, 1, 1, 1)
        self.softplus = nn.Softplus(beta=1, threshold=20)
        for conv in (self.conv1, self.conv2):
            conv.weight.data.normal_(mean=0.0, std=(2.0 / conv.out_channels) ** 0.5)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """``(ℓ2-normalised BN features, softplus attention score)`` of a token map ``x [B, C, h, w]``."""
        x = self.bn(self.conv1(x))
        return F.normalize(x, p=2, dim=1, eps=1e-15), self.softplus(self.conv2(self.act1(x)))


def load_detector(path: str | Path, dim: int) -> SpatialAttention2d:
    """The trained :class:`SpatialAttention2d` for ``dim``-wide tokens from a local file (eval mode).

    The file is the authors' detector checkpoint (``{"state": state_dict}``, as the official extractor reads
    it) or a bare state dict, read with ``weights_only=True`` and loaded with ``strict=True``; nothing is
    downloaded. Raises one :class:`DataError` line when the file is absent or is not a detector of width ``dim``.
    """
    file = Path(path).expanduser()
    if not file.is_file():
        raise DataError(
            f"detector weights not found: no file {file} (the official <desc_name>_detector.pt; --dinov2-detector)"
        )
    try:
        ckpt = torch.load(file, map_location="cpu", weights_only=True)
        state = ckpt["state"] if isinstance(ckpt, dict) and "state" in ckpt else ckpt
        detector = SpatialAttention2d(dim)
        detector.load_state_dict(state, strict=True)
    except Exception as err:  # noqa: BLE001 - any unreadable file is the user's input
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise DataError(f"{file}: not a SpatialAttention2d detector for {dim}-d tokens ({first})") from err
    return detector.eval()


@torch.no_grad()
def dinov2_describe(
    model: Dinov2Model,
    img: np.ndarray,
    max_keypoints: int,
    select: Literal["cls", "detector", "norm"] = "cls",
    detector: SpatialAttention2d | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Patch-token descriptors ``[n, D]`` (unit rows, ``n ≤ max_keypoints``) of a grey view, and their ``xy [n, 2]``
    (``select``: which patches are kept, see the module docstring; ``"detector"`` needs ``detector``)."""
    if img.ndim != 2:
        raise DataError(f"dinov2_describe expects a grey image [H, W], got shape {img.shape}")
    if select == "detector" and detector is None:
        raise ValueError("select='detector' needs a detector (load_detector(path, dim))")
    patch = model.config.patch_size
    p = int(patch if isinstance(patch, int) else patch[0])  # Dinov2Config: an int (square patches)
    h, w = img.shape
    hp, wp = max(1, round(h / p)), max(1, round(w / p))
    x = torch.from_numpy(np.ascontiguousarray(img, dtype=np.float32) / 255.0)[None, None].expand(1, 3, h, w)
    x = F.interpolate(x, size=(hp * p, wp * p), mode="bilinear", align_corners=False)
    mean = torch.tensor(_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(_STD).view(1, 3, 1, 1)
    dtype = next(model.parameters()).dtype
    hidden = model(pixel_values=((x - mean) / std).to(dtype)).last_hidden_state[0].float()  # [1 + hp·wp, D]
    cls, tokens = hidden[0], hidden[1:]
    ys, xs = np.meshgrid(np.arange(hp), np.arange(wp), indexing="ij")
    xy = np.stack([(xs.ravel() + 0.5) * w / wp, (ys.ravel() + 0.5) * h / hp], 1).astype(np.float32)
    if select == "cls":  # official: w = <normalize(cls), normalize(t_n)>, torch.topk (descending weight)
        weights = F.normalize(tokens, dim=1) @ F.normalize(cls, dim=0)
        keep = torch.topk(weights, k=min(max_keypoints, len(weights))).indices
    elif select == "detector":  # official: _, w = detector(feats [1, D, hp, wp]); topk of w.flatten (row-major)
        assert detector is not None
        token_map = tokens.T.reshape(1, tokens.shape[1], hp, wp)
        weights = detector(token_map.to(next(detector.parameters()).dtype))[1].flatten().float()
        keep = torch.topk(weights, k=min(max_keypoints, len(weights))).indices
    else:
        norms = tokens.norm(dim=1)
        keep = torch.argsort(norms, descending=True, stable=True)[:max_keypoints].sort().values
    desc = F.normalize(tokens[keep], dim=1)
    return desc.numpy().astype(np.float32), xy[keep.numpy()]
