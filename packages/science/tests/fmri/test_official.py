"""Official Brain-Semantoks weights → SemantoksEncoder, checked against a re-derivation of the official forward.

The reference below follows the official ``model/semantoks.py`` / ``model/tokenizer.py`` formulas
(SamGijsen/Brain-Semantoks): unfold into patches, per network a dense Conv1d branch and an SLConv branch
whose grouped convolution and ``D`` skip are laid out channel-major (``rearrange(..., "(h c)")``), GELU,
mean, LayerNorm; network + sin-cos temporal position, CLS, pre-norm blocks with LayerScale, final LayerNorm.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from iclr26_science.fmri import NetworkMap, load_official_encoder
from iclr26_shared.errors import CheckpointError, DataError

DIM, HEADS, PATCH, PATCHES, SCALES, KERNEL = 8, 2, 16, 2, 3, 4
LABELS = np.array([0, 1, 0, 1, 0])  # two networks, interleaved ROIs: groups [0, 2, 4] and [1, 3]


def _sincos(length: int, dim: int) -> torch.Tensor:
    """The official get_1d_sincos_pos_embed_from_grid."""
    omega = 1.0 / 10000 ** (np.arange(dim // 2, dtype=float) / (dim / 2.0))
    out = np.einsum("m,d->md", np.arange(length, dtype=float), omega)
    return torch.from_numpy(np.concatenate([np.sin(out), np.cos(out)], axis=1)).float()


def _official_state(seed: int) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)

    def r(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g) * 0.3

    sd: dict[str, torch.Tensor] = {}
    for n, rois in enumerate((3, 2)):
        p = f"network_tokenizers.schaefer400.{n}."
        heads = -(-(DIM // 2) // rois)
        sd[p + "branches.0.weight"], sd[p + "branches.0.bias"] = r(DIM - DIM // 2, rois, 3), r(DIM - DIM // 2)
        for i in range(SCALES):
            sd[p + f"branches.1.slconv.kernel_list.{i}"] = r(heads, rois, KERNEL)
        sd[p + "branches.1.slconv.D"] = r(heads, rois)
        sd[p + "branches.1.slconv.multiplier"] = torch.full((1, rois, 1), 2.0)
        sd[p + "branches.1.slconv.kernel_norm"] = 1.0 + r(heads, rois, 1).abs()
        sd[p + "branches.1.slconv.kernel_norm_initialized"] = torch.tensor(True)
        sd[p + "branches.1.projection.weight"], sd[p + "branches.1.projection.bias"] = r(DIM // 2, heads * rois), r(4)
        sd[p + "norm.weight"], sd[p + "norm.bias"] = 1.0 + r(DIM), r(DIM)
    t = "inter_network_transformer."
    sd[t + "cls_token"], sd[t + "mask_embedding"] = r(1, 1, DIM), r(1, DIM)
    sd[t + "temporal_pos_embedding"] = _sincos(PATCHES, DIM)
    sd[t + "network_learnable_pos_embedding.weight"] = r(2, DIM)
    b = t + "transformer_blocks.0."
    sd[b + "norm1.weight"], sd[b + "norm1.bias"] = 1.0 + r(DIM), r(DIM)
    sd[b + "attn.qkv.weight"] = r(3 * DIM, DIM)
    sd[b + "attn.proj.weight"], sd[b + "attn.proj.bias"] = r(DIM, DIM), r(DIM)
    sd[b + "norm2.weight"], sd[b + "norm2.bias"] = 1.0 + r(DIM), r(DIM)
    sd[b + "mlp.0.weight"], sd[b + "mlp.0.bias"] = r(4 * DIM, DIM), r(4 * DIM)
    sd[b + "mlp.3.weight"], sd[b + "mlp.3.bias"] = r(DIM, 4 * DIM), r(DIM)
    sd[b + "ls1.gamma"], sd[b + "ls2.gamma"] = r(DIM), r(DIM)
    sd[t + "norm.weight"], sd[t + "norm.bias"] = r(DIM), r(DIM)  # unused by the official forward
    sd["norm.weight"], sd["norm.bias"] = 1.0 + r(DIM), r(DIM)
    return sd


def _official_forward(sd: dict[str, torch.Tensor], x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    b, _, _ = x.shape
    xp = x.unfold(2, PATCH, PATCH).permute(0, 2, 1, 3)  # [B, P, R, L]
    tokens = []
    for n in range(2):
        p = f"network_tokenizers.schaefer400.{n}."
        xn = xp[:, :, torch.as_tensor(LABELS == n), :].reshape(b * PATCHES, int((LABELS == n).sum()), PATCH)
        dense = F.conv1d(xn, sd[p + "branches.0.weight"], sd[p + "branches.0.bias"], padding="same")
        s = p + "branches.1.slconv."
        mult = sd[s + "multiplier"]
        k = torch.cat([F.interpolate(sd[s + f"kernel_list.{i}"], scale_factor=2 ** max(0, i - 1), mode="nearest")
                       * mult ** (SCALES - i - 1) for i in range(SCALES)], dim=-1) / sd[s + "kernel_norm"]  # fmt: skip
        h, c, length = k.shape
        w = k.flip(-1).permute(1, 0, 2).reshape(c * h, 1, length)  # rearrange "c h l -> (h c) 1 l"
        left = (length - 1) // 2
        y = F.conv1d(F.pad(xn, [left, length - 1 - left]), w, groups=c)
        skip = torch.einsum("bhl,ch->bchl", xn, sd[s + "D"])  # [B', heads, C, L]
        y = y + skip.permute(0, 2, 1, 3).reshape(y.shape)  # rearrange "b c h l -> b (h c) l"
        sl = F.linear(y.permute(0, 2, 1), sd[p + "branches.1.projection.weight"], sd[p + "branches.1.projection.bias"])
        z = F.gelu(torch.cat([dense, sl.permute(0, 2, 1)], dim=1)).mean(-1)
        tokens.append(F.layer_norm(z, (DIM,), sd[p + "norm.weight"], sd[p + "norm.bias"]).view(b, PATCHES, DIM))
    t = "inter_network_transformer."
    z = torch.stack(tokens, dim=1)  # [B, N, P, D]
    z = torch.where(mask[..., None], sd[t + "mask_embedding"][0], z)
    z = z + (sd[t + "network_learnable_pos_embedding.weight"][:, None] + sd[t + "temporal_pos_embedding"][None])
    h = torch.cat([sd[t + "cls_token"].expand(b, -1, -1), z.reshape(b, -1, DIM)], dim=1)
    blk = t + "transformer_blocks.0."
    q, kk, v = (F.linear(F.layer_norm(h, (DIM,), sd[blk + "norm1.weight"], sd[blk + "norm1.bias"]),
                         sd[blk + "attn.qkv.weight"]).reshape(b, h.shape[1], 3, HEADS, DIM // HEADS)
                .permute(2, 0, 3, 1, 4))  # fmt: skip
    att = ((q @ kk.transpose(-2, -1)) * (DIM // HEADS) ** -0.5).softmax(-1)
    a = F.linear(
        (att @ v).transpose(1, 2).reshape(b, -1, DIM), sd[blk + "attn.proj.weight"], sd[blk + "attn.proj.bias"]
    )
    h = h + sd[blk + "ls1.gamma"] * a
    m = F.layer_norm(h, (DIM,), sd[blk + "norm2.weight"], sd[blk + "norm2.bias"])
    m = F.linear(F.gelu(F.linear(m, sd[blk + "mlp.0.weight"], sd[blk + "mlp.0.bias"])), sd[blk + "mlp.3.weight"],
                 sd[blk + "mlp.3.bias"])  # fmt: skip
    h = h + sd[blk + "ls2.gamma"] * m
    return F.layer_norm(h, (DIM,), sd["norm.weight"], sd["norm.bias"])


def test_official_checkpoint_loads_and_matches_the_official_forward(tmp_path: Path) -> None:
    teacher, student = _official_state(0), _official_state(1)
    ckpt = {"model_state_dict": {**{f"teacher_encoder.{k}": v for k, v in teacher.items()},
                                 **{f"student_encoder.{k}": v for k, v in student.items()}}, "epoch": 99}  # fmt: skip
    torch.save(ckpt, tmp_path / "model.pth")
    net = NetworkMap(labels=LABELS, names=("a", "b"))
    x = torch.randn(3, 5, PATCH * PATCHES, generator=torch.Generator().manual_seed(2))
    mask = torch.zeros(3, 2, PATCHES, dtype=torch.bool)
    mask[0, 1, 0] = mask[2, 0, 1] = True
    for source, sd in (("teacher", teacher), ("student", student)):
        enc = load_official_encoder(tmp_path, net, source=source, heads=HEADS, patch=PATCH)  # type: ignore[arg-type]
        with torch.no_grad():
            ours, ref = enc(x, mask), _official_forward(sd, x, mask)
        assert ours.shape == (3, 1 + 2 * PATCHES, DIM)
        torch.testing.assert_close(ours, ref, rtol=1e-5, atol=1e-5)
    # the SLConv features are channel-major in the official code: an unpermuted copy would not match
    enc = load_official_encoder(tmp_path / "model.pth", net, heads=HEADS, patch=PATCH)
    w = teacher["network_tokenizers.schaefer400.0.branches.1.projection.weight"]
    assert not torch.equal(enc.tokenizer.tokenizers[0].mix.weight.detach(), w)  # type: ignore[index, union-attr]


def test_kernel_norm_set_at_first_use_and_bad_checkpoints(tmp_path: Path) -> None:
    sd = _official_state(0)
    for n in range(2):  # a checkpoint saved before any forward: the norm comes from the loaded kernel
        sd[f"network_tokenizers.schaefer400.{n}.branches.1.slconv.kernel_norm_initialized"] = torch.tensor(False)
    torch.save(sd, tmp_path / "bare.pth")
    net = NetworkMap(labels=LABELS, names=("a", "b"))
    enc = load_official_encoder(tmp_path / "bare.pth", net, heads=HEADS, patch=PATCH)
    sl = enc.tokenizer.tokenizers[1].slconv  # type: ignore[index, union-attr]
    torch.testing.assert_close(sl.kernel_norm, sl._raw_kernel().norm(dim=-1, keepdim=True))
    with pytest.raises(DataError, match="network 0 has 2 ROIs, the checkpoint's tokenizer 3"):
        load_official_encoder(tmp_path / "bare.pth", NetworkMap(labels=np.array([0, 1, 0, 1, 1]), names=("a", "b")))
    with pytest.raises(DataError, match="3 networks"):
        load_official_encoder(
            tmp_path / "bare.pth", NetworkMap(labels=np.array([0, 1, 2, 1, 0]), names=("a", "b", "c"))
        )
    with pytest.raises(CheckpointError, match="no such checkpoint"):
        load_official_encoder(tmp_path / "missing.pth", net)
    (tmp_path / "junk.pth").write_text("not a checkpoint")
    with pytest.raises(CheckpointError, match="not a readable torch checkpoint"):
        load_official_encoder(tmp_path / "junk.pth", net)
    torch.save({"model_state_dict": {"other.weight": torch.zeros(1)}}, tmp_path / "other.pth")
    with pytest.raises(CheckpointError, match="no teacher_encoder"):
        load_official_encoder(tmp_path / "other.pth", net)
