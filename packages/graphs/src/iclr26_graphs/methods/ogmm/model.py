r"""OGMM's networks: BatchNorm GNN experts, the graph inverter (stage 1) and the merged MoE (stage 2).

Wang et al., *Out-of-Distribution Graph Models Merging*, ICLR 2026 (arXiv 2506.03674), §3.2–3.3.

Experts ``f(Θ_j)``: two dense message-passing layers (PyG ``DenseGCNConv`` / ``DenseGINConv`` /
``DenseGATConv``), each followed by BatchNorm over the real nodes and ReLU, mean pooling and a linear
**classifier head** ``(W_j, b_j)``. Dense layers let gradients reach a generated soft adjacency Ã.

Stage 1 (Eqs. 7–11), :class:`GraphInverter`, per expert ``j`` and a batch of labels ``ŷ ~ U(classes)``:

.. math::
    a_{uv} = \sigma(\mathrm{MLP}_3([x_u; x_v])) \text{ (symmetrised, zero diagonal)}, \qquad
    \tilde A_{uv} = \sigma\big((\log a_{uv} - \log(1 - a_{uv}) + g_1 - g_2) / \tau\big),\ g \sim \mathrm{Gumbel}

    L_{gen} = \mathrm{CE}(\hat y, f_j(X, \tilde A)) + \underbrace{\textstyle\sum_L \|\mu_L - \hat\mu_L\|^2
    + \|\sigma^2_L - \hat\sigma^2_L\|^2}_{R_{bn}} + \underbrace{H(\mathrm{softmax} f_j(X, \tilde A))}_{R_{conf}}

with ``μ_L, σ²_L`` the batch statistics of the input of the expert's ``L``-th BatchNorm and ``μ̂, σ̂²`` its
running statistics. ``X [G, n, d]`` and the edge MLP are learned; the stored graphs keep ``a > 0.5``.

Stage 2 (Eqs. 12–20), :class:`MergedGNN`, trained on the generated graphs only:

.. math::
    \hat W_j = W_j \odot \omega^w_j,\ \hat b_j = b_j \odot \omega^b_j \ (\omega = 1 \text{ at init}), \qquad
    \mathrm{Gate}(g) = \mathrm{softmax}(\mathrm{TopK}(g W_g + \epsilon \cdot \mathrm{softplus}(g W_n), k))

    \Gamma(G) = \textstyle\sum_j \mathrm{Gate}(G)_j f(\Theta_j, \omega_j, G), \qquad
    L = \mathrm{CE}(y, \Gamma(G)) + \lambda_{gate} \mathrm{CV}^2(\textstyle\sum_{batch} \mathrm{Gate})
        + \lambda_{mask} R_{mask}

``ε ~ N(0, 1)`` only in training. The paper does not say what the gate reads. ``gate_input="embeddings"``
(default) gives it ``g = [h_1; …; h_M]``, the frozen experts' pooled hidden embeddings (as GMoE gates on
hidden states): the experts map a generated graph and a real one into the same space they were trained
in, so the gate is trained on inputs like those it is applied to. ``"features"`` reads the mean-pooled
raw node features, as the third-party reimplementation does; generated features are unconstrained
(``X ~ N(0, 1)``, rows summing to ~0.5) while real one-hot features lie on the simplex, so that gate is
trained on inputs unlike the test inputs. ``R_mask = Σ_j CE(y, f(Θ_j, ω_j, G)) + mean_j ‖ω_j − 1‖²``: our
reading of an ambiguous term (each masked expert must still classify; the masks stay near 1); the paper's
thresholds γ_p, γ_v in R_mask are named but their values are not given, so there is no γ field.

Any expert works that has ``embed(x, adj, mask) -> (pooled [B, h], BatchNorm inputs)``, a linear
``head`` and ``bns`` (its BatchNorm modules): :class:`DenseExpert`, or a user's PyG model through
:class:`~iclr26_graphs.methods.ogmm.adapters.PyGExpert`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, cast

import torch
import torch.nn.functional as F
from huggingface_hub import PyTorchModelHubMixin
from torch import nn
from torch_geometric.nn import DenseGATConv, DenseGCNConv, DenseGINConv

from iclr26_graphs.errors import GraphInputError

__all__ = [
    "Arch",
    "DenseExpert",
    "GraphInverter",
    "MergedGNN",
    "SoftDenseGATConv",
    "bn_matching_loss",
    "cv_squared",
    "gfma_adjacency",
    "gumbel_adjacency",
    "mask_regulariser",
]

Arch = Literal["gcn", "gat", "gin"]
GateInput = Literal["embeddings", "features", "features-sum"]


class SoftDenseGATConv(DenseGATConv):
    r"""``DenseGATConv`` whose attention is weighted by a soft adjacency: ``softmax_v(e_uv + log A_uv)``.

    For a 0/1 adjacency this is exactly PyG's masked softmax; for a soft Ã (stage 1) the gradient reaches
    Ã, which PyG's ``masked_fill(adj == 0, −inf)`` would not pass on.
    """

    def forward(self, x: torch.Tensor, adj: torch.Tensor, mask: torch.Tensor | None = None, add_loop: bool = True):  # type: ignore[override]  # noqa: D102
        b, n, _ = x.size()
        h_, c_ = self.heads, self.out_channels
        if add_loop:
            adj = adj.clone()
            idx = torch.arange(n, device=adj.device)
            adj[:, idx, idx] = 1.0
        h = self.lin(x).view(b, n, h_, c_)
        alpha = (h * self.att_src).sum(-1).unsqueeze(1) + (h * self.att_dst).sum(-1).unsqueeze(2)  # [B, N, N, H]
        # log A where A > 0 (finite gradient), −inf where A = 0 (PyG's mask; no 0 · inf = NaN in backward)
        log_adj = torch.where(adj > 0, torch.log(adj.clamp(min=1e-30)), torch.full_like(adj, float("-inf")))
        alpha = F.leaky_relu(alpha, self.negative_slope) + log_adj.unsqueeze(-1)
        alpha = alpha.softmax(dim=2)
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)
        out = torch.matmul(alpha.movedim(3, 1), h.movedim(2, 1)).movedim(1, 2)  # [B, N, H, C]
        out = out.reshape(b, n, h_ * c_) if self.concat else out.mean(dim=2)
        if self.bias is not None:
            out = out + self.bias
        if mask is not None:
            out = out * mask.view(-1, n, 1).to(x.dtype)
        return out


def _conv(arch: Arch, c_in: int, c_out: int) -> nn.Module:
    if arch == "gcn":
        return DenseGCNConv(c_in, c_out)
    if arch == "gin":
        return DenseGINConv(nn.Sequential(nn.Linear(c_in, c_out), nn.ReLU(), nn.Linear(c_out, c_out)))
    if arch == "gat":
        return SoftDenseGATConv(c_in, c_out, heads=2, concat=False)
    raise GraphInputError(f"arch = {arch!r}: expected 'gcn', 'gat' or 'gin'")


class DenseExpert(nn.Module):
    """A graph classifier ``(x [B, N, d], adj [B, N, N], mask [B, N]) → logits [B, C]`` with BatchNorm.

    ``layers`` × (dense conv → BatchNorm1d over real nodes → ReLU), mean pooling, linear head.
    """

    def __init__(self, arch: Arch, in_channels: int, hidden: int, num_classes: int, layers: int = 2) -> None:
        super().__init__()
        self.arch: Arch = arch
        self.in_channels = in_channels
        self.config = {
            "arch": arch,
            "in_channels": in_channels,
            "hidden": hidden,
            "num_classes": num_classes,
            "layers": layers,
        }
        self.convs = nn.ModuleList([_conv(arch, in_channels if i == 0 else hidden, hidden) for i in range(layers)])
        self.bns = nn.ModuleList([nn.BatchNorm1d(hidden) for _ in range(layers)])
        self.head = nn.Linear(hidden, num_classes)

    def embed(self, x: torch.Tensor, adj: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """Pooled embedding ``[B, hidden]`` and the inputs of every BatchNorm ``[#real nodes, hidden]``."""
        h = x
        bn_inputs: list[torch.Tensor] = []
        for conv, bn in zip(self.convs, self.bns, strict=True):
            h = conv(h, adj, mask)
            flat = h[mask]
            bn_inputs.append(flat)
            out = torch.zeros_like(h)
            out[mask] = F.relu(bn(flat))
            h = out
        m = mask.to(h.dtype).unsqueeze(-1)
        return (h * m).sum(1) / m.sum(1).clamp(min=1.0), bn_inputs

    def forward(
        self,
        x: torch.Tensor,
        adj: torch.Tensor,
        mask: torch.Tensor,
        mask_w: torch.Tensor | None = None,
        mask_b: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Logits ``[B, C]``; ``mask_w [C, hidden]`` / ``mask_b [C]`` scale the head (MaskCL) when given."""
        pooled, _ = self.embed(x, adj, mask)
        return masked_head_logits(self.head, pooled, mask_w, mask_b)


def masked_head_logits(
    head: nn.Linear, pooled: torch.Tensor, mask_w: torch.Tensor | None = None, mask_b: torch.Tensor | None = None
) -> torch.Tensor:
    """Logits ``[B, C]`` of ``head`` on pooled embeddings ``[B, hidden]``, its weight scaled by ``mask_w
    [C, hidden]`` and its bias by ``mask_b [C]`` when given (OGMM's MaskCL head masks)."""
    w = head.weight if mask_w is None else head.weight * mask_w
    b = head.bias if mask_b is None else head.bias * mask_b
    return F.linear(pooled, w, b)


def bn_matching_loss(
    expert: nn.Module, bn_inputs: list[torch.Tensor], form: Literal["squared", "norm"] = "squared"
) -> torch.Tensor:
    r"""``R_bn = Σ_L ‖μ_L − μ̂_L‖² + ‖σ²_L − σ̂²_L‖²`` (Eq. 9, ``form="squared"``): batch mean and (unbiased, as
    BatchNorm's running estimate) variance of each BatchNorm input against the expert's running statistics.
    ``form="norm"`` is GFMA's (DeepInversion's) hook: ``Σ_L ‖σ̂²_L − σ²_L‖₂ + ‖μ̂_L − μ_L‖₂`` with unsquared
    norms and the biased batch variance."""
    total = torch.zeros((), device=bn_inputs[0].device)
    for bn, h in zip(expert.bns, bn_inputs, strict=True):  # pyright: ignore[reportArgumentType]
        assert isinstance(bn, nn.BatchNorm1d) and bn.running_mean is not None and bn.running_var is not None
        mu = h.mean(0)
        if form == "norm":
            var = h.var(0, unbiased=False)
            total = (
                total + torch.linalg.vector_norm(bn.running_var - var) + torch.linalg.vector_norm(bn.running_mean - mu)
            )
            continue
        var = h.var(0, unbiased=True) if h.size(0) > 1 else torch.zeros_like(mu)
        total = total + ((mu - bn.running_mean) ** 2).sum() + ((var - bn.running_var) ** 2).sum()
    return total


def gumbel_adjacency(
    logits: torch.Tensor, tau: float, generator: torch.Generator | None = None, *, hard: bool = False
) -> torch.Tensor:
    r"""Binary Gumbel-softmax (Eq. 8) of symmetric edge logits ``[G, n, n]`` (``log a − log(1 − a)``).

    ``Ã = σ((ℓ + g₁ − g₂) / τ)`` with one noise draw per unordered pair (mirrored), zero diagonal;
    ``hard=True`` thresholds at 0.5 with a straight-through gradient.
    """
    n = logits.size(-1)
    u = torch.rand(logits.shape, generator=generator, device=logits.device).clamp(1e-10, 1 - 1e-10)
    v = torch.rand(logits.shape, generator=generator, device=logits.device).clamp(1e-10, 1 - 1e-10)
    noise = -torch.log(-torch.log(u)) + torch.log(-torch.log(v))  # g1 − g2 (a logistic variable)
    noise = torch.triu(noise, 1)
    noise = noise + noise.transpose(-1, -2)
    soft = torch.sigmoid((logits + noise) / tau)
    soft = soft * (1 - torch.eye(n, device=logits.device))
    if hard:
        return (soft > 0.5).to(soft.dtype) + soft - soft.detach()
    return soft


#: GFMA's edge threshold: probabilities at or below it are set to 0 before the Gumbel draw.
GFMA_EDGE_THRESHOLD = 0.9


def gfma_adjacency(probs: torch.Tensor, tau: float = 0.1, generator: torch.Generator | None = None) -> torch.Tensor:
    r"""GFMA's edge sampler on edge probabilities ``a [G, n, n]``: ``a' = a · [a > 0.9]`` (straight-through:
    the gradient of ``a``), then a hard Gumbel-softmax (τ, GFMA: 0.1) over the two "logits" ``(1 − a', a')``
    of each ordered pair, ``Ã_uv = [a' + g₁ > 1 − a' + g₀]`` forward with the soft sample's gradient,
    independent noise per ordered pair (so Ã need not be symmetric), zero diagonal."""
    n = probs.size(-1)
    kept = (probs * (probs > GFMA_EDGE_THRESHOLD).to(probs.dtype) - probs).detach() + probs
    shape = (*probs.shape, 2)
    u = torch.rand(shape, generator=generator, device=probs.device).clamp(1e-10, 1 - 1e-10)
    gumbel = -torch.log(-torch.log(u))
    soft = ((torch.stack([1 - kept, kept], -1) + gumbel) / tau).softmax(-1)
    hard = F.one_hot(soft.argmax(-1), 2).to(soft.dtype)
    sample = (hard - soft.detach() + soft)[..., 1]
    return sample * (1 - torch.eye(n, device=probs.device, dtype=probs.dtype))


class GraphInverter(nn.Module):
    """Learnable node features ``X [G, n, d] ~ N(0, 1)`` and a 3-layer edge MLP (Eq. 7) for one expert.

    ``feature_map="softmax"`` feeds ``softmax(X)`` (rows on the simplex, like one-hot node features) to the
    expert instead of ``X`` (the paper); the edge MLP reads the mapped features too.
    """

    def __init__(
        self,
        num_graphs: int,
        num_nodes: int,
        features: int,
        width: int = 64,
        generator: torch.Generator | None = None,
        *,
        feature_map: Literal["identity", "softmax"] = "identity",
    ) -> None:
        super().__init__()
        if num_nodes < 2:
            raise GraphInputError(f"num_nodes = {num_nodes}: a generated graph needs at least 2 nodes")
        if feature_map not in ("identity", "softmax"):
            raise GraphInputError(f"feature_map = {feature_map!r}: expected 'identity' or 'softmax'")
        self.feature_map = feature_map
        self.x = nn.Parameter(torch.randn(num_graphs, num_nodes, features, generator=generator))
        self.edge_mlp = nn.Sequential(
            nn.Linear(2 * features, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1)
        )

    def features(self) -> torch.Tensor:
        """``[G, n, d]``: ``X`` or ``softmax(X)``."""
        return self.x.softmax(-1) if self.feature_map == "softmax" else self.x

    def _edge_out(self) -> torch.Tensor:
        x = self.features()
        g, n, d = x.shape
        pair = torch.cat([x.unsqueeze(2).expand(g, n, n, d), x.unsqueeze(1).expand(g, n, n, d)], -1)
        return self.edge_mlp(pair).squeeze(-1)

    def edge_logits(self) -> torch.Tensor:
        """``[G, n, n]`` symmetric ``log a − log(1 − a)``, ``a = σ(MLP([x_u; x_v]))`` averaged over (u, v), (v, u)."""
        out = self._edge_out()
        return (out + out.transpose(1, 2)) / 2

    def edge_probs(self) -> torch.Tensor:
        """``a [G, n, n]`` (zero diagonal)."""
        n = self.x.size(1)
        return torch.sigmoid(self.edge_logits()) * (1 - torch.eye(n, device=self.x.device))

    def forward(
        self,
        tau: float,
        generator: torch.Generator | None = None,
        *,
        hard: bool = False,
        sampler: Literal["gumbel", "gfma"] = "gumbel",
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(X [G, n, d], Ã [G, n, n])`` with a fresh Gumbel draw (``hard``: straight-through 0/1).
        ``sampler="gfma"``: GFMA's form, :func:`gfma_adjacency` of ``a = (σ(o) + σ(o)ᵀ) / 2`` (``hard`` unused)."""
        if sampler == "gfma":
            a = torch.sigmoid(self._edge_out())
            return self.features(), gfma_adjacency((a + a.transpose(1, 2)) / 2, tau, generator)
        return self.features(), gumbel_adjacency(self.edge_logits(), tau, generator, hard=hard)

    @torch.no_grad()
    def hard_graphs(
        self, store: Literal["threshold", "sample"] = "threshold", generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The stored graphs (detached): features and the adjacency ``a > 0.5`` (the paper) or one
        symmetric Bernoulli(a) draw (``store="sample"``)."""
        a = self.edge_probs()
        if store == "sample":
            draw = (torch.rand(a.shape, generator=generator).to(a.device) < a).float().triu(1)
            adj = draw + draw.transpose(1, 2)
        else:
            adj = (a > 0.5).float()
        return self.features().detach().clone(), adj


def mask_regulariser(
    masks: Sequence[torch.Tensor], form: Literal["l2", "gfma"] = "l2", t: float = 0.2, eta: float = 0.5
) -> torch.Tensor:
    """The closeness term of R_mask over one expert's masks ω (``mask_w``, ``mask_b``). ``"l2"`` (ours):
    ``Σ mean((ω − 1)²)``. ``"gfma"`` (GFMA's ``RegLoss`` with ``mask_loss = 100``): ``Σ |mean(ω) − η| +
    |mean([|ω − 1| < t]) − η|`` (the count term carries no gradient)."""
    total = torch.zeros((), device=masks[0].device)
    for w in masks:
        if form == "gfma":
            near = ((w - 1).abs() < t).float().mean()
            total = total + (w.mean() - eta).abs() + (near - eta).abs()
        else:
            total = total + ((w - 1) ** 2).mean()
    return total


def cv_squared(values: torch.Tensor) -> torch.Tensor:
    """Squared coefficient of variation ``Var / Mean²`` (the load-balancing loss; 0 for one value)."""
    if values.numel() <= 1:
        return torch.zeros((), device=values.device)
    return values.float().var() / (values.float().mean() ** 2 + 1e-10)


class MergedGNN(nn.Module, PyTorchModelHubMixin):
    """Noisy top-k MoE over frozen experts with real-valued masks on their classifier heads.

    Args:
        experts: The frozen experts (each with ``embed``, ``head``, ``bns``; see the module docstring):
            :class:`DenseExpert` s or a user's PyG models wrapped in
            :class:`~iclr26_graphs.methods.ogmm.adapters.PyGExpert`. Omit them and give ``expert_configs``
            to rebuild :class:`DenseExpert` s (what loading does).
        in_channels: Node feature size ``d``.
        top_k: Experts mixed per graph.
        gate_input: ``"embeddings"`` (the experts' pooled hidden embeddings), ``"features"`` (mean-pooled
            node features) or ``"features-sum"`` (summed raw node features, as GFMA's gate).
        noise_seed: Seed of the model's own generator of the gate noise ``ε`` (training only; the global
            RNG is never read). Its state is a buffer (``noise_state``), saved with the weights, so a
            reloaded model continues training with the same noise.
        expert_configs: :attr:`DenseExpert.config` of every expert (filled in from ``experts`` when they
            are all :class:`DenseExpert`).
        expert_specs: How to rebuild each expert of a model over :class:`PyGExpert` s (written by
            ``save_pretrained``; see :meth:`PyGExpert.spec`).

    **Inputs.** ``forward`` takes a dense batch ``(x [B, N, d], adj [B, N, N], mask [B, N])`` and returns
    ``(Γ(G) [B, C], gates [B, M], expert logits [B, M, C])``, or PyG's inputs, ``(x [n, d], edge_index [2,
    E], batch [n])`` or a ``Batch``/``Data``, and returns the logits ``[B, C]`` (``return_all=True``: the
    3-tuple). PyG inputs are made dense with ``to_dense_batch`` / ``to_dense_adj`` (0/1, symmetric as given,
    no self-loops).

    **Saving.** ``save_pretrained(dir)`` / ``MergedGNN.from_pretrained(dir)`` (offline, local folder) keep
    the gate, the masks, the noise generator's state and every expert, bit for bit. Over
    :class:`DenseExpert` s the experts are rebuilt from ``expert_configs``. Over :class:`PyGExpert` s
    ``config.json`` names each user model's class (``module:QualName``) and how to rebuild it: a model
    with :class:`~huggingface_hub.PyTorchModelHubMixin` also saves itself with its own ``save_pretrained``
    in ``dir/experts/<i>/`` and is rebuilt with its ``from_pretrained``; a plain ``nn.Module`` is rebuilt as
    ``Class(**init)`` (``init``: the ``PyGExpert``'s ``init=``, default the model's ``config`` dict). The
    weights of all of them are in ``model.safetensors``. Loading takes the classes you pass
    (``from_pretrained(dir, expert_classes=[MyGCN])``), else takes them only from modules already imported
    (import your model's module first) or this workspace's packages unless ``trust_expert_classes=True``,
    never from the current directory or the saved folder (``iclr26_shared.models.resolve_class``); a class
    that cannot be found,
    imported or built is a one-line :class:`GraphInputError`.
    """

    def __init__(
        self,
        experts: Sequence[nn.Module] | None = None,
        in_channels: int = 1,
        top_k: int = 2,
        *,
        gate_input: GateInput = "embeddings",
        noise_seed: int = 0,
        expert_configs: list[dict[str, Any]] | None = None,
        expert_specs: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__()
        if experts is None:
            if expert_specs:
                raise GraphInputError(
                    "MergedGNN: expert_specs are rebuilt by MergedGNN.from_pretrained(dir), not by the constructor"
                )
            if not expert_configs:
                raise GraphInputError("MergedGNN: give the experts (or expert_configs to rebuild DenseExperts)")
            experts = [DenseExpert(**c) for c in expert_configs]
        experts = list(experts)
        if not 1 <= top_k <= len(experts):
            raise GraphInputError(f"top_k = {top_k}: expected 1..{len(experts)} (the number of experts)")
        if gate_input not in ("embeddings", "features", "features-sum"):
            raise GraphInputError(f"gate_input = {gate_input!r}: expected 'embeddings', 'features' or 'features-sum'")
        for e in experts:
            if not (callable(getattr(e, "embed", None)) and isinstance(getattr(e, "head", None), nn.Linear)):
                raise GraphInputError(
                    f"MergedGNN: expert {type(e).__name__} needs embed(x, adj, mask) and a linear head "
                    "(wrap a PyG model in iclr26_graphs.methods.ogmm.PyGExpert)"
                )
        self.experts = nn.ModuleList(experts)
        for p in self.experts.parameters():
            p.requires_grad_(False)
        self.top_k = top_k
        self.in_channels = in_channels
        self.noise_seed = noise_seed
        self.gate_input: GateInput = gate_input
        self.register_buffer("noise_state", torch.Generator().manual_seed(noise_seed).get_state())
        self._noise_gen: torch.Generator | None = None
        self.register_load_state_dict_post_hook(_reset_noise_generator)
        heads: list[nn.Linear] = [e.head for e in experts]  # pyright: ignore[reportAssignmentType]
        self.mask_w = nn.ParameterList([nn.Parameter(torch.ones_like(h.weight)) for h in heads])
        self.mask_b = nn.ParameterList([nn.Parameter(torch.ones_like(h.bias)) for h in heads])
        width = sum(h.in_features for h in heads) if gate_input == "embeddings" else in_channels
        self.w_gate = nn.Parameter(torch.zeros(width, len(experts)))
        self.w_noise = nn.Parameter(torch.zeros(width, len(experts)))
        configs = (
            [getattr(e, "config", None) for e in experts] if all(isinstance(e, DenseExpert) for e in experts) else None
        )
        self.expert_configs = configs
        if isinstance(getattr(self, "_hub_mixin_config", None), dict):
            self._hub_mixin_config["expert_configs"] = configs  # pyright: ignore[reportOptionalSubscript,reportIndexIssue]
            self._hub_mixin_config["gate_input"] = gate_input  # pyright: ignore[reportOptionalSubscript,reportIndexIssue]
            self._hub_mixin_config["noise_seed"] = noise_seed  # pyright: ignore[reportOptionalSubscript,reportIndexIssue]

    def _save_pretrained(self, save_directory: Path) -> None:
        import json

        if self.expert_configs is None:  # PyGExperts: each expert's class and how to rebuild it, in config.json
            specs = []
            for i, e in enumerate(self.experts):
                if isinstance(e, DenseExpert):
                    specs.append({"kind": "dense", "config": e.config})
                elif callable(getattr(e, "spec", None)):
                    spec = e.spec()  # pyright: ignore[reportCallIssue]
                    if spec["hub"]:
                        e.model.save_pretrained(Path(save_directory) / "experts" / str(i))  # pyright: ignore[reportCallIssue,reportAttributeAccessIssue]
                    specs.append(spec)
                else:
                    raise GraphInputError(
                        f"MergedGNN.save_pretrained: expert {i} ({type(e).__name__}) is neither a DenseExpert nor "
                        "a PyGExpert, so it cannot be rebuilt on loading"
                    )
            config = {
                "in_channels": self.in_channels,
                "top_k": self.top_k,
                "gate_input": self.gate_input,
                "noise_seed": self.noise_seed,
                "expert_specs": specs,
            }
            (Path(save_directory) / "config.json").write_text(json.dumps(config, sort_keys=True, indent=2))
        super()._save_pretrained(save_directory)

    @classmethod
    def _from_pretrained(  # type: ignore[override]
        cls,
        *,
        model_id: str,
        map_location: str = "cpu",
        strict: bool = False,
        trust_expert_classes: bool = False,
        expert_classes: Sequence[type] = (),
        **kwargs: Any,
    ) -> MergedGNN:
        specs = kwargs.get("expert_specs")
        if not specs:
            return super()._from_pretrained(model_id=model_id, map_location=map_location, strict=strict, **kwargs)  # pyright: ignore[reportReturnType]
        from iclr26_graphs.methods.ogmm.adapters import expert_from_spec

        experts = [
            DenseExpert(**spec["config"])
            if spec["kind"] == "dense"
            else expert_from_spec(
                spec, Path(model_id) / "experts" / str(i), trust=trust_expert_classes, classes=expert_classes
            )
            for i, spec in enumerate(specs)
        ]
        model = cls(
            experts,
            kwargs.get("in_channels", 1),
            kwargs.get("top_k", 2),
            gate_input=kwargs.get("gate_input", "embeddings"),
            noise_seed=kwargs.get("noise_seed", 0),
        )
        return cls._load_as_safetensor(model, str(Path(model_id) / "model.safetensors"), map_location, strict)  # pyright: ignore[reportReturnType]

    def gate_noise(self, like: torch.Tensor) -> torch.Tensor:
        """``ε ~ N(0, 1)`` shaped like ``like``, from the model's own generator (its state kept in the
        ``noise_state`` buffer, which is saved and loaded with the weights)."""
        if self._noise_gen is None:
            self._noise_gen = torch.Generator()
            self._noise_gen.set_state(cast(torch.Tensor, self.noise_state).cpu())
        out = torch.randn(like.shape, generator=self._noise_gen).to(like.device, like.dtype)
        self.noise_state.copy_(self._noise_gen.get_state())  # pyright: ignore[reportCallIssue,reportAttributeAccessIssue]
        return out

    def train(self, mode: bool = True) -> MergedGNN:
        """The gate trains; the frozen experts always run in eval mode (their BatchNorm statistics stay)."""
        super().train(mode)
        self.experts.eval()
        return self

    def embeddings(self, x: torch.Tensor, adj: torch.Tensor, mask: torch.Tensor) -> list[torch.Tensor]:
        """Every expert's pooled embedding ``[B, h_j]``."""
        return [e.embed(x, adj, mask)[0] for e in self.experts]  # pyright: ignore[reportCallIssue]

    def _gate_logits(
        self, x: torch.Tensor, mask: torch.Tensor, pooled: list[torch.Tensor], noisy: bool
    ) -> torch.Tensor:
        if self.gate_input == "embeddings":
            g = torch.cat(pooled, -1).detach()
        else:
            m = mask.to(x.dtype).unsqueeze(-1)
            g = (x * m).sum(1)  # features-sum: GFMA's gate input, the summed raw node features
            g = g / m.sum(1).clamp(min=1.0) if self.gate_input == "features" else g
        clean = g @ self.w_gate
        return clean + self.gate_noise(clean) * F.softplus(g @ self.w_noise) if noisy else clean

    def _sparse(self, logits: torch.Tensor) -> torch.Tensor:
        top, idx = logits.topk(self.top_k, dim=-1)
        return torch.full_like(logits, float("-inf")).scatter(-1, idx, top).softmax(-1)

    def gates(self, x: torch.Tensor, adj: torch.Tensor, mask: torch.Tensor, noisy: bool = False) -> torch.Tensor:
        """``[B, M]`` gate weights: softmax over the top-k of ``g W_g (+ ε softplus(g W_n))``, 0 elsewhere."""
        pooled = self.embeddings(x, adj, mask) if self.gate_input == "embeddings" else []
        return self._sparse(self._gate_logits(x, mask, pooled, noisy))

    def _heads(self, pooled: list[torch.Tensor]) -> torch.Tensor:
        outs = []
        for e, h, mw, mb in zip(self.experts, pooled, self.mask_w, self.mask_b, strict=True):
            head: nn.Linear = e.head  # pyright: ignore[reportAssignmentType]
            outs.append(F.linear(h, head.weight * mw, head.bias * mb))
        return torch.stack(outs, 1)

    def expert_logits(self, x: torch.Tensor, adj: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """``[B, M, C]``: every masked expert's logits."""
        return self._heads(self.embeddings(x, adj, mask))

    def forward(
        self,
        x: Any,
        adj: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        *,
        return_all: bool | None = None,
    ) -> Any:
        """Dense ``(x [B, N, d], adj [B, N, N], mask [B, N])``: ``(Γ(G) [B, C], gates [B, M], expert logits
        [B, M, C])``. PyG ``(x [n, d], edge_index [2, E], batch [n])`` or a ``Batch``/``Data``: the logits
        ``[B, C]`` (``return_all=True``: the 3-tuple). The gate noise is on in training."""
        dense_in = not (hasattr(x, "edge_index") or (adj is not None and _is_edge_index(x, adj)))
        x, adj, mask = to_dense_inputs(x, adj, mask)
        pooled = self.embeddings(x, adj, mask)
        gates = self._sparse(self._gate_logits(x, mask, pooled, self.training))
        each = self._heads(pooled)
        out = (gates.unsqueeze(-1) * each).sum(1)
        return (out, gates, each) if (dense_in if return_all is None else return_all) else out


def _reset_noise_generator(module: nn.Module, _incompatible: Any) -> None:
    """After ``load_state_dict``: the noise generator restarts from the loaded ``noise_state``."""
    object.__setattr__(module, "_noise_gen", None)


def _is_edge_index(x: torch.Tensor, edge_index: torch.Tensor) -> bool:
    return x.dim() == 2 and edge_index.dim() == 2 and edge_index.size(0) == 2 and not edge_index.is_floating_point()


def to_dense_inputs(
    x: Any, adj: torch.Tensor | None = None, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(x [B, N, d], adj [B, N, N], mask [B, N])`` from a dense batch (returned as is), PyG's ``(x [n, d],
    edge_index [2, E], batch [n] or None)`` or a ``Batch``/``Data`` (``to_dense_batch``, ``to_dense_adj``
    clipped to 0/1, self-loops dropped); a one-line :class:`GraphInputError` otherwise."""
    from torch_geometric.utils import to_dense_adj, to_dense_batch

    if hasattr(x, "edge_index"):  # a torch_geometric Batch or Data
        x, adj, mask = x.x, x.edge_index, getattr(x, "batch", None)
        if not isinstance(x, torch.Tensor) or adj is None:
            raise GraphInputError("MergedGNN: the Batch/Data needs node features x and edge_index")
    if not isinstance(x, torch.Tensor) or adj is None:
        raise GraphInputError("MergedGNN: expected (x, adj, mask), (x, edge_index, batch) or a PyG Batch")
    if _is_edge_index(x, adj):
        batch = mask if mask is not None else torch.zeros(x.size(0), dtype=torch.long, device=x.device)
        xd, node_mask = to_dense_batch(x, batch)
        a = to_dense_adj(adj, batch, max_num_nodes=xd.size(1), batch_size=xd.size(0)).clamp(max=1.0)
        idx = torch.arange(xd.size(1), device=x.device)
        a[:, idx, idx] = 0.0
        return xd, a, node_mask
    if mask is None or x.dim() != 3 or adj.dim() != 3:
        raise GraphInputError(
            f"MergedGNN: expected a dense batch (x [B, N, d], adj [B, N, N], mask [B, N]) or PyG inputs "
            f"(x [n, d], edge_index [2, E], batch [n]); got x {list(x.shape)} and {list(adj.shape)}"
        )
    return x, adj, mask
