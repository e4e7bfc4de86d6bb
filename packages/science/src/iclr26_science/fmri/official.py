"""Load the official Brain-Semantoks weights (SamGijsen/Brain-Semantoks, ``model.pth``) into :class:`SemantoksEncoder`.

The official checkpoint (``main.py``) holds ``{"model_state_dict": SimDINOModel.state_dict(), ...}``; its
``teacher_encoder.`` / ``student_encoder.`` entries are the ``CNN_TF`` backbone (the paper probes the
teacher). Read from a local file or folder only (download the file yourself; nothing is fetched here).

Name and layout map (official → ours), per network ``n`` and block ``i``:

* ``network_tokenizers.<atlas>.<n>.branches.0`` (dense ``Conv1d(|R_n| → D/2, k 3)``) →
  ``tokenizer.tokenizers.<n>.conv``;
* ``...branches.1.slconv.kernel_list.<j>`` / ``.D`` / ``.kernel_norm`` → ``...slconv.pieces.<j>`` / ``.skip`` /
  ``.kernel_norm``; the official ``multiplier`` buffer must be the constant decay (2 in the paper);
* ``...branches.1.projection`` → ``...mix``, **columns permuted**: the official SLConv emits channel-major
  features (index ``c·H + h``), ours head-major (``h·|R_n| + c``);
* ``...norm`` → ``...norm``; ``inter_network_transformer.cls_token`` → ``cls``; ``.mask_embedding`` →
  ``mask_token``; ``.network_learnable_pos_embedding.weight`` → ``net_embed``; the sin-cos
  ``temporal_pos_embedding`` is the same formula (not copied; its length gives the patch count);
* ``transformer_blocks.<i>``: ``norm1``, ``attn.qkv`` (no bias), ``attn.proj``, ``norm2``, ``mlp.0`` / ``mlp.3``
  → ``mlp.0`` / ``mlp.2``, ``ls1.gamma`` / ``ls2.gamma`` → ``gamma1`` / ``gamma2`` (1 without LayerScale);
* the backbone's final ``norm`` → ``norm`` (the transformer's own ``norm`` is unused in the official forward).

Heads are not stored in the weights: the official rule is ``D / 64`` (``main.py``), the default here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import torch

from iclr26_science.fmri.networks import NetworkMap
from iclr26_science.fmri.semantoks import SemantoksEncoder
from iclr26_shared.errors import CheckpointError, DataError

__all__ = ["load_official_encoder", "official_to_ours"]

_TOK = re.compile(r"^network_tokenizers\.([^.]+)\.(\d+)\.")
_BLOCK = re.compile(r"^inter_network_transformer\.transformer_blocks\.(\d+)\.")


def _backbone(state: Mapping[str, torch.Tensor], source: str) -> dict[str, torch.Tensor]:
    """The ``CNN_TF`` entries of a SimDINOModel state dict (``module.`` and ``<source>_encoder.`` removed);
    a bare backbone state dict passes through."""
    out: dict[str, torch.Tensor] = {}
    prefix = f"{source}_encoder."
    for key, value in state.items():
        k = key[len("module.") :] if key.startswith("module.") else key
        if k.startswith(prefix):
            out[k[len(prefix) :]] = value
    if not out and any(k.startswith("inter_network_transformer.") for k in state):
        out = dict(state)
    if not out:
        raise CheckpointError(f"no {prefix}* (or bare CNN_TF) entries in the checkpoint")
    return out


def _get(sd: Mapping[str, torch.Tensor], key: str) -> torch.Tensor:
    if key not in sd:
        raise CheckpointError(f"official checkpoint: missing {key!r}")
    return sd[key]


def official_to_ours(
    sd: Mapping[str, torch.Tensor], groups: Sequence[Sequence[int]], *, heads: int | None = None, patch: int = 20
) -> SemantoksEncoder:
    """A :class:`SemantoksEncoder` holding the official ``CNN_TF`` weights ``sd`` (see the module docstring)
    for the ROI ``groups`` of the official network map (one per network, in label order)."""
    atlases = sorted({m.group(1) for k in sd if (m := _TOK.match(k))})
    if len(atlases) != 1:
        raise CheckpointError(f"official checkpoint: expected one tokenizer set, got {atlases or 'none'}")
    tok = f"network_tokenizers.{atlases[0]}"
    dim = int(_get(sd, "norm.weight").shape[0])
    n_net = int(_get(sd, "inter_network_transformer.network_learnable_pos_embedding.weight").shape[0])
    if n_net != len(groups):
        raise DataError(f"network map: {len(groups)} networks, the checkpoint was trained with {n_net}")
    for n, g in enumerate(groups):
        rois = int(_get(sd, f"{tok}.{n}.branches.0.weight").shape[1])
        if rois != len(g):
            raise DataError(f"network map: network {n} has {len(g)} ROIs, the checkpoint's tokenizer {rois}")
    depth = 1 + max((int(m.group(1)) for k in sd if (m := _BLOCK.match(k))), default=-1)
    patches = int(_get(sd, "inter_network_transformer.temporal_pos_embedding").shape[0])
    pieces = sorted({int(k.rsplit(".", 1)[1]) for k in sd if k.startswith(f"{tok}.0.branches.1.slconv.kernel_list.")})
    sl_kernel = int(_get(sd, f"{tok}.0.branches.1.slconv.kernel_list.0").shape[-1])
    mlp = int(_get(sd, "inter_network_transformer.transformer_blocks.0.mlp.0.weight").shape[0])
    dense_out = int(_get(sd, f"{tok}.0.branches.0.weight").shape[0])
    sl_out = int(_get(sd, f"{tok}.0.branches.1.projection.weight").shape[0])
    if (dense_out, sl_out) != (dim - dim // 2, dim // 2):
        raise CheckpointError(f"official checkpoint: branches of {dense_out} + {sl_out} channels, expected "
                              f"{dim - dim // 2} + {dim // 2} (a dense and an SLConv branch)")  # fmt: skip
    if any(k.endswith("qkv.bias") for k in sd):
        raise CheckpointError("official checkpoint: the qkv projections have a bias (the official code has none)")
    enc = SemantoksEncoder(
        groups, dim=dim, depth=depth, heads=heads or max(1, dim // 64), patch=patch, patches=patches,
        mlp_ratio=mlp / dim, sl_kernel=sl_kernel, sl_scales=len(pieces), qkv_bias=False,
    )  # fmt: skip
    ours: dict[str, torch.Tensor] = {}
    fresh: list[int] = []
    for n in range(len(groups)):
        src, dst = f"{tok}.{n}.", f"tokenizer.tokenizers.{n}."
        for p in ("weight", "bias"):
            ours[dst + f"conv.{p}"] = _get(sd, src + f"branches.0.{p}")
            ours[dst + f"norm.{p}"] = _get(sd, src + f"norm.{p}")
        sl = src + "branches.1.slconv."
        mult = _get(sd, sl + "multiplier")
        if not torch.allclose(mult, torch.full_like(mult, 2.0)):
            raise CheckpointError(f"official checkpoint: network {n}'s SLConv decay is not the constant 2")
        for j in pieces:
            ours[dst + f"slconv.pieces.{j}"] = _get(sd, sl + f"kernel_list.{j}")
        ours[dst + "slconv.skip"] = _get(sd, sl + "D")
        h, c = ours[dst + "slconv.skip"].shape
        if bool(sd.get(sl + "kernel_norm_initialized", torch.tensor(True))):
            ours[dst + "slconv.kernel_norm"] = _get(sd, sl + "kernel_norm")
        else:  # the official SLConv sets it from the kernel at its first forward: do that after loading
            fresh.append(n)
        w = _get(sd, src + "branches.1.projection.weight")  # [out, c·H + h] → [out, h·C + c]
        ours[dst + "mix.weight"] = w.reshape(w.shape[0], c, h).permute(0, 2, 1).reshape(w.shape[0], h * c)
        ours[dst + "mix.bias"] = _get(sd, src + "branches.1.projection.bias")
    t = "inter_network_transformer."
    ours["cls"] = _get(sd, t + "cls_token")
    if t + "mask_embedding" in sd:  # absent when the official model was built without masking
        ours["mask_token"] = sd[t + "mask_embedding"].reshape(-1)
    ours["net_embed"] = _get(sd, t + "network_learnable_pos_embedding.weight")
    for i in range(depth):
        src, dst = f"{t}transformer_blocks.{i}.", f"blocks.{i}."
        for a, b in (("norm1", "norm1"), ("attn.proj", "proj"), ("norm2", "norm2"), ("mlp.0", "mlp.0"),
                     ("mlp.3", "mlp.2")):  # fmt: skip
            for p in ("weight", "bias"):
                ours[dst + f"{b}.{p}"] = _get(sd, src + f"{a}.{p}")
        ours[dst + "qkv.weight"] = _get(sd, src + "attn.qkv.weight")
        for a, b in (("ls1", "gamma1"), ("ls2", "gamma2")):
            ours[dst + b] = sd[src + f"{a}.gamma"] if src + f"{a}.gamma" in sd else torch.ones(dim)
    for p in ("weight", "bias"):
        ours[f"norm.{p}"] = _get(sd, f"norm.{p}")
    missing, unexpected = enc.load_state_dict(ours, strict=False)
    allowed = {f"tokenizer.tokenizers.{n}.slconv.kernel_norm" for n in fresh}
    if "mask_token" not in ours:
        allowed.add("mask_token")
    if set(missing) - allowed or unexpected:
        raise CheckpointError(f"official checkpoint: could not fill {sorted(set(missing) - allowed) or unexpected}")
    with torch.no_grad():
        for n in fresh:
            sl_mod = enc.tokenizer.tokenizers[n].slconv  # type: ignore[index, union-attr]
            sl_mod.kernel_norm.copy_(sl_mod._raw_kernel().norm(dim=-1, keepdim=True))
    return enc.eval()


def load_official_encoder(
    path: str | Path,
    network_map: NetworkMap,
    *,
    source: Literal["teacher", "student"] = "teacher",
    heads: int | None = None,
    patch: int = 20,
) -> SemantoksEncoder:
    """The official pre-trained encoder from a local ``model.pth`` (or a folder holding one) for
    ``network_map`` (e.g. :func:`~iclr26_science.fmri.networks.read_network_map` of the official
    ``network_mapping.npz``); ``patch`` is the official patch length (20 samples at TR 2 s)."""
    file = Path(path)
    if file.is_dir():
        found = sorted(file.glob("*.pth")) + sorted(file.glob("*.pt"))
        if not found:
            raise CheckpointError(f"{file}: no .pth/.pt checkpoint in the folder")
        file = found[0]
    if not file.is_file():
        raise CheckpointError(f"{file}: no such checkpoint (download the official model.pth first)")
    try:
        ckpt = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several types for a bad file
        raise CheckpointError(f"{file}: not a readable torch checkpoint ({type(err).__name__}: {err})") from None
    state = ckpt.get("model_state_dict", ckpt) if isinstance(ckpt, dict) else None
    if not isinstance(state, dict):
        raise CheckpointError(f"{file}: expected a state dict or {{'model_state_dict': ...}}")
    groups = [g.tolist() for g in network_map.groups()]
    return official_to_ours(_backbone(state, source), groups, heads=heads, patch=patch)
