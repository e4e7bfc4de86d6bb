"""Config of the ``fgl`` method (frozen dataclass; every field is a CLI flag) and its presets.

Defaults follow the notes (§5 of ``research/papers-vision-graphs.md``): ``N_T`` = 8 (the paper finds
6–10 best), ``K_L ≤ 2``, ``β1 + β2 ≤ 1``, ``γ ∈ [0, 1]``, ``k ∈ {3, 5, 10}``. The paper's per-data-set
values (its appendix K) were not available, so ``β1 = 0.3, β2 = 0.5, γ = 0.3, k = 5`` are our choices.
The cSBM follows Chien et al. (2021): ``d = 5``, ``ε = 3.25``, ``n / f = 2.5``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from iclr26_graphs.graph_names import OFFLINE_GRAPHS, ONLINE_GRAPHS
from iclr26_shared.config import check_choice, check_fraction, check_positive, check_range
from iclr26_shared.errors import ConfigError

__all__ = ["BASELINES", "FGLConfig", "PRESETS"]

BASELINES: tuple[str, ...] = ("gcn", "appnp", "gcnii")


@dataclass(frozen=True)
class FGLConfig:
    """Forest-based graph learning vs GCN / APPNP / GCNII on node classification."""

    dataset: str = "csbm"
    """Graph: csbm (swept over --phis), drosophila-left, drosophila-right, mouse-dti (offline); cora, citeseer,
    pubmed, cornell, texas, wisconsin, actor (download through PyG when online)."""
    phis: tuple[float, ...] = (-0.5, -0.25, 0.25, 0.5)
    """cSBM only: the φ values swept (φ < 0 heterophilous, φ > 0 homophilous, |φ| → 1 graph-only signal)."""
    csbm_nodes: int = 1000
    """cSBM only: number of nodes n (even)."""
    csbm_features: int = 400
    """cSBM only: feature size f (Chien et al.: n / f = 2.5)."""
    csbm_degree: float = 5.0
    """cSBM only: expected degree d."""
    csbm_epsilon: float = 3.25
    """cSBM only: signal strength ε above the detection threshold."""
    train_per_class: int = 50
    """Labelled training nodes per class (random split, capped at 40 % of a class; PyG sets use their
    standard splits). 50 per class is 10 % of the default 1000-node cSBM."""
    val_per_class: int = 100
    """Validation nodes per class (model selection and the pseudo-label form)."""
    split_index: int = 0
    """Which Geom-GCN split of WebKB/Actor."""
    seeds: int = 2
    """Repetitions (graph draw, split and initialisation), seeds seed, seed+1, ...; accuracy is mean ± std."""
    compare: str = "gcn,appnp,gcnii"
    """Comma-separated baselines trained by the same loop (gcn, appnp, gcnii; empty for none)."""
    ablations: bool = True
    """Also train the paper's ablations: uniform trees, a single tree, without global / local sub-module."""
    ablation_phi: float = -0.5
    """cSBM only: the φ (one of --phis) on which the ablations run."""
    hidden: int = 64
    """Hidden size d of every model."""
    dropout: float = 0.5
    """Dropout of every model."""
    lr: float = 0.01
    """Adam learning rate."""
    weight_decay: float = 5e-4
    """Adam weight decay."""
    epochs: int = 150
    """Maximum training epochs (full batch)."""
    patience: int = 40
    """Stop after this many epochs without a better validation accuracy."""
    num_trees: int = 8
    """N_T: spanning trees in the forest (the paper: 6–10 best)."""
    knn_k: int = 5
    """k of the kNN augmentation in pseudo-label space (0: no augmentation, Ĝ = G)."""
    beta1: float = 0.3
    """β1: weight of the normalised adjacency of Ĝ in the local propagation."""
    beta2: float = 0.5
    """β2: weight of the estimator attention α in the local propagation (β1 + β2 ≤ 1)."""
    k_local: int = 2
    """K_L: local propagation steps (the paper: ≤ 2)."""
    gamma: float = 0.3
    """γ: H'' = (1 − γ) H' + γ H."""
    pseudo_model: Literal["auto", "linear", "sgc"] = "auto"
    """Pseudo-labels from softmax(XW) (linear), softmax(ÂXW) (sgc), or the better on validation (auto)."""
    pseudo_epochs: int = 200
    """Epochs of the pseudo-label logistic regression."""
    estimator_channels: int = 32
    """c: size of Q and K in the homophily estimator."""
    estimator_epochs: int = 200
    """Epochs of the homophily estimator."""
    tree_sampling: Literal["homophily", "uniform"] = "homophily"
    """Spanning trees ∝ Π s(e) (homophily-guided, the paper) or uniform (ablation)."""
    modules: Literal["both", "global", "local"] = "both"
    """Fuser sub-modules: both; global (without local); local (without global)."""
    normalize_tree_weights: bool = True
    """Rescale α over each node's tree neighbours before the tree aggregation [our choice; see README]."""
    sampler: Literal["cycle-popping", "wilson"] = "cycle-popping"
    """Wilson's algorithm as vectorised cycle popping, or the sequential loop-erased walk."""
    appnp_k: int = 10
    """APPNP propagation steps K."""
    appnp_alpha: float = 0.1
    """APPNP teleport probability α."""
    gcnii_layers: int = 8
    """GCNII depth."""

    def __post_init__(self) -> None:
        check_choice("dataset", self.dataset, OFFLINE_GRAPHS + ONLINE_GRAPHS)
        if not self.phis:
            raise ConfigError("phis", self.phis, "at least one φ")
        for i, phi in enumerate(self.phis):
            check_range(f"phis[{i}]", phi, -1.0, 1.0)
        if self.csbm_nodes < 4 or self.csbm_nodes % 2:
            raise ConfigError("csbm_nodes", self.csbm_nodes, "an even number >= 4")
        for name in ("csbm_features", "train_per_class", "val_per_class", "seeds", "hidden", "epochs", "patience"):
            check_positive(name, getattr(self, name))
        for name in ("num_trees", "pseudo_epochs", "estimator_channels", "estimator_epochs"):
            check_positive(name, getattr(self, name))
        check_range("knn_k", self.knn_k, 0)
        for name in ("appnp_k", "gcnii_layers"):
            check_positive(name, getattr(self, name))
        check_positive("csbm_degree", self.csbm_degree)
        check_positive("csbm_epsilon", self.csbm_epsilon, allow_zero=True)
        check_positive("lr", self.lr)
        check_positive("weight_decay", self.weight_decay, allow_zero=True)
        check_range("split_index", self.split_index, 0)
        for name in ("dropout", "beta1", "beta2", "gamma", "appnp_alpha"):
            check_fraction(name, getattr(self, name))
        if self.beta1 + self.beta2 > 1:
            raise ConfigError("beta2", self.beta2, f"at most 1 − beta1 = {1 - self.beta1:g}")
        check_range("k_local", self.k_local, 0, 2)
        check_choice("pseudo_model", self.pseudo_model, ("auto", "linear", "sgc"))
        check_choice("tree_sampling", self.tree_sampling, ("homophily", "uniform"))
        check_choice("modules", self.modules, ("both", "global", "local"))
        check_choice("sampler", self.sampler, ("cycle-popping", "wilson"))
        for name in self.baselines:
            check_choice("compare", name, BASELINES)
        if self.dataset == "csbm" and self.ablations and self.ablation_phi not in self.phis:
            raise ConfigError("ablation_phi", self.ablation_phi, f"one of phis {self.phis}")

    @property
    def baselines(self) -> tuple[str, ...]:
        """The baseline names of ``compare``."""
        return tuple(s.strip() for s in self.compare.split(",") if s.strip())


PRESETS: dict[str, FGLConfig] = {
    "smoke": FGLConfig(
        phis=(-0.5, 0.5),
        csbm_nodes=200,
        csbm_features=80,
        val_per_class=30,
        seeds=1,
        compare="gcn",
        epochs=30,
        patience=30,
        num_trees=3,
        pseudo_epochs=30,
        estimator_epochs=30,
        hidden=16,
    ),
    "quick": FGLConfig(),
    "full": FGLConfig(
        phis=(-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0),
        csbm_nodes=5000,
        csbm_features=2000,
        seeds=10,
        epochs=500,
        patience=100,
        train_per_class=125,
        val_per_class=250,
    ),
}
