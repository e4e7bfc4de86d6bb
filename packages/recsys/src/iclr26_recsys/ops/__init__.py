"""Closed forms of EASE/EDLAE/DEQL (fast and naive twins) and the DEQL objective."""

from iclr26_recsys.ops.closed_forms import (
    DEQLCoefficients,
    GramFactorization,
    LinearForm,
    NotPositiveDefiniteError,
    deql_coefficients,
    deql_form_from_inverse_diag,
    deql_structured_form,
    deql_system,
    deql_weights_rank1,
    deql_weights_structured,
    ease_weights,
    edlae_weights,
    naive_deql_weights,
    naive_ease_weights,
    spd_inverse,
)
from iclr26_recsys.ops.objective import (
    MinimizeResult,
    deql_objective,
    deql_objective_enumerated,
    deql_objective_monte_carlo,
    minimize_deql_objective,
)

__all__ = [
    "DEQLCoefficients",
    "GramFactorization",
    "LinearForm",
    "MinimizeResult",
    "NotPositiveDefiniteError",
    "deql_coefficients",
    "deql_form_from_inverse_diag",
    "deql_objective",
    "deql_objective_enumerated",
    "deql_objective_monte_carlo",
    "deql_structured_form",
    "deql_system",
    "deql_weights_rank1",
    "deql_weights_structured",
    "ease_weights",
    "edlae_weights",
    "minimize_deql_objective",
    "naive_deql_weights",
    "naive_ease_weights",
    "spd_inverse",
]
