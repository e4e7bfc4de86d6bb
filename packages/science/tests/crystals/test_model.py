"""Models: invariance of the CFT (and non-invariance of plain PE), padding/permutation, e3nn equivariance."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from iclr26_science.crystals import (
    CrystalBatch,
    CrystalFourierTransformer,
    E3nnCrystalNet,
    GraphBatch,
    periodic_radius_graph,
    space_group_ops,
)
from iclr26_science.crystals.encoding import orbit_features

GROUPS = [2, 14, 62, 139, 166, 194, 225]  # triclinic … cubic


def _model(encoding: str = "symmetry") -> CrystalFourierTransformer:
    torch.manual_seed(0)
    return CrystalFourierTransformer(12, 16, 2, 2, 32, encoding=encoding, encoding_hidden=16).double().eval()  # type: ignore[arg-type]


def _batch(group: int, frac: np.ndarray) -> CrystalBatch:
    n = len(frac)
    species = torch.tensor([[29, 79, 47, 28][i % 4] for i in range(n)])[None]
    lattice = torch.tensor([[5.0, 0, 0], [0.3, 6.0, 0], [0.2, 0.1, 7.0]], dtype=torch.float64)[None]
    return CrystalBatch(species, torch.from_numpy(frac)[None], lattice, torch.tensor([group]))


@pytest.mark.parametrize("group", GROUPS)
def test_cft_invariant_to_any_operation_on_any_atom(group: int) -> None:
    rng = np.random.default_rng(group)
    frac = rng.random((5, 3))
    ops = space_group_ops(group)
    moved = np.stack([ops.apply(x[None])[rng.integers(len(ops)), 0] for x in frac]) + rng.integers(-2, 3, (5, 3))
    model = _model()
    with torch.no_grad():
        torch.testing.assert_close(model(_batch(group, moved)), model(_batch(group, frac)), rtol=1e-10, atol=1e-10)


def test_plain_encoding_is_not_invariant() -> None:
    """The invariance test can fail: plain plane waves see the moved atoms."""
    rng = np.random.default_rng(0)
    frac = rng.random((5, 3))
    ops = space_group_ops(225)
    moved = np.stack([ops.apply(x[None])[rng.integers(1, len(ops)), 0] for x in frac])
    model = _model("plain")
    with torch.no_grad():
        assert (model(_batch(225, moved)) - model(_batch(225, frac))).abs().item() > 1e-6


def test_padding_and_permutation_do_not_change_the_output() -> None:
    rng = np.random.default_rng(1)
    frac = rng.random((4, 3))
    model = _model()
    base = _batch(62, frac)
    padded = CrystalBatch(
        torch.cat([base.species, torch.zeros(1, 3, dtype=torch.long)], 1),
        torch.cat([base.frac, torch.rand(1, 3, 3, dtype=torch.float64)], 1),
        base.lattice,
        base.group,
    )
    perm = torch.tensor([2, 0, 3, 1])
    permuted = CrystalBatch(base.species[:, perm], base.frac[:, perm], base.lattice, base.group)
    with torch.no_grad():
        ref = model(base)
        torch.testing.assert_close(model(padded), ref)
        torch.testing.assert_close(model(permuted), ref)


def test_precomputed_features_match_on_the_fly() -> None:
    frac = np.random.default_rng(2).random((3, 3))
    model = _model()
    b = _batch(139, frac)
    feats = orbit_features("symmetry", 12, b.frac, b.group)
    assert feats.shape == (1, 3, 24)
    with torch.no_grad():
        torch.testing.assert_close(model(CrystalBatch(b.species, b.frac, b.lattice, b.group, feats)), model(b))


def test_weights_are_shared_across_groups() -> None:
    """Every group, seen or not, runs through the same parameters: only the basis changes."""
    model = _model()
    frac = np.random.default_rng(3).random((3, 3))
    with torch.no_grad():
        outs = [model(_batch(g, frac)).item() for g in (5, 200)]
    assert all(np.isfinite(outs)) and outs[0] != outs[1]


def _graph(frac: np.ndarray, lattice: np.ndarray) -> GraphBatch:
    ei, ev = periodic_radius_graph(frac, lattice, 3.5)
    n = len(frac)
    return GraphBatch(
        torch.tensor([29, 79, 47][:n]), torch.from_numpy(ei), torch.from_numpy(ev), torch.zeros(n, dtype=torch.long), 1
    )


def test_e3nn_baseline_is_invariant_to_rotation_translation_and_cell_choice() -> None:
    torch.manual_seed(0)
    model = E3nnCrystalNet(scalars=8, gated="2x1o+2x2e", layers=2, cutoff=3.5).double().eval()
    rng = np.random.default_rng(0)
    frac = rng.random((3, 3))
    lattice = np.diag([3.0, 3.5, 4.0])
    g = _graph(frac, lattice)
    q = torch.linalg.qr(torch.randn(3, 3, dtype=torch.float64))[0]
    rotated = GraphBatch(g.species, g.edge_index, g.edge_vec @ q.T, g.crystal, 1)
    shifted = _graph(np.mod(frac + 0.37, 1.0), lattice)
    with torch.no_grad():
        ref = model(g)
        torch.testing.assert_close(model(rotated), ref)
        torch.testing.assert_close(model(shifted), ref)


def test_output_head_is_the_papers_2048_256_1() -> None:
    """Reference ``FeedForward``: Dense(2048) → SiLU → LN → Dense(256) → SiLU → LN → Dense(1)."""
    model = CrystalFourierTransformer(12, 16, 1, 2, 32, encoding_hidden=16)
    linears = [m for m in model.head if isinstance(m, torch.nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linears] == [(16, 2048), (2048, 256), (256, 1)]
    assert sum(isinstance(m, torch.nn.LayerNorm) for m in model.head) == 2
    small = CrystalFourierTransformer(12, 16, 1, 2, 32, encoding_hidden=16, head_hidden=(8,))
    assert [m.out_features for m in small.head if isinstance(m, torch.nn.Linear)] == [8, 1]


def _structures() -> tuple[list[object], np.ndarray]:
    """fcc and bcc Cu / Au / Ni cells at two lattice constants; the target depends on the element and the
    structure (1 + 0.5·[Au] − 0.3·[Ni] + [bcc]), which the species and the space group carry."""
    from pymatgen.core import Lattice, Structure

    fcc = [[0, 0, 0], [0.5, 0.5, 0], [0.5, 0, 0.5], [0, 0.5, 0.5]]
    bcc = [[0, 0, 0], [0.5, 0.5, 0.5]]
    out, y = [], []
    for a in (3.6, 4.0):
        for el, shift in (("Cu", 0.0), ("Au", 0.5), ("Ni", -0.3)):
            out += [Structure(Lattice.cubic(a), [el] * 4, fcc), Structure(Lattice.cubic(0.8 * a), [el] * 2, bcc)]
            y += [1.0 + shift, 2.0 + shift]
    return out, np.array(y)


def test_fit_predict_on_pymatgen_structures_and_save_load(tmp_path: object) -> None:
    """The public fit on a list of Structures learns the volume per atom far below the mean predictor's
    error; predict() is in the targets' units; save_pretrained/from_pretrained reproduce it bit for bit."""
    from pathlib import Path

    from iclr26_science.crystals import FitSettings, fit

    structures, y = _structures()
    settings = FitSettings(num_basis=8, dim=16, depth=1, heads=2, ff=32, head_hidden=(32,), epochs=40,
                           batch_size=6, lr=3e-3, val_fraction=0.0)  # fmt: skip
    seen: list[dict[str, object]] = []
    model = fit(structures, list(y), settings, callback=seen.append)
    pred = model.predict(structures)  # numpy, as the targets went in
    assert isinstance(pred, np.ndarray) and pred.shape == (len(y),) and pred.dtype == np.float64
    assert seen == model.history and [r["epoch"] for r in seen] == list(range(1, 41))
    assert all(r["val_mae"] is None for r in seen) and seen[-1]["loss"] < 0.2 * seen[0]["loss"]  # type: ignore[operator]
    # the batch path returns torch (what went in) and agrees with the numpy path
    from iclr26_science.crystals.fit import as_inputs, batch_of

    as_torch = model.predict(batch_of(as_inputs(structures)))
    assert isinstance(as_torch, torch.Tensor)
    np.testing.assert_allclose(as_torch.numpy(), pred, rtol=1e-6, atol=1e-6)
    mae, mean_mae = np.abs(pred - y).mean(), np.abs(y - y.mean()).mean()
    assert mae < 0.3 * mean_mae, (mae, mean_mae)
    assert float(model.target_mean) == pytest.approx(y.mean())
    path = Path(str(tmp_path)) / "cft"
    model.save_pretrained(path)
    loaded = CrystalFourierTransformer.from_pretrained(path)
    assert np.array_equal(loaded.predict(structures), model.predict(structures))
    # the workspace contract outside the run harness: save_model / load_model on any folder (offline)
    from iclr26_shared import list_models, load_model, save_model

    run = Path(str(tmp_path)) / "my-crystals"
    save_model(run, "cft", model, extra={"target": "y", "units": "arbitrary"})
    assert list_models(run)["cft"]["class"] == "iclr26_science.crystals.model:CrystalFourierTransformer"
    again = load_model(run)
    assert isinstance(again, CrystalFourierTransformer) and float(again.target_std) == float(model.target_std)
    assert np.array_equal(again.predict(structures), model.predict(structures))


