"""Config and presets of ``iclr26-recsys deql`` (no heavy imports: ``iclr26 list`` reads this)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Annotated, Literal

import annotated_types as at

from iclr26_shared.config import NonNegFloat, NonNegInt, PosFloat, PosInt, validate
from iclr26_shared.errors import ConfigError

__all__ = ["PRESETS", "DEQLConfig"]

Dataset = Literal["ml-100k", "ml-100k-raw", "ml-1m", "ml-20m", "netflix", "msd", "csv"]
#: A dropout probability: 0 < p < 1 (p = 0 is EASE, p = 1 drops everything).
Dropout = Annotated[float, at.Interval(gt=0, lt=1)]
#: A non-empty grid of values.
NonEmpty = at.MinLen(1)


@dataclass(frozen=True)
class DEQLConfig:
    """EASE vs EDLAE (b = 0) vs DEQL (b > 0) under strong generalisation, each tuned on validation users."""

    dataset: Dataset = "ml-100k"
    """Data: ml-100k comes from the pinned recbole wheel (fetched once, then offline); the others read
    data_path (ml-1m ratings.dat, ml-20m ratings.csv, netflix combined_data_*.txt or their folder, msd
    train_triplets.txt, csv with a user,item[,rating] header, ml-100k-raw u.data)."""
    data_path: str = ""
    """Interaction file (or Netflix folder) for every dataset but ml-100k."""
    min_rating: NonNegFloat = 4.0
    """Binarisation: keep ratings >= min_rating as 1 (Liang et al.: > 3.5); 0 keeps every interaction (MSD)."""
    min_user_count: NonNegInt = 5
    """Keep users with at least this many binarised interactions (MSD: 20)."""
    min_item_count: NonNegInt = 0
    """Keep items with at least this many users, applied before the user filter (MSD: 200)."""
    n_heldout_users: PosInt = 100
    """split_mode random: users in the validation set and, as many again, in the test set (ML-20M: 10,000)."""
    test_prop: Annotated[float, at.Interval(gt=0, lt=1)] = 0.2
    """Share of each held-out user's items to predict (the rest is folded in)."""
    split_mode: Literal["kfold", "random"] = "kfold"
    """kfold: n_splits disjoint user folds, fold s tests on fold s and validates on fold s+1 (every user is
    tested once); random: n_splits random draws of n_heldout_users validation and test users (Liang et al.)."""
    n_splits: PosInt = 5
    """Number of user folds (kfold, >= 3) or of random splits; test metrics are mean ± std over them."""
    split_seed: NonNegInt = 98765
    """Seed of the user permutation (random: split s uses split_seed + s); 98765 is vae_cf's seed. Run seed r
    (--seed, --seeds) adds 1000·r, so replicated runs see other user splits (seed 0 keeps split_seed)."""
    sweep: bool = True
    """Tune every model on the validation users over the grids; --no-sweep uses p, a, b, l2, ease_l2, edlae_l2."""
    p_grid: Annotated[tuple[Dropout, ...], NonEmpty] = (0.1, 0.25, 0.5, 0.75)
    """Dropout probabilities tried for EDLAE and DEQL (DEQL yamls: 0.1, 0.25, 0.5, 0.75)."""
    a_grid: Annotated[tuple[PosFloat, ...], NonEmpty] = (1.0,)
    """Emphasis on dropped entries tried for DEQL (the paper fixes a = 1)."""
    b_grid: Annotated[tuple[PosFloat, ...], NonEmpty] = (0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0)
    """Emphasis on kept entries tried for DEQL; all > 0 (b = 0 is EDLAE). The official ML-20M grid
    (EDLAE_b_geq_0_diag0_L2const.yaml): 0.1, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2."""
    l2_grid: Annotated[tuple[NonNegFloat, ...], NonEmpty] = (10.0, 30.0, 70.0, 100.0, 200.0, 300.0, 500.0)
    """L2 strengths tried for DEQL (added to H0, whose scale is c = (1−p)²(pa² + (1−p)b²): on EDLAE's scale
    this is λ/c, see the README)."""
    edlae_l2_grid: Annotated[tuple[NonNegFloat, ...], NonEmpty] = (0.0, 10.0, 30.0, 70.0, 100.0, 200.0, 300.0, 500.0)
    """L2 strengths tried for EDLAE (Λ = p/(1−p)·diag G + λI)."""
    ease_l2_grid: Annotated[tuple[PosFloat, ...], NonEmpty] = (
        10.0,
        30.0,
        50.0,
        70.0,
        100.0,
        150.0,
        200.0,
        300.0,
        500.0,
        1000.0,
    )
    """L2 strengths tried for EASE."""
    p: Dropout = 0.25
    """DEQL dropout probability without --sweep (also EDLAE's p)."""
    a: PosFloat = 1.0
    """DEQL emphasis on dropped entries without --sweep."""
    b: PosFloat = 1.5
    """DEQL emphasis on kept entries without --sweep."""
    l2: NonNegFloat = 100.0
    """DEQL L2 without --sweep."""
    edlae_l2: NonNegFloat = 30.0
    """EDLAE L2 without --sweep."""
    ease_l2: PosFloat = 100.0
    """EASE L2 without --sweep."""
    zero_diag: bool = False
    """Constrain diag(B) = 0 in DEQL too (the paper's 'L2 + zero-diag' ablation)."""
    select_metric: Literal["recall@20", "ndcg@100"] = "recall@20"
    """Validation metric that picks each model's hyper-parameters."""
    dtype: Literal["float64", "float32"] = "float64"
    """Floating-point precision of the linear algebra."""
    gd_items: Annotated[int, at.Interval(ge=2, le=500)] = 40
    """Claim 2: size of the item subset (most popular training items) for the gradient-descent check."""
    gd_method: Literal["gd", "nesterov"] = "nesterov"
    """Claim 2: plain gradient descent with step 1/L or Nesterov's accelerated variant."""
    gd_steps: PosInt = 20000
    """Claim 2: maximum gradient steps."""
    gd_tolerance: PosFloat = 1e-4
    """Claim 2 holds when ‖W_gd − W_closed‖_F / ‖W_closed‖_F is at most this."""

    def __post_init__(self) -> None:
        validate(self)
        if self.dataset != "ml-100k" and not self.data_path:
            raise ConfigError("data_path", self.data_path, f"the path of the {self.dataset} interaction file")
        if self.split_mode == "kfold" and self.n_splits < 3:
            raise ConfigError("n_splits", self.n_splits, "at least 3 user folds with split_mode kfold")
        if self.sweep:  # the sweep tunes over the grids and never reads the single values: a set one is a mistake
            for name, grid in _SWEPT.items():
                if getattr(self, name) != _DEFAULTS[name]:
                    raise ConfigError(
                        name,
                        getattr(self, name),
                        f"no value while the sweep is on (only --no-sweep reads {name}; the sweep tunes over "
                        f"{grid}): add --no-sweep, or give --{grid.replace('_', '-')}",
                    )


