"""A small decoupled diffusion transformer (DDT, Wang et al., arXiv 2504.05741) for class-conditional images.

The layout follows MCG-NJU/DDT ``decoupled_improved_dit.py`` (class ``DDT``), sized for 8×8–28×28 grey
images and built from diffusers' pieces where they exist (``Timesteps``, ``TimestepEmbedding``, ``RMSNorm``,
``FeedForward(activation_fn="swiglu")``, ``get_2d_rotary_pos_embed`` / ``apply_rotary_emb``,
``get_2d_sincos_pos_embed`` for the plain variant)::

    c   = SiLU(emb(t) + emb(y))                                  # global condition          [B, H]
    s   = s_embed(patches);  s = block_i(s, c)  for i < n_enc    # condition encoder         [B, N, H]
    z_t = s                                                      # encoder output (aligned by DUPA)
    s   = SiLU(emb(t)[:, None] + s)                              # token-wise condition      [B, N, H]
    x   = x_embed(patches);  x = block_i(x, s)  for i >= n_enc   # velocity decoder (adaLN on s per token)
    v   = FinalLayer(x, s) → unpatchify                          # velocity                  [B, C, S, S]

Each block: norm → adaLN modulation (shift/scale/gate for attention and MLP, 6·H: a plain ``Linear`` of
the condition, which is already SiLU'd, PyTorch's default init as DDT's ``DDTBlock``) → attention (qkv
without bias) → gated residual → norm → modulation → MLP → gated residual. Only the final layer's
modulation and projection are zero-initialised (DDT's ``initialize_weights``), so a fresh model predicts
zero velocity. ``arch="ddt"`` (the default): RMSNorm, qk-RMSNorm, DDT's 2-D RoPE (:func:`ddt_rope`),
SwiGLU with hidden ``int(2·4H/3)``; ``arch="dit"`` (the plain DiT/SiT-style variant one reviewer suggests DUPA
really used): LayerNorm, no qk-norm, absolute 2-D sin-cos positions added to the tokens, GELU(tanh) MLP
with hidden 4H. Both keep the encoder/decoder split, so encoder sharing and DUPA work on either.

Time ``t`` ∈ [0, 1] is embedded as diffusers' sinusoidal ``Timesteps`` of ``1000·t`` (DDT uses
``max_period=10`` on t directly; the two differ only in the frequency range of the features).

The model is a diffusers ``ModelMixin`` + ``ConfigMixin``: ``save_pretrained(dir)`` /
``DDT.from_pretrained(dir)`` (safetensors + ``config.json``), ``model.config`` holds the constructor's
arguments.

Shapes: ``sample`` ``[B, C, S, S]``, ``timestep`` ``[B]`` in [0, 1], ``class_labels`` ``[B]`` (label ``K``
is the null label ∅) → ``(velocity [B, C, S, S], condition s [B, N, H])`` with ``N = (S/p)²`` tokens.
Pass ``condition=`` to skip the encoder and reuse a cached ``s`` (encoder sharing in the sampler).
"""

from __future__ import annotations

from typing import Literal, NamedTuple, cast

import torch
import torch.nn.functional as F
from diffusers.configuration_utils import ConfigMixin, register_to_config
from diffusers.models.attention import FeedForward
from diffusers.models.embeddings import TimestepEmbedding, Timesteps, get_2d_sincos_pos_embed
from diffusers.models.modeling_utils import ModelMixin
from diffusers.models.normalization import RMSNorm
from torch import nn

from iclr26_shared.errors import ConfigError, DataError

__all__ = ["DDT", "DDTBlock", "DDTOutput", "apply_ddt_rope", "ddt_rope"]

Arch = Literal["ddt", "dit"]


class DDTOutput(NamedTuple):
    """What :meth:`DDT.forward` returns."""

    velocity: torch.Tensor
    """Predicted velocity ``[B, C, S, S]``."""
    condition: torch.Tensor
    """Token-wise condition ``SiLU(emb(t) + z_t)`` fed to the decoder ``[B, N, H]`` (cache it to share)."""
    hidden: torch.Tensor | None
    """Tokens after block ``align_layer`` (1-based; ``n_enc`` = the encoder output ``z_t``) ``[B, N, H]``,
    or None when no layer was asked for or the encoder was skipped."""