def test_fit_history_tracks_val_mae_and_the_callback_stops_training() -> None:
    """val_mae per epoch equals the held-out MAE recomputed from the state kept; a callback returning True stops."""
    from iclr26_science.crystals import FitSettings, fit

    structures, y = _structures()
    settings = FitSettings(num_basis=8, dim=16, depth=1, heads=2, ff=32, head_hidden=(32,), epochs=6,
                           batch_size=6, lr=3e-3, val_fraction=0.25)  # fmt: skip
    model = fit(structures, y, settings)
    maes = [r["val_mae"] for r in model.history]
    assert len(maes) == 6 and all(isinstance(m, float) for m in maes)
    val = np.random.default_rng(0).permutation(len(y))[:3]  # fit's split: the first round(0.25·12) of the order
    kept = np.abs(model.predict([structures[i] for i in val]) - y[val]).mean()
    assert kept == pytest.approx(min(maes), rel=1e-5)  # the state of lowest val-MAE is the one returned
    stopped = fit(structures, y, settings, callback=lambda row: row["epoch"] == 2)
    assert [r["epoch"] for r in stopped.history] == [1, 2]


def test_fit_rejects_bad_input() -> None:
    from iclr26_science.crystals import FitSettings, fit
    from iclr26_shared.errors import DataError

    structures, y = _structures()
    with pytest.raises(DataError, match="targets: expected 12 finite"):
        fit(structures, y[:3])
    with pytest.raises(DataError, match=r"structures\[1\]: expected a pymatgen Structure"):
        fit([structures[0], "Cu"], [1.0, 2.0])
    from pymatgen.core import Lattice, Structure

    disordered = Structure(Lattice.cubic(3.6), [{"Cu": 0.5, "Au": 0.5}], [[0, 0, 0]])  # a solid solution
    with pytest.raises(DataError, match=r"^structures\[1\]: partial occupancies are not supported \(the structure is"):
        fit([structures[0], disordered], [1.0, 2.0])
    model = fit(structures, y, FitSettings(num_basis=8, dim=16, depth=1, heads=2, ff=32, head_hidden=(32,), epochs=1))
    with pytest.raises(DataError, match=r"^structures\[0\]: partial occupancies"):
        model.predict([disordered])


