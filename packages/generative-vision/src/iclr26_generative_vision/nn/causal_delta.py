"""Causal Delta Embeddings (Alimisis & Diou, ICLR 2026, arXiv 2508.04492) and the Causal Triplet baselines.

An intervention (action) ``a`` on a scene turns the latent of the acted-on object ``z_a`` into
``z̃_a = z_a + δ_a + ε`` (§3, the structural causal model); everything else stays. An encoder φ (backbone +
*causal projector*) maps both images to ``R^l`` and the **delta embedding** is

    δ = φ(x̃) − φ(x)                                                                        (Eq. 1)

which cancels the shared scene (independence), should change few dimensions (sparsity, the sparse
mechanism shift) and should be the same for one action on any object (invariance). Two models:

* **Model A (global)**: δ = proj(pool(x̃)) − proj(pool(x)), ``[B, l]``, fed to a linear/MLP classifier.
* **Model B (patch-wise)**: δ_p = proj(x̃)_p − proj(x)_p per patch ``[B, P, l]``; the Top-K patches by
  ‖δ_p‖₂ are kept ``[B, K, l]`` and aggregated (mean) into ``[B, l]`` for the classifier.

The loss (§3.3, α_c = 2, α_s = 1 in all experiments)::

    L = L_CE(g(δ), a) + α_c L_SupCon(δ, a) + α_s L_sparse(δ),      L_sparse = (1/B) Σ_i ‖δ_i‖₁
    L_SupCon = (1/|A|) Σ_{i∈A} −1/|P(i)| Σ_{p∈P(i)} log[ exp(s_ip/τ) / Σ_{j≠i} exp(s_ij/τ) ],  s = cosine

with P(i) the other samples of i's action and A the anchors with |P(i)| > 0.

Baselines of Causal Triplet (Liu et al., CLeaR 2023): ``ResPair`` (features → ``proj = Linear→ReLU`` → a
pairwise MLP on ``[p1, p2 − p1]`` → classifier; the benchmark's *Vanilla* row), a plain pair classifier on
``[p1, p2]``, the sparse-mechanism-shift baseline (``SMS``: ResPair + MSE of ``p2 − p1`` on the blocks that
the action should leave unchanged, antonyms sharing a block) and the ICM baseline (ResPair + an adversarial
critic that must not read the object class from the pairwise embedding, through gradient reversal); all as
in the benchmark's code (``model/respair.py``, ``sparsity/block.py``, ``main.py``).

Backbone: a small convolutional network trained from scratch (``SmallCNN``; GroupNorm, so a sample's
features never depend on the rest of its batch). The paper fine-tunes a DINO ViT: a transformers
``Dinov2Model``/``ViTModel`` is an opt-in through ``nn/vit_backbone.ViTBackbone`` (CLS or mean-patch
pooling), and torchvision's ResNet-18 another (``resnet18_backbone``), both with weights only from local
files. A backbone maps ``[B, 3, S, S] → [B, C, h, w]`` and has ``out_channels`` = C; its pooled feature
``[B, C]`` is ``backbone.global_features(x)`` when it defines one (a ViT's CLS token), else the spatial mean
of its map (:func:`pooled_features`).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from iclr26_shared.errors import CheckpointError, ConfigError, DataError

__all__ = [
    "CausalDeltaEncoder",
    "CausalDeltaModel",
    "GradReverse",
    "PairBaseline",
    "SmallCNN",
    "block_invariance_loss",
    "verb_blocks",
    "l1_sparsity",
    "naive_supcon_loss",
    "pooled_features",
    "resnet18_backbone",
    "supcon_loss",
    "top_k_patches",
]


class SmallCNN(nn.Module):
    """Conv(3×3, stride 2) → GroupNorm → ReLU blocks, then a 3×3 conv: ``[B, 3, S, S] → [B, C, S/2^n, S/2^n]``.

    ``coords=True`` appends two coordinate channels (x, y ∈ [−1, 1]) to the input (CoordConv), so that
    pooled features can say *where* something is (a ViT's CLS token has position embeddings for that; a
    pooled CNN is nearly translation invariant and could not tell move-left from move-right).
    """

    def __init__(self, channels: Sequence[int] = (32, 64, 128), groups: int = 8, coords: bool = True) -> None:
        super().__init__()
        self.coords = coords
        self.init_kwargs = {"channels": [int(c) for c in channels], "groups": groups, "coords": coords}
        """The constructor's arguments (JSON), so that a saved :class:`CausalDeltaModel` rebuilds it."""
        layers: list[nn.Module] = []
        c_in = 5 if coords else 3
        for c in channels:
            layers += [nn.Conv2d(c_in, c, 3, stride=2, padding=1), nn.GroupNorm(min(groups, c), c), nn.ReLU()]
            c_in = c
        layers += [nn.Conv2d(c_in, c_in, 3, padding=1), nn.GroupNorm(min(groups, c_in), c_in), nn.ReLU()]
        self.net = nn.Sequential(*layers)
        self.out_channels = c_in

    def forward(self, x: Tensor) -> Tensor:
        if self.coords:
            b, _, h, w = x.shape
            ys = torch.linspace(-1, 1, h, device=x.device, dtype=x.dtype)[:, None].expand(h, w)
            xs = torch.linspace(-1, 1, w, device=x.device, dtype=x.dtype)[None, :].expand(h, w)
            x = torch.cat([x, torch.stack([xs, ys]).expand(b, 2, h, w)], dim=1)
        return self.net(x)


