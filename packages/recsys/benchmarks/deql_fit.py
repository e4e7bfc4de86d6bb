"""Fit time and peak memory of EASE, EDLAE and DEQL vs the number of items; the b-sweep speed-up.

Synthetic power-law data: ``4n`` users, each with ~30 items drawn with probability ∝ rank^-0.8.

* ``fit``: one ``fit(X)`` per model and size (DEQL with the default structured solver and with the
  authors' rank-1 algorithm), wall time and peak extra memory from :func:`iclr26_shared.bench.peak_memory`
  (CPU: peak RSS minus the RSS before the fit; CUDA: the allocator's peak).
* ``sweep``: DEQL for 10 values of ``b`` (one ``p``), dense ``B_`` for each —
  :func:`~iclr26_recsys.deql_path` (``l2 = 0``: one Cholesky inverse shared by every ``b``; ``l2 > 0``:
  one structured solve per ``b`` sharing ``G``) vs fitting each ``b`` from scratch with the authors'
  rank-1 algorithm;
* ``sweep`` also times the *factored* sweep: ``G``, one ``eigh`` of ``G + D`` shared by every ``b`` (and
  ``λ``), and per ``b`` the exact model as ``(γ, δ, μ_b)`` in ``O(n²)``, with its largest relative error
  against the from-scratch rank-1 ``B_`` (``‖W − B‖_F / ‖B‖_F``, dense ``W`` formed outside the timing);
* ``sweep_scoring``: what ``--sweep`` does — score ``n/2`` fold-in users for the 10 ``b`` values (``l2 > 0``)
  from one :class:`~iclr26_recsys.ops.GramFactorization` vs rank-1 fit + ``predict`` per ``b``.

``uv run python packages/recsys/benchmarks/deql_fit.py [--quick] [--out PATH]``; the item counts can be
overridden with ``ICLR26_RECSYS_BENCH_SIZES=1000,2000,10000`` (10k items need ~8 GB RAM for the
rank-1 path); the sweeps run on the two smallest sizes unless ``ICLR26_RECSYS_BENCH_SWEEP_SIZES`` is set
(a from-scratch sweep of 10 b values at 4k items takes ~10 minutes on one CPU core).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from iclr26_recsys import DEQL, EASE, EDLAE, deql_forms, deql_path
from iclr26_recsys.data.validation import shape_of
from iclr26_recsys.estimators import gram_matrix
from iclr26_recsys.ops.closed_forms import GramFactorization
from iclr26_shared.bench import bench_main, peak_memory

B_VALUES = (0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5)


def power_law_interactions(n_items: int, *, n_users: int | None = None, per_user: int = 30, seed: int = 0):
    """``[4n, n]`` 0/1 CSR matrix; item popularity ∝ rank^-0.8, every item used at least once."""
    rng = np.random.default_rng(seed)
    m = n_users or 4 * n_items
    prob = 1.0 / np.arange(1, n_items + 1) ** 0.8
    prob /= prob.sum()
    k = np.minimum(rng.poisson(per_user, size=m) + 1, n_items)
    rows = np.repeat(np.arange(m), k)
    cols = rng.choice(n_items, size=int(k.sum()), p=prob)
    cover = rng.integers(0, m, size=n_items)
    rows, cols = np.concatenate([rows, cover]), np.concatenate([cols, np.arange(n_items)])
    X = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(m, n_items))
    X.data[:] = 1.0
    return X


def _peak(fn: Callable[[], Any], device: str) -> tuple[float, float]:
    """(seconds, peak extra MiB) of ``fn()``: CUDA allocator peak on a CUDA device, else CPU RSS."""
    mem = peak_memory(fn, device=device)
    extra = mem.cuda_peak_bytes if mem.cuda_peak_bytes is not None else mem.cpu_peak_bytes
    return mem.seconds, extra / 2**20


def _factored_sweep(X: sp.csr_matrix, l2: float, device: str) -> list[Any]:
    """``[fac, form_b...]`` from :func:`~iclr26_recsys.deql_forms`: ``G``, one ``eigh`` of ``G + D`` and, per
    ``b``, the exact DEQL model as ``W = diagMat(γ) + Q diag(1/(e+μ_b)) Qᵀ diagMat(δ)`` (``O(n²)`` per ``b``:
    no factorisation and no dense ``W``; ``fac.weights`` forms one on demand)."""
    fac, forms = deql_forms(X, 0.25, B_VALUES, l2=l2, device=device)
    return [fac, *forms]


def run(quick: bool) -> dict[str, Any]:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    env = os.environ.get("ICLR26_RECSYS_BENCH_SIZES")
    sizes = [int(s) for s in env.split(",")] if env else ([300, 600] if quick else [1000, 2000, 4000])
    env_sweep = os.environ.get("ICLR26_RECSYS_BENCH_SWEEP_SIZES")
    sweep_sizes = [int(s) for s in env_sweep.split(",")] if env_sweep else sizes[:2]
    out: dict[str, Any] = {"device": device, "torch_threads": torch.get_num_threads(), "fit": {}, "sweep": {}}
    models: dict[str, Callable[[], Any]] = {
        "EASE": lambda: EASE(100.0, device=device),
        "EDLAE": lambda: EDLAE(0.25, 30.0, device=device),
        "DEQL": lambda: DEQL(0.25, b=1.5, l2=100.0, device=device),
        "DEQL-rank1": lambda: DEQL(0.25, b=1.5, l2=100.0, solver="rank1", device=device),
    }
    for n in sizes:
        X = power_law_interactions(n)
        row: dict[str, Any] = {"users": shape_of(X)[0], "nnz": int(X.nnz)}
        for name, make in models.items():
            seconds, mib = _peak(lambda make=make, X=X: make().fit(X), device)
            row[name] = {"seconds": seconds, "peak_extra_mib": mib, "dense_matrix_mib": n * n * 8 / 2**20}
        out["fit"][str(n)] = row
        print(f"fit n={n}: " + ", ".join(f"{k} {v['seconds']:.2f}s" for k, v in row.items() if isinstance(v, dict)))
    for n in sweep_sizes:
        X = power_law_interactions(n)
        res: dict[str, Any] = {}
        for l2 in (0.0, 100.0):
            fast_s, fast_mib = _peak(lambda l2=l2, X=X: deql_path(X, 0.25, B_VALUES, l2=l2, device=device), device)
            rank1_B: list[np.ndarray] = []

            def refit(l2: float = l2, X: sp.csr_matrix = X, out: list[np.ndarray] = rank1_B) -> None:
                out.extend(DEQL(0.25, b=b, l2=l2, solver="rank1", device=device).fit(X).B_ for b in B_VALUES)

            base_s, base_mib = _peak(refit, device)
            forms: list[Any] = []
            fac_s, _ = _peak(lambda l2=l2, X=X, out=forms: out.extend(_factored_sweep(X, l2, device)), device)
            fac, fac_forms = forms[0], forms[1:]
            rel = max(
                float(np.linalg.norm(fac.weights(f).cpu().numpy() - B) / np.linalg.norm(B))
                for f, B in zip(fac_forms, rank1_B, strict=True)
            )
            res[f"l2={l2:g}"] = {
                "path_seconds": fast_s,
                "from_scratch_rank1_seconds": base_s,
                "speedup": base_s / fast_s,
                "factored_seconds": fac_s,
                "factored_speedup": base_s / fac_s,
                "factored_max_rel_error_vs_rank1": rel,
                "path_peak_extra_mib": fast_mib,
                "from_scratch_peak_extra_mib": base_mib,
            }
            print(
                f"sweep n={n} l2={l2:g}: path {fast_s:.2f}s, factored {fac_s:.2f}s vs from scratch {base_s:.2f}s "
                f"-> {base_s / fast_s:.1f}x / {base_s / fac_s:.1f}x (factored max rel. error {rel:.1e})"
            )
        out["sweep"][str(n)] = {"b_values": list(B_VALUES), **res}
        X_val = X[: n // 2]

        def factorised(X: sp.csr_matrix = X, X_val: sp.csr_matrix = X_val) -> None:
            fac = GramFactorization(gram_matrix(X, device=device), 0.25)
            V = torch.from_numpy(X_val.toarray()).to(device)
            VQ = fac.project(V)
            for b in B_VALUES:
                fac.scores(V, VQ, fac.deql_form(1.0, b, 100.0)).cpu().numpy()

        def scratch(X: sp.csr_matrix = X, X_val: sp.csr_matrix = X_val) -> None:
            for b in B_VALUES:
                DEQL(0.25, b=b, l2=100.0, solver="rank1", device=device).fit(X).predict(X_val)

        fs, _ = _peak(factorised, device)
        bs_, _ = _peak(scratch, device)
        out.setdefault("sweep_scoring", {})[str(n)] = {
            "val_users": shape_of(X_val)[0],
            "factorised_seconds": fs,
            "from_scratch_rank1_seconds": bs_,
            "speedup": bs_ / fs,
        }
        print(f"scoring sweep n={n}: factorised {fs:.2f}s vs from scratch {bs_:.2f}s -> {bs_ / fs:.1f}x")
    return out


if __name__ == "__main__":
    bench_main("recsys-deql-fit", run)