def test_basis_normalization_is_saved_and_an_older_config_reads_as_orthonormal(tmp_path: object) -> None:
    """The model keeps its basis normalisation in config.json; a config.json written before the switch
    existed (no key) is read as "orthonormal", the basis such models were trained with, bit-exactly."""
    import json
    from pathlib import Path

    path = Path(str(tmp_path))
    frac = np.random.default_rng(4).random((3, 3))
    b = _batch(225, frac)
    model = _model()
    assert model.encoding.normalization == "unit"
    model.save_pretrained(path / "new")
    assert json.loads((path / "new" / "config.json").read_text())["basis_normalization"] == "unit"
    loaded = CrystalFourierTransformer.from_pretrained(path / "new").double().eval()
    assert loaded.encoding.normalization == "unit"
    torch.manual_seed(0)
    old = (
        CrystalFourierTransformer(12, 16, 2, 2, 32, encoding_hidden=16, basis_normalization="orthonormal")
        .double()
        .eval()
    )
    old.save_pretrained(path / "old")
    cfg = json.loads((path / "old" / "config.json").read_text())
    del cfg["basis_normalization"]
    (path / "old" / "config.json").write_text(json.dumps(cfg))
    reread = CrystalFourierTransformer.from_pretrained(path / "old").double().eval()
    assert reread.encoding.normalization == "orthonormal"
    with torch.no_grad():
        torch.testing.assert_close(loaded(b), model(b), rtol=0, atol=0)
        torch.testing.assert_close(reread(b), old(b), rtol=0, atol=0)
        assert not torch.allclose(model(b), old(b))  # same weights (seed 0), other basis scale: other output