def _modulate(x: torch.Tensor, shift: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return x * (1 + scale) + shift


def ddt_rope(head_dim: int, height: int, width: int, *, theta: float = 10000.0, scale: float = 16.0) -> torch.Tensor:
    """DDT's 2-D rotary frequencies (``precompute_freqs_cis_2d``) as complex ``[N, head_dim/2]``, N = h·w.

    Token positions ``x, y ∈ linspace(0, scale, ·)`` (row-major), frequencies
    ``ω_j = θ^(−4j/head_dim)``, j < head_dim/4; channel pair ``2j`` rotates by ``x·ω_j`` and pair
    ``2j + 1`` by ``y·ω_j`` (x and y interleaved per frequency).
    """
    ys, xs = torch.meshgrid(torch.linspace(0, scale, height), torch.linspace(0, scale, width), indexing="ij")
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 4)[: head_dim // 4].float() / head_dim))
    angles = torch.stack([torch.outer(xs.reshape(-1), freqs), torch.outer(ys.reshape(-1), freqs)], dim=-1)
    return torch.polar(torch.ones_like(angles), angles).reshape(height * width, -1)


def apply_ddt_rope(x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    """Rotate ``x`` ``[B, heads, N, d]`` by ``freqs`` ``[N, d/2]`` (consecutive channel pairs as complex numbers)."""
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * freqs).flatten(-2).type_as(x)


class DDTBlock(nn.Module):
    """One transformer block with adaLN modulation from a global ``[B, H]`` or token-wise ``[B, N, H]``
    condition; ``arch`` selects the DDT (RMSNorm, qk-norm, RoPE, SwiGLU) or the plain DiT parts."""

    def __init__(self, hidden: int, heads: int, arch: Arch = "ddt") -> None:
        super().__init__()
        self.heads, self.arch = heads, arch
        if arch == "ddt":
            self.norm1: nn.Module = RMSNorm(hidden, eps=1e-6, elementwise_affine=True)
            self.norm2: nn.Module = RMSNorm(hidden, eps=1e-6, elementwise_affine=True)
            self.q_norm: nn.Module = RMSNorm(hidden // heads, eps=1e-6, elementwise_affine=True)
            self.k_norm: nn.Module = RMSNorm(hidden // heads, eps=1e-6, elementwise_affine=True)
            self.mlp = FeedForward(hidden, inner_dim=int(2 * 4 * hidden / 3), activation_fn="swiglu", bias=False)
        else:
            self.norm1 = nn.LayerNorm(hidden, elementwise_affine=False, eps=1e-6)
            self.norm2 = nn.LayerNorm(hidden, elementwise_affine=False, eps=1e-6)
            self.q_norm = nn.Identity()
            self.k_norm = nn.Identity()
            self.mlp = FeedForward(hidden, mult=4, activation_fn="gelu-approximate")
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.proj = nn.Linear(hidden, hidden)
        self.adaln = nn.Linear(hidden, 6 * hidden)  # the condition is SiLU'd once, by the caller (as DDT)

    def forward(self, x: torch.Tensor, cond: torch.Tensor, rope: torch.Tensor | None) -> torch.Tensor:
        """``x`` ``[B, N, H]``, ``cond`` ``[B, H]`` or ``[B, N, H]`` → ``[B, N, H]``."""
        mod = self.adaln(cond)
        if mod.dim() == 2:
            mod = mod[:, None]
        shift1, scale1, gate1, shift2, scale2, gate2 = mod.chunk(6, dim=-1)
        b, n, h = x.shape
        qkv = self.qkv(_modulate(self.norm1(x), shift1, scale1)).reshape(b, n, 3, self.heads, h // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each [B, heads, N, H/heads]
        q, k = self.q_norm(q), self.k_norm(k)
        if rope is not None:
            q, k = apply_ddt_rope(q, rope), apply_ddt_rope(k, rope)
        attn = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, n, h)
        x = x + gate1 * self.proj(attn)
        return x + gate2 * self.mlp(_modulate(self.norm2(x), shift2, scale2))


class DDT(ModelMixin, ConfigMixin):
    """Condition encoder + velocity decoder (see the module docstring); a diffusers model.

    Args:
        sample_size: Image side ``S``.
        in_channels: Channels ``C``.
        num_classes: ``K``; label ``K`` is the null label ∅ (classifier-free guidance).
        patch_size: Patch side ``p`` (divides ``S``).
        hidden: Width ``H`` (divisible by ``heads``; ``H/heads`` divisible by 4 for 2-D RoPE).
        encoder_depth: Encoder blocks ``n_enc`` (DDT-XL: 22).
        decoder_depth: Decoder blocks ``n_dec`` (DDT-XL: 6).
        heads: Attention heads.
        arch: ``"ddt"`` or ``"dit"`` (see the module docstring).
    """

    @register_to_config
    def __init__(
        self,
        sample_size: int,
        in_channels: int,
        num_classes: int,
        *,
        patch_size: int = 2,
        hidden: int = 64,
        encoder_depth: int = 4,
        decoder_depth: int = 2,
        heads: int = 4,
        arch: Arch = "ddt",
    ) -> None:
        super().__init__()
        if sample_size % patch_size:
            raise ConfigError("patch_size", patch_size, f"a divisor of the image size {sample_size}")
        if hidden % heads:
            raise ConfigError("heads", heads, f"a divisor of the width {hidden}")
        if arch == "ddt" and (hidden // heads) % 4:
            raise ConfigError("hidden", hidden, "a width whose head size (hidden/heads) is divisible by 4 (2-D RoPE)")
        self.sample_size, self.in_channels, self.num_classes = sample_size, in_channels, num_classes
        self.patch_size, self.hidden, self.arch = patch_size, hidden, arch
        self.encoder_depth, self.decoder_depth = encoder_depth, decoder_depth
        grid = sample_size // patch_size
        self.num_tokens = grid * grid
        patch_dim = in_channels * patch_size * patch_size
        self.s_embedder = nn.Linear(patch_dim, hidden)
        self.x_embedder = nn.Linear(patch_dim, hidden)
        self.time_proj = Timesteps(256, flip_sin_to_cos=True, downscale_freq_shift=0)
        self.time_embedding = TimestepEmbedding(256, hidden)
        self.label_embedding = nn.Embedding(num_classes + 1, hidden)
        self.blocks = nn.ModuleList(DDTBlock(hidden, heads, arch) for _ in range(encoder_depth + decoder_depth))
        self.norm_out = nn.LayerNorm(hidden, elementwise_affine=False, eps=1e-6)
        self.out_modulation = nn.Linear(hidden, 2 * hidden)  # on the SiLU'd condition, as DDT's FinalLayer
        nn.init.zeros_(self.out_modulation.weight)
        nn.init.zeros_(self.out_modulation.bias)
        self.proj_out = nn.Linear(hidden, patch_dim)
        nn.init.zeros_(self.proj_out.weight)
        nn.init.zeros_(self.proj_out.bias)
        self._init_like_ddt()
        if arch == "ddt":
            self.register_buffer("rope", ddt_rope(hidden // heads, grid, grid), persistent=False)
            self.register_buffer("pos", torch.zeros(1, self.num_tokens, hidden), persistent=False)
        else:
            pos = get_2d_sincos_pos_embed(hidden, grid, base_size=grid, interpolation_scale=1.0, output_type="pt")
            self.register_buffer("pos", torch.as_tensor(pos).float()[None], persistent=False)

    def _init_like_ddt(self) -> None:
        """DDT's ``initialize_weights``: Xavier-uniform embedders with zero bias, N(0, 0.02) label table and
        time-MLP weights; the final layer's modulation and projection are zero (set above)."""
        for emb in (self.s_embedder, self.x_embedder):
            nn.init.xavier_uniform_(emb.weight)
            nn.init.zeros_(emb.bias)
        nn.init.normal_(self.label_embedding.weight, std=0.02)
        nn.init.normal_(self.time_embedding.linear_1.weight, std=0.02)
        nn.init.normal_(self.time_embedding.linear_2.weight, std=0.02)

    @property
    def null_label(self) -> int:
        """The label index of ∅ (unconditional)."""
        return self.num_classes

    @property
    def depth(self) -> int:
        """``n_enc + n_dec``."""
        return self.encoder_depth + self.decoder_depth

    def _rope(self) -> torch.Tensor | None:
        return cast(torch.Tensor, self.rope) if self.arch == "ddt" else None

    def patchify(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, C, S, S]`` → ``[B, N, C·p²]`` (``F.unfold`` order, as DDT); other shapes: one-line DataError."""
        s = self.sample_size
        if x.dim() != 4 or tuple(x.shape[1:]) != (self.in_channels, s, s):
            raise DataError(
                f"DDT: sample must be [B, {self.in_channels}, {s}, {s}] (in_channels, sample_size × sample_size), "
                f"got {list(x.shape)}"
            )
        return F.unfold(x, kernel_size=self.patch_size, stride=self.patch_size).transpose(1, 2)

    def unpatchify(self, tokens: torch.Tensor) -> torch.Tensor:
        """``[B, N, C·p²]`` → ``[B, C, S, S]`` (inverse of :meth:`patchify`)."""
        s, p = self.sample_size, self.patch_size
        return F.fold(tokens.transpose(1, 2), output_size=(s, s), kernel_size=p, stride=p)

    def time_embed(self, timestep: torch.Tensor) -> torch.Tensor:
        """``t`` ``[B]`` in [0, 1] → ``[B, H]``."""
        proj = self.time_proj(timestep.float() * 1000.0)
        return self.time_embedding(proj.to(self.s_embedder.weight.dtype))

    def encode(
        self, sample: torch.Tensor, timestep: torch.Tensor, class_labels: torch.Tensor, *, align_layer: int = 0
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The condition encoder: ``(z_t [B, N, H], tokens after block align_layer or None)``."""
        t_emb = self.time_embed(timestep)
        c = F.silu(t_emb + self.label_embedding(class_labels))
        s = self.s_embedder(self.patchify(sample)) + self.pos
        rope, hidden = self._rope(), None
        for i in range(self.encoder_depth):
            s = self.blocks[i](s, c, rope)
            if i + 1 == align_layer:
                hidden = s
        return s, hidden

    def forward(
        self,
        sample: torch.Tensor,
        timestep: torch.Tensor,
        class_labels: torch.Tensor,
        *,
        condition: torch.Tensor | None = None,
        align_layer: int = 0,
    ) -> DDTOutput:
        """Velocity and token-wise condition; ``condition`` (a cached ``s``) skips the encoder."""
        from iclr26_generative_vision.flow.adapter import check_flow_inputs

        check_flow_inputs("DDT", sample, timestep, class_labels)
        weight = self.s_embedder.weight
        if sample.device != weight.device or sample.dtype != weight.dtype:
            raise DataError(
                f"DDT: sample is {sample.dtype} on {sample.device}, the weights {weight.dtype} on {weight.device}"
            )
        if condition is not None and tuple(condition.shape) != (sample.shape[0], self.num_tokens, self.hidden):
            raise DataError(
                f"DDT: condition must be [B, N, H] = [{sample.shape[0]}, {self.num_tokens}, {self.hidden}], "
                f"got {tuple(condition.shape)}"
            )
        t_emb = self.time_embed(timestep)
        hidden = None
        if condition is None:
            z, hidden = self.encode(sample, timestep, class_labels, align_layer=align_layer)
            condition = F.silu(t_emb[:, None] + z)
        rope = self._rope()
        x = self.x_embedder(self.patchify(sample)) + self.pos
        for i in range(self.encoder_depth, self.depth):
            x = self.blocks[i](x, condition, rope)
            if i + 1 == align_layer:
                hidden = x
        shift, scale = self.out_modulation(condition).chunk(2, dim=-1)
        v = self.unpatchify(self.proj_out(_modulate(self.norm_out(x), shift, scale)))
        return DDTOutput(v, condition, hidden)