def resnet18_backbone(weights_path: str = "") -> nn.Module:
    """torchvision ResNet-18 without its pooling and classifier (``[B, 3, S, S] → [B, 512, S/32, S/32]``).

    Opt-in: random initialisation, or the state dict at ``weights_path`` (read with ``weights_only=True``);
    nothing is downloaded.
    """
    try:
        models = importlib.import_module("torchvision.models")
    except ImportError as err:
        raise DataError("backbone 'resnet18' needs torchvision (pip install torchvision)") from err
    net: nn.Module = models.resnet18(weights=None)
    if weights_path:
        path = Path(weights_path)
        if not path.is_file():
            raise DataError(f"{path}: ResNet-18 weights file not found (backbone_weights)")
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
            net.load_state_dict(state)
        except Exception as err:  # noqa: BLE001 - any unreadable file is the user's input
            raise DataError(f"{path}: not a torchvision ResNet-18 state dict ({err})") from err
    return _ResNetBody(nn.Sequential(*list(net.children())[:-2]))


class _ResNetBody(nn.Module):
    """ResNet-18's convolutional body with the ``out_channels`` the encoders read."""

    def __init__(self, body: nn.Module) -> None:
        super().__init__()
        self.body = body
        self.out_channels = 512

    def forward(self, x: Tensor) -> Tensor:
        return self.body(x)


def pooled_features(backbone: nn.Module, x: Tensor) -> Tensor:
    """The pooled feature ``[B, C]`` of ``x [B, 3, S, S]``: ``backbone.global_features(x)`` when the backbone
    defines it (:class:`~iclr26_generative_vision.nn.vit_backbone.ViTBackbone`: CLS or mean patch token),
    else the spatial mean of its feature map ``backbone(x).mean((2, 3))``."""
    pool = getattr(backbone, "global_features", None)
    if callable(pool):
        return cast(Tensor, pool(x))
    return backbone(x).mean(dim=(2, 3))


def _mlp(d_in: int, hidden: int, d_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, d_out))


