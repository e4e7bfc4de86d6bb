"""iclr26 recsys: linear-autoencoder recommenders EASE, EDLAE and DEQL (Guo et al., ICLR 2026).

Public API (imported lazily, so ``iclr26 list`` stays fast)::

    from iclr26_recsys import EASE, EDLAE, DEQL
    model = DEQL(p=0.25, a=1.0, b=1.5, l2=100.0).fit(X)   # X: scipy sparse or dense users × items
    model.B_                                             # [items, items]; scores = X @ B_
    model.recommend(X_users, k=20)                       # top-20 unseen items per user, with scores

Submodules: :mod:`~iclr26_recsys.ops` (closed forms, objective), :mod:`~iclr26_recsys.data` (MovieLens-100K
and file formats, strong-generalisation split), :mod:`~iclr26_recsys.metrics` (Recall@k, NDCG@k).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_shared.lazy import lazy_exports

if TYPE_CHECKING:  # the names for type checkers; at run time they load on first access (see __getattr__)
    from iclr26_recsys.data import load_ml100k, strong_generalization_split
    from iclr26_recsys.estimators import DEQL, EASE, EDLAE, Recommendations, deql_forms, deql_path
    from iclr26_recsys.metrics import evaluate, ndcg_at_k, recall_at_k
    from iclr26_recsys.ops.closed_forms import GramFactorization

__all__ = [
    "DEQL",
    "EASE",
    "EDLAE",
    "GramFactorization",
    "Recommendations",
    "deql_forms",
    "deql_path",
    "evaluate",
    "load_ml100k",
    "ndcg_at_k",
    "recall_at_k",
    "strong_generalization_split",
]

_WHERE = {
    "DEQL": "iclr26_recsys.estimators",
    "EASE": "iclr26_recsys.estimators",
    "EDLAE": "iclr26_recsys.estimators",
    "Recommendations": "iclr26_recsys.estimators",
    "deql_forms": "iclr26_recsys.estimators",
    "deql_path": "iclr26_recsys.estimators",
    "GramFactorization": "iclr26_recsys.ops.closed_forms",
    "evaluate": "iclr26_recsys.metrics",
    "ndcg_at_k": "iclr26_recsys.metrics",
    "recall_at_k": "iclr26_recsys.metrics",
    "load_ml100k": "iclr26_recsys.data",
    "strong_generalization_split": "iclr26_recsys.data",
}

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