#: The single values --no-sweep uses and the grid the sweep tunes over instead.
_SWEPT = {
    "p": "p_grid",
    "a": "a_grid",
    "b": "b_grid",
    "l2": "l2_grid",
    "edlae_l2": "edlae_l2_grid",
    "ease_l2": "ease_l2_grid",
}
_DEFAULTS = {f.name: f.default for f in fields(DEQLConfig) if f.name in _SWEPT}


PRESETS: dict[str, DEQLConfig] = {
    # seconds: one split of ML-100K restricted to its 351 items with >= 50 positive users, tiny grids
    "smoke": DEQLConfig(
        min_item_count=50,
        split_mode="random",
        n_splits=1,
        p_grid=(0.25,),
        b_grid=(0.5, 1.5),
        l2_grid=(100.0,),
        edlae_l2_grid=(30.0,),
        ease_l2_grid=(100.0,),
        gd_items=15,
        gd_steps=3000,
    ),
    # a few minutes on 2 CPU cores: the paper's grids (λ rescaled to ML-100K) on 5 user folds of ML-100K
    "quick": DEQLConfig(),
    # closest to the paper this machine class runs: 10 user folds, finer grids (b > a included), 80-item GD check
    "full": DEQLConfig(
        n_splits=10,
        p_grid=(0.1, 0.25, 0.33, 0.5, 0.75, 0.9),
        b_grid=(0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 3.0),
        l2_grid=(1.0, 3.0, 10.0, 30.0, 70.0, 100.0, 200.0, 300.0, 500.0, 1000.0),
        edlae_l2_grid=(0.0, 1.0, 3.0, 10.0, 30.0, 70.0, 100.0, 200.0, 300.0, 500.0, 1000.0),
        gd_items=80,
        gd_steps=50000,
    ),
}