def top_k_patches(delta: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """The ``k`` patches with the largest ‖δ_p‖₂: ``delta [B, P, l] → (selected [B, k, l], indices [B, k])``.

    Indices are in decreasing norm order; gradients flow to the selected patches only.
    """
    if not 0 < k <= delta.shape[1]:
        raise ValueError(f"top_k = {k} must be in 1..{delta.shape[1]} (the number of patches)")
    idx = delta.norm(dim=-1).topk(k, dim=1).indices
    return delta.gather(1, idx[..., None].expand(-1, -1, delta.shape[-1])), idx


class CausalDeltaEncoder(nn.Module):
    """φ = causal projector ∘ backbone, and δ = φ(x̃) − φ(x) (Eq. 1).

    Args:
        backbone: Module ``[B, 3, S, S] → [B, C, h, w]`` with attribute ``out_channels`` = C (and optionally
            ``global_features(x) → [B, C]``, model A's pooled feature; see :func:`pooled_features`).
        proj_dim: l, the width of the delta space.
        proj_hidden: Hidden width of the projector MLP.
        mode: ``"global"`` (model A: pooled features, δ ``[B, l]``) or ``"patch"`` (model B: per patch,
            δ ``[B, h·w, l]``).
    """

    def __init__(self, backbone: nn.Module, proj_dim: int, proj_hidden: int, mode: Literal["global", "patch"]) -> None:
        super().__init__()
        self.backbone = backbone
        self.mode = mode
        self.proj_dim = proj_dim
        c = getattr(backbone, "out_channels", None)
        if not isinstance(c, int) or c < 1:
            raise ConfigError(
                "backbone", type(backbone).__name__, "a module with an int attribute out_channels (its width C)"
            )
        if mode not in ("global", "patch"):
            raise ConfigError("mode", mode, "'global' (model A) or 'patch' (model B)")
        self.projector = _mlp(c, proj_hidden, proj_dim)

    def embed(self, x: Tensor) -> Tensor:
        """φ(x): ``[B, l]`` (global) or ``[B, P, l]`` (patch)."""
        c = int(cast(nn.Linear, self.projector[0]).in_features)
        if self.mode == "global":
            f = pooled_features(self.backbone, x)
            if f.dim() != 2 or f.shape[1] != c:
                raise DataError(f"backbone: pooled features are {tuple(f.shape)}, expected [B, {c}] (its out_channels)")
            return self.projector(f)
        fmap = self.backbone(x)
        if fmap.dim() != 4 or fmap.shape[1] != c:
            raise DataError(f"backbone: feature map is {tuple(fmap.shape)}, expected [B, {c}, h, w] (its out_channels)")
        return self.projector(fmap.flatten(2).transpose(1, 2))

    def forward(self, x: Tensor, x_after: Tensor) -> Tensor:
        """δ = φ(x̃) − φ(x); both images go through the backbone in one batch."""
        if x.dim() != 4 or x.shape != x_after.shape:
            raise DataError(
                f"x and x_after must be images [B, C, S, S] of one shape, "
                f"got {tuple(x.shape)} and {tuple(x_after.shape)}"
            )
        if x.dtype != x_after.dtype or x.device != x_after.device:
            raise DataError(f"x_after is {x_after.dtype} on {x_after.device}, x is {x.dtype} on {x.device}")
        p = next(self.projector.parameters())
        if x.device != p.device or x.dtype != p.dtype:
            raise DataError(f"x is {x.dtype} on {x.device}, the model's weights {p.dtype} on {p.device}")
        z = self.embed(torch.cat([x, x_after]))
        z0, z1 = z.chunk(2)
        return z1 - z0


class CausalDeltaModel(nn.Module):
    """Encoder + action classifier g on δ (model A) or on the mean of the Top-K patch deltas (model B).

    ``forward(x, x̃)`` returns ``{"logits": [B, V], "delta": [B, l], "patches": [B, K, l] (model B)}``.
    """

    def __init__(
        self,
        encoder: CausalDeltaEncoder,
        num_actions: int,
        *,
        classifier: Literal["linear", "mlp"] = "linear",
        top_k: int = 8,
    ) -> None:
        super().__init__()
        self.encoder = encoder
        self.top_k, self.num_actions, self.classifier_kind = top_k, num_actions, classifier
        l = encoder.proj_dim  # noqa: E741 - the paper's l
        self.classifier = nn.Linear(l, num_actions) if classifier == "linear" else _mlp(l, l, num_actions)

    def head_config(self) -> dict[str, Any]:
        """The JSON values that rebuild this model around a backbone (widths, mode, classifier, Top-K)."""
        enc = self.encoder
        return {
            "num_actions": self.num_actions,
            "classifier": self.classifier_kind,
            "top_k": self.top_k,
            "proj_dim": enc.proj_dim,
            "proj_hidden": int(cast(nn.Linear, enc.projector[0]).out_features),
            "mode": enc.mode,
        }

    def save_pretrained(self, folder: str | Path, *, backbone_init: dict[str, Any] | None = None) -> Path:
        """Save the model to ``folder``: ``config.json`` (the head's settings and how to rebuild the backbone),
        ``model.safetensors`` (the projector and classifier) and the backbone beside them (see
        :mod:`iclr26_generative_vision.nn.backbone_io`: a ViT or hub model by its own ``save_pretrained`` in
        ``backbone/``, any other module as its class name + ``backbone_init`` constructor arguments (JSON; default
        its ``init_kwargs`` attribute) + ``backbone.safetensors``). Returns the folder."""
        from safetensors.torch import save_file

        from iclr26_generative_vision.nn.backbone_io import save_backbone

        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        spec = save_backbone(self.encoder.backbone, out, init=backbone_init)
        head = {
            k: v.detach().contiguous().clone()
            for k, v in self.state_dict().items()
            if not k.startswith("encoder.backbone.")
        }
        save_file(head, str(out / "model.safetensors"))
        config = {
            "class": "iclr26_generative_vision.nn.causal_delta:CausalDeltaModel",
            **self.head_config(),
            "backbone": spec,
        }
        (out / "config.json").write_text(json.dumps(config, indent=1))
        return out

    @classmethod
    def from_pretrained(cls, folder: str | Path, *, backbone: nn.Module | type | None = None) -> CausalDeltaModel:
        """Load a model :meth:`save_pretrained` wrote, bit for bit. ``backbone``: the user's backbone class (built
        with the saved constructor arguments) or an instance (the saved weights go into it), needed for a class
        outside this workspace's packages and transformers/diffusers (never imported from a saved name).

        Raises:
            CheckpointError: a missing or malformed file, or a backbone that cannot be rebuilt (one line, naming
                the class and what to pass).
        """
        from safetensors.torch import load_file

        from iclr26_generative_vision.nn.backbone_io import load_backbone

        where = Path(folder)
        try:
            config = json.loads((where / "config.json").read_text())
        except (OSError, ValueError) as err:
            raise CheckpointError(f"{where / 'config.json'}: not a readable CausalDeltaModel config ({err})") from None
        keys = ("num_actions", "classifier", "top_k", "proj_dim", "proj_hidden", "mode", "backbone")
        if not isinstance(config, dict) or any(k not in config for k in keys):
            raise CheckpointError(f"{where / 'config.json'}: not a CausalDeltaModel config (needs {', '.join(keys)})")
        net = load_backbone(config["backbone"], where, backbone)
        encoder = CausalDeltaEncoder(net, int(config["proj_dim"]), int(config["proj_hidden"]), config["mode"])
        model = cls(encoder, int(config["num_actions"]), classifier=config["classifier"], top_k=int(config["top_k"]))
        file = where / "model.safetensors"
        if not file.is_file():
            raise CheckpointError(f"{file}: the saved head weights are missing")
        missing, unexpected = model.load_state_dict(load_file(str(file)), strict=False)
        missing = [k for k in missing if not k.startswith("encoder.backbone.")]
        if missing or unexpected:
            raise CheckpointError(
                f"{file}: head weights do not fit (missing {missing[:3]}, unexpected {unexpected[:3]})"
            )
        return model.eval()

    def forward(self, x: Tensor, x_after: Tensor) -> dict[str, Tensor]:
        delta = self.encoder(x, x_after)
        out: dict[str, Tensor] = {}
        if self.encoder.mode == "patch":
            sel, _ = top_k_patches(delta, min(self.top_k, delta.shape[1]))
            out["patches"] = sel
            delta = sel.mean(dim=1)
        out["delta"] = delta
        out["logits"] = self.classifier(delta)
        return out


class GradReverse(torch.autograd.Function):
    """Identity forward, ``−λ ·`` gradient backward (the adversarial critic of the ICM baseline)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, lam: float) -> Tensor:  # noqa: ANN401
        ctx.lam = lam
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, *grads: Tensor) -> tuple[Tensor, None]:  # noqa: ANN401
        return -ctx.lam * grads[0], None


class PairBaseline(nn.Module):
    """Causal Triplet's ``ResPair`` (``model/respair.py``) on pooled backbone features f1, f2 ``[B, C]``
    (:func:`pooled_features`).

    p = ReLU(Linear(f)) ``[B, d]``; z = pairwise([p1, p2 − p1]) (``head="respair"``, the code's ``subcon``)
    or pairwise([p1, p2]) (``head="concat"``) with pairwise = Linear(2d→d) → ReLU → Linear(d→d) → ReLU;
    logits = Linear(z). δ = p2 − p1 (the action embedding whose geometry is reported). ``critic_classes >
    0`` adds the ICM critic of ``main.py`` (``--critic_action``): an MLP predicting the object class from z
    through :class:`GradReverse`, so one backward step trains the critic to find the object in z and the
    model to hide it (the code's alternating critic step and ``loss −= λ · CE_critic``).
    """

    def __init__(
        self,
        backbone: nn.Module,
        num_actions: int,
        *,
        head: Literal["respair", "concat"] = "respair",
        proj_dim: int = 64,
        critic_classes: int = 0,
        critic_scale: float = 1.0,
    ) -> None:
        super().__init__()
        self.backbone = backbone
        self.head = head
        c = int(backbone.out_channels)  # pyright: ignore[reportArgumentType]
        d = proj_dim
        self.proj = nn.Sequential(nn.Linear(c, d), nn.ReLU())
        self.pairwise = nn.Sequential(nn.Linear(2 * d, d), nn.ReLU(), nn.Linear(d, d), nn.ReLU())
        self.classifier = nn.Linear(d, num_actions)
        self.critic = _mlp(d, d, critic_classes) if critic_classes else None
        self.critic_scale = critic_scale

    def forward(self, x: Tensor, x_after: Tensor) -> dict[str, Tensor]:
        f = pooled_features(self.backbone, torch.cat([x, x_after]))
        p1, p2 = self.proj(f).chunk(2)
        delta = p2 - p1
        z = self.pairwise(torch.cat([p1, delta] if self.head == "respair" else [p1, p2], dim=1))
        out = {"logits": self.classifier(z), "delta": delta, "p1": p1, "p2": p2}
        if self.critic is not None:
            out["critic"] = self.critic(GradReverse.apply(z, self.critic_scale))  # pyright: ignore[reportArgumentType]
        return out


# ----------------------------------------------------------------------------------------------------
# losses
# ----------------------------------------------------------------------------------------------------


def supcon_loss(z: Tensor, labels: Tensor, temperature: float = 0.1) -> Tensor:
    """Supervised contrastive loss (Khosla et al. 2020, L_out) on ``z [N, l]`` with ``labels [N]``, cosine sim.

    ``(1/|A|) Σ_{i∈A} −1/|P(i)| Σ_{p∈P(i)} log[exp(s_ip/τ) / Σ_{j≠i} exp(s_ij/τ)]``; anchors without a
    positive are left out (0 when there is none).
    """
    zn = F.normalize(z, dim=-1)
    sim = zn @ zn.T / temperature
    n = z.shape[0]
    eye = torch.eye(n, dtype=torch.bool, device=z.device)
    sim = sim.masked_fill(eye, float("-inf"))
    log_prob = sim - torch.logsumexp(sim, dim=1, keepdim=True)
    pos = (labels[:, None] == labels[None, :]) & ~eye
    n_pos = pos.sum(1)
    anchors = n_pos > 0
    if not anchors.any():
        return z.sum() * 0.0
    per_anchor = -(log_prob.masked_fill(~pos, 0.0).sum(1)[anchors] / n_pos[anchors])
    return per_anchor.mean()


def naive_supcon_loss(z: Tensor, labels: Tensor, temperature: float = 0.1) -> Tensor:
    """Loop twin of :func:`supcon_loss` (the formula term by term), for tests."""
    zn = F.normalize(z, dim=-1)
    terms = []
    for i in range(len(z)):
        positives = [p for p in range(len(z)) if p != i and labels[p] == labels[i]]
        if not positives:
            continue
        denom = torch.stack([torch.exp(zn[i] @ zn[j] / temperature) for j in range(len(z)) if j != i]).sum()
        terms.append(
            -torch.stack([torch.log(torch.exp(zn[i] @ zn[p] / temperature) / denom) for p in positives]).mean()
        )
    return torch.stack(terms).mean() if terms else z.sum() * 0.0


def l1_sparsity(delta: Tensor, reduction: Literal["sum", "mean"] = "sum") -> Tensor:
    """``(1/B) Σ_i ‖δ_i‖₁`` over ``delta [B, l]`` (``"mean"``: also divided by l)."""
    per = delta.abs().sum(-1) if reduction == "sum" else delta.abs().mean(-1)
    return per.mean()


def verb_blocks(num_verbs: int, antonyms: Sequence[tuple[int, int]]) -> list[int]:
    """Block of each verb for the SMS baseline (``main.py``): antonyms share a block, every other verb has its
    own; blocks are numbered in verb order."""
    partner = {a: b for a, b in antonyms} | {b: a for a, b in antonyms}
    block: list[int] = []
    count = 0
    for v in range(num_verbs):
        if v in partner and partner[v] < v:
            block.append(block[partner[v]])
        else:
            block.append(count)
            count += 1
    return block


def block_invariance_loss(p1: Tensor, p2: Tensor, blocks: Tensor, num_blocks: int) -> Tensor:
    """SMS baseline (``sparsity/block.py: sparse_criterion_with_label``): MSE of p1 vs p2 outside the action's block.

    The ``d`` dimensions of ``p [B, d]`` are cut into ``num_blocks`` blocks of ``d // num_blocks`` (the
    remainder joins the last block); block ``blocks[i]`` is the one action i may change, every other
    dimension's change is penalised: ``mean_{i,j} ((p1 − p2)_ij · invariant_ij)²`` over all B × d entries.
    """
    b, d = p1.shape
    if d < num_blocks:
        raise ValueError(f"embedding width {d} is smaller than the {num_blocks} blocks")
    dim_block = (torch.arange(d, device=p1.device) // (d // num_blocks)).clamp(max=num_blocks - 1)
    invariant = (dim_block[None, :] != blocks[:, None]).to(p1.dtype)
    return F.mse_loss(p1 * invariant, p2 * invariant)
