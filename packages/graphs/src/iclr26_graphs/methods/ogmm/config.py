"""Config of the ``ogmm`` method (frozen dataclass; every field is a CLI flag) and its presets.

Paper defaults (Wang et al., ICLR 2026, §4 and App. B.2, via our notes): 2-layer 32-dimensional GCN, GAT
and GIN experts per source domain; stage 1 runs AdamW for 200 epochs; stage 2 trains the noisy top-k MoE
with AdamW for 20 epochs, ``λ_gate = 0.1``, ``λ_mask = 0.01``; top-k searched over 1..5 (2–4 best); 5 runs.
Values the paper does not give and the third-party reimplementation chose (lr 1e-2, 64 graphs per
expert, τ = 0.5, edge-MLP width 64) are ours too. The default data (``molecules``: ase's G2 molecules plus
substituted derivatives, label = hydrogen-bond donor) and ``motifs`` (our generator) are described in
:mod:`iclr26_graphs.data.graph_domains` and :mod:`iclr26_graphs.data.molecules`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import annotated_types as at

from iclr26_shared.config import NonNegFloat, PosFloat, PosInt, UnitFloat, validate
from iclr26_shared.errors import ConfigError

__all__ = ["DATASETS", "PRESETS", "MergeConfig", "OGMMConfig"]

Dataset = Literal["molecules", "smallworld", "motifs", "MUTAG", "PTC_MR", "NCI1", "REDDIT-BINARY"]
DATASETS: tuple[str, ...] = ("molecules", "smallworld", "motifs", "MUTAG", "PTC_MR", "NCI1", "REDDIT-BINARY")
ArchName = Literal["gcn", "gat", "gin"]
Density = Annotated[float, at.Ge(0)]
#: The largest Watts–Strogatz lattice degree of ``smallworld`` (``graph_domains.SMALLWORLD_K``; kept here so
#: that the config imports no torch).
SMALLWORLD_MAX_K = 8


@dataclass(frozen=True)
class MergeConfig:
    """OGMM's own settings: stage 1 (graph generation from each frozen expert) and stage 2 (the merged
    MoE), for :func:`~iclr26_graphs.methods.ogmm.train.merge_experts` on any experts. ``top_k`` is checked
    against the experts actually merged (by ``merge_experts`` / ``MergedGNN``), not here."""

    gen_graphs: PosInt = 64
    """Stage 1: graphs generated per expert (the reimplementation: 64)."""
    gen_nodes: Annotated[int, at.Ge(2)] = 20
    """Stage 1: nodes per generated graph (our choice: a typical source size; the paper does not say)."""
    gen_epochs: PosInt = 200
    """Stage 1: AdamW epochs (the paper: 200)."""
    gen_lr: PosFloat = 0.01
    """Stage 1: AdamW learning rate."""
    tau: PosFloat = 0.5
    """Stage 1: Gumbel-softmax temperature τ."""
    feature_map: Literal["identity", "softmax"] = "identity"
    """Stage 1: the expert sees the learned X (identity, the paper) or softmax(X) (rows on the simplex like
    one-hot node features; our switch: with X ~ N(0, 1) the GIN experts' inversion collapses)."""
    store: Literal["threshold", "sample"] = "threshold"
    """Stage 1: stored adjacency a > 0.5 (the paper) or one Bernoulli(a) draw (our switch: a sparse a below
    0.5 everywhere thresholds to an empty graph)."""
    gumbel_hard: bool = False
    """Stage 1: straight-through hard Gumbel adjacency (forward 0/1, gradient of the soft Ã) instead of the
    paper's soft Ã; the stored graphs are hard either way."""
    edge_width: PosInt = 64
    """Stage 1: width of the 3-layer edge MLP."""
    lambda_bn: NonNegFloat = 1.0
    """Weight of R_bn in L_gen (the paper: 1)."""
    lambda_ce: NonNegFloat = 1.0
    """Weight of the CE term of L_gen (the paper: CE + R_bn + R_conf, weight 1; GFMA: 10)."""
    bn_form: Literal["squared", "norm"] = "squared"
    """Stage 1: R_bn with squared norms and the unbiased variance (squared, the paper's Eq. 9 as we read it) or
    GFMA's unsquared L2 norms with the biased variance (norm)."""
    edge_sampler: Literal["gumbel", "gfma"] = "gumbel"
    """Stage 1: the binary Gumbel-softmax of Eq. 8 on symmetric logits (gumbel) or GFMA's form (gfma: the
    symmetrised probabilities thresholded at 0.9, then a hard Gumbel-softmax over (1 − a, a) with τ = tau;
    GFMA uses tau 0.1)."""
    lambda_conf: NonNegFloat = 1.0
    """Weight of R_conf (entropy) in L_gen (the paper: 1)."""
    gate_input: Literal["embeddings", "features", "features-sum"] = "embeddings"
    """Stage 2: what the gate reads: the frozen experts' pooled hidden embeddings (embeddings, as GMoE gates on
    hidden states; the experts map generated and real graphs into the space they were trained in) or the
    mean-pooled node features (features, the third-party reimplementation; generated features are
    unconstrained while real ones are one-hot, so that gate is trained on inputs unlike the test inputs).
    The paper does not say; the run also trains the other gate and reports both gates' own-domain mass."""
    top_k: PosInt = 2
    """Stage 2: experts per graph (the paper: 2–4 best; 2 at its best λ cell)."""
    merge_epochs: PosInt = 20
    """Stage 2: AdamW epochs (the paper: 20)."""
    merge_lr: PosFloat = 0.01
    """Stage 2: AdamW learning rate."""
    merge_batch: PosInt = 32
    """Stage 2: batch size."""
    lambda_gate: NonNegFloat = 0.1
    """λ_gate of the CV² load-balancing loss (the paper: 0.1)."""
    lambda_mask: NonNegFloat = 0.01
    """λ_mask of the mask regulariser R_mask (stage 2)."""
    mask_reg: Literal["l2", "gfma"] = "l2"
    """Stage 2: R_mask's closeness term: mean_j ‖ω_j − 1‖² (l2, ours) or GFMA's Σ_j |mean ω − η| +
    |share of |ω − 1| < t − η| with t = mask_t, η = mask_eta (gfma; summed over the experts)."""
    mask_t: PosFloat = 0.2
    """Stage 2, mask_reg gfma: the threshold t (GFMA: 0.2; the paper names γ_p, γ_v without values)."""
    mask_eta: UnitFloat = 0.5
    """Stage 2, mask_reg gfma: the target share η (GFMA: 0.5)."""
    """λ_mask of R_mask (the paper: 0.01)."""

    def __post_init__(self) -> None:
        validate(self)


@dataclass(frozen=True)
class OGMMConfig(MergeConfig):
    """Data-free merging of GNN experts from density-shifted source domains, tested on a held-out target."""

    dataset: Dataset = "molecules"
    """molecules (offline: ase's G2 molecules + seeded substituted derivatives, label = hydrogen-bond
    donor, element + degree one-hot features), smallworld (offline, networkx: Watts–Strogatz small worlds vs
    Erdős–Rényi graphs of the same size and edge count, one-hot degree features; the set whose density
    split really hurts the experts), motifs (offline generator: ER base + house / 5-cycle motif, one-hot
    degree features) or a TU set (MUTAG, PTC_MR, NCI1, REDDIT-BINARY: read from $ICLR26_DATA/pyg/tu/NAME/raw,
    downloaded there through PyG when online)."""
    per_domain: Annotated[int, at.Ge(8)] = 400
    """motifs: training graphs per source domain (a quarter as many more are held out for in-domain tests);
    molecules, smallworld: graphs per source domain, a fifth of them held out for in-domain tests."""
    target_size: Annotated[int, at.Ge(2)] = 400
    """motifs, molecules, smallworld: graphs in the target domain (molecules, smallworld: 2 · per_domain +
    target_size in all)."""
    density_a: tuple[Density, Density] = (0.5, 1.0)
    """motifs: edges-per-node range of source A (sparse)."""
    density_b: tuple[Density, Density] = (3.0, 4.0)
    """motifs: edges-per-node range of source B (dense)."""
    target: Literal["mixture", "between"] = "mixture"
    """Target: a fresh mixture of A- and B-like graphs (the paper's assumption P_T = Σ α_i P_i) or graphs of
    density between the two sources."""
    min_nodes: Annotated[int, at.Ge(2)] = 12
    """motifs: smallest base graph (5 motif nodes come on top); smallworld: smallest graph (above 8, the
    largest lattice degree)."""
    max_nodes: Annotated[int, at.Ge(2)] = 20
    """motifs: largest base graph; smallworld: largest graph (also the degree one-hot size)."""
    max_degree: PosInt = 7
    """Degree one-hot size − 1 (larger degrees share the last slot) when graphs have no node features."""
    archs: Annotated[tuple[ArchName, ...], at.MinLen(1)] = ("gcn", "gat", "gin")
    """Expert architectures; each is trained on A and on B (2 × len(archs) experts)."""
    hidden: PosInt = 32
    """Expert width (the paper: 32)."""
    layers: PosInt = 2
    """Expert depth (the paper: 2)."""
    expert_epochs: PosInt = 60
    """Epochs of each expert on its source domain (Adam, batch 64)."""
    expert_lr: PosFloat = 0.01
    """Learning rate of the experts."""
    topk_sweep: tuple[PosInt, ...] = (1, 2, 3, 4, 5)
    """Stage 2 is also trained at each of these k for the top-k claim (empty: none); every k must be at most
    the number of experts (a larger k is a config error, not skipped)."""
    kd_epochs: PosInt = 60
    """Data-free KD baseline: epochs of the student on the generated graphs."""
    kd_temperature: PosFloat = 2.0
    """Data-free KD baseline: distillation temperature."""

    def __post_init__(self) -> None:
        validate(self)
        if self.min_nodes > self.max_nodes:
            raise ConfigError("min_nodes", self.min_nodes, f"at most max_nodes = {self.max_nodes}")
        for name in ("density_a", "density_b"):
            lo, hi = getattr(self, name)
            if lo > hi:
                raise ConfigError(name, (lo, hi), "a range (low, high) with low <= high")
        if self.density_a[1] > self.density_b[0]:
            raise ConfigError(
                "density_b", self.density_b, f"a range above density_a = {self.density_a} (A sparse, B dense)"
            )
        if self.dataset == "smallworld" and self.min_nodes <= SMALLWORLD_MAX_K:
            raise ConfigError(
                "min_nodes", self.min_nodes, f"above {SMALLWORLD_MAX_K} on smallworld (the largest lattice degree k)"
            )
        if len(set(self.archs)) != len(self.archs):
            raise ConfigError("archs", self.archs, "distinct architectures")
        experts = 2 * len(self.archs)
        if self.top_k > experts:
            raise ConfigError("top_k", self.top_k, f"at most the number of experts, 2 × {len(self.archs)} = {experts}")
        too_big = [k for k in self.topk_sweep if k > experts]
        if too_big:
            raise ConfigError(
                "topk_sweep",
                self.topk_sweep,
                f"values at most the number of experts, 2 × {len(self.archs)} = {experts} ({too_big} too large)",
            )

    @property
    def num_experts(self) -> int:
        """Experts: every architecture on both sources."""
        return 2 * len(self.archs)


PRESETS: dict[str, OGMMConfig] = {
    "smoke": OGMMConfig(
        per_domain=48,
        target_size=40,
        archs=("gcn", "gin"),
        hidden=16,
        expert_epochs=8,
        gen_graphs=8,
        gen_nodes=10,
        gen_epochs=10,
        edge_width=16,
        topk_sweep=(1, 2),
        merge_epochs=3,
        kd_epochs=3,
    ),
    # smallworld: the offline set whose density split is a real shift (the experts lose >= 20 points off their
    # domain), so claim 1 can be judged; on molecules the shift control fails (kept as a named set)
    "quick": OGMMConfig(dataset="smallworld", expert_epochs=40, kd_epochs=40),
    "full": OGMMConfig(per_domain=1000, target_size=1000, expert_epochs=100, gen_graphs=128, kd_epochs=100),
}
