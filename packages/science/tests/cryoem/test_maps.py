"""MRC I/O, density simulation, Fourier degradations and map metrics of ``iclr26_science.cryoem``."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import mrcfile
import numpy as np
import pytest

from iclr26_science.cryoem import (
    MOLMAP_SIGMA_FACTOR,
    Atoms,
    DensityMap,
    add_noise,
    adk_frames,
    apply_bfactor,
    apply_missing_wedge,
    atom_mask,
    cc,
    fsc,
    fsc_resolution,
    global_sharpen,
    guinier_bfactor,
    load_structure,
    local_scale,
    missing_wedge_mask,
    molmap,
    radial_amplitude,
    read_map,
    write_map,
)
from iclr26_shared.errors import DataError


def _atoms(n: int = 20, seed: int = 0) -> Atoms:
    rng = np.random.default_rng(seed)
    return Atoms("toy", rng.uniform(-6, 6, (n, 3)), rng.choice([6, 7, 8, 16], n))


# ---------------------------------------------------------------- MRC I/O


def test_mrc_round_trip_keeps_voxels_voxel_size_and_origin(tmp_path: Path) -> None:
    data = np.random.default_rng(0).standard_normal((6, 7, 8)).astype(np.float32)
    m = DensityMap(data, (1.5, 1.5, 1.5), (3.0, -4.5, 6.0))
    back = read_map(write_map(tmp_path / "m.mrc", m))
    assert np.array_equal(back.data, data) and back.voxel_size == (1.5, 1.5, 1.5) and back.origin == (3.0, -4.5, 6.0)
    assert back.apix == 1.5 and back.shape == (6, 7, 8)


def test_mrc_axis_order_is_normalised(tmp_path: Path) -> None:
    data = np.arange(4 * 5 * 6, dtype=np.float32).reshape(4, 5, 6)  # [z, y, x]
    path = tmp_path / "swapped.mrc"
    with mrcfile.new(path) as m:  # store with columns = z, rows = y, sections = x
        m.set_data(np.ascontiguousarray(data.transpose(2, 1, 0)))
        header: Any = m.header
        header.mapc, header.mapr, header.maps = 3, 2, 1
        m.voxel_size = 2.0
    assert np.array_equal(read_map(path).data, data)


def _write_raw(path: Path, data: np.ndarray) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mrcfile warns about the NaN voxels this test writes on purpose
        with mrcfile.new(path, overwrite=True) as m:
            m.set_data(data)
            m.voxel_size = 1.0
    return path


def test_bad_mrc_files_give_one_clear_line(tmp_path: Path) -> None:
    good = _write_raw(tmp_path / "good.mrc", np.ones((4, 4, 4), np.float32))
    raw = good.read_bytes()
    cases: dict[str, tuple[bytes, str]] = {
        "truncated_header.mrc": (raw[:100], "not a valid MRC/CCP4 map|not an MRC"),
        "truncated_data.mrc": (raw[: len(raw) - 40], "not a valid MRC/CCP4 map|not an MRC|voxels"),
    }
    for name, (content, match) in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(DataError, match=match) as err:
            read_map(tmp_path / name)
        assert str(tmp_path / name) in str(err.value) and "\n" not in str(err.value)
    nan = np.ones((4, 4, 4), np.float32)
    nan[1, 2, 3] = np.nan
    with pytest.raises(DataError, match="1 NaN/inf voxels"):
        read_map(_write_raw(tmp_path / "nan.mrc", nan))
    complex_map = _write_raw(tmp_path / "complex.mrc", np.ones((4, 4, 4), np.complex64))
    with pytest.raises(DataError, match="mode 4 is not a real-valued map"):
        read_map(complex_map)
    with pytest.raises(DataError, match="no such map file"):
        read_map(tmp_path / "missing.mrc")
    with pytest.raises(DataError, match="3-D"):
        read_map(_write_raw(tmp_path / "image.mrc", np.ones((4, 4), np.float32)))


def test_density_map_validates() -> None:
    with pytest.raises(DataError, match="voxel size"):
        DensityMap(np.zeros((2, 2, 2), np.float32), (0.0, 1.0, 1.0))
    with pytest.raises(DataError, match="anisotropic"):
        _ = DensityMap(np.zeros((2, 2, 2), np.float32), (1.0, 1.0, 2.0)).apix


# ---------------------------------------------------------------- structures and simulation


def test_builtin_structures_load() -> None:
    atoms = load_structure("cobrotoxin")
    assert len(atoms.positions) > 400 and set(np.unique(atoms.numbers)) <= {6, 7, 8, 16}
    frames = adk_frames(3)
    assert len(frames) == 3 and frames[0].positions.shape == frames[2].positions.shape
    assert np.abs(frames[0].positions - frames[2].positions).max() > 1.0  # closed → open moves atoms
    with pytest.raises(DataError, match="no such structure file"):
        load_structure("/nope.pdb")
    from iclr26_shared.data import available_datasets

    assert {"adk-trajectory", "mdanalysis-structures"} <= set(available_datasets("atomic-models"))


def test_molmap_integrates_to_the_sum_of_atomic_weights() -> None:
    atoms = _atoms()
    for res, apix in ((4.0, 1.5), (8.0, 2.0), (2.0, 1.0)):
        m = molmap(atoms, res, apix, pad=6 * MOLMAP_SIGMA_FACTOR * res)
        assert m.data.sum() * apix**3 == pytest.approx(atoms.numbers.sum(), rel=1e-5)
        assert m.data.min() >= 0


def test_molmap_single_atom_is_a_gaussian_of_molmap_sigma() -> None:
    atom = Atoms("one", np.zeros((1, 3)), np.array([6]))
    res, apix = 6.0, 0.5
    m = molmap(atom, res, apix, pad=8.0)
    sigma = MOLMAP_SIGMA_FACTOR * res
    z = np.arange(m.shape[0]) * apix + m.origin[2]
    profile = m.data.sum((1, 2)) * apix**3  # marginal along z
    var = float((profile * z**2).sum() / profile.sum())
    assert math.sqrt(var - apix**2 / 12) == pytest.approx(sigma, rel=1e-3)  # minus the voxel's box variance


def test_bfactor_blur_then_sharpen_is_identity_below_the_cut() -> None:
    x = molmap(_atoms(), 4.0, 1.5).data
    back = apply_bfactor(apply_bfactor(x, 50.0, 1.5), -50.0, 1.5)
    assert np.allclose(back, x, atol=1e-4 * np.abs(x).max())
    assert guinier_bfactor(apply_bfactor(x, 80.0, 1.5), 1.5, 4.0) - guinier_bfactor(x, 1.5, 4.0) == pytest.approx(
        80.0, rel=0.02
    )


def test_noise_has_the_asked_snr() -> None:
    x = molmap(_atoms(60), 4.0, 1.0).data
    for kind in ("white", "pink"):
        y = add_noise(x, 0.5, np.random.default_rng(0), kind=kind)  # type: ignore[arg-type]
        assert float(x.var()) / float((y - x).var()) == pytest.approx(0.5, rel=1e-3)


def test_missing_wedge_mask_geometry() -> None:
    n = 64
    mask = missing_wedge_mask((n, n, n), 60.0)
    kz = np.fft.fftfreq(n)[:, None, None]
    kx = np.fft.fftfreq(n)[None, None, :]
    ring = np.broadcast_to((kz**2 + kx**2 > 0.05**2) & (kz**2 + kx**2 < 0.45**2), mask.shape)
    assert 1 - mask[ring].mean() == pytest.approx(1 / 3, abs=0.01)  # (90° − 60°) / 90° of directions missing
    flipped = np.roll(mask[::-1, ::-1, ::-1], 1, axis=(0, 1, 2))  # mask(−k)
    assert np.array_equal(mask, flipped)  # Friedel symmetric, so the masked map stays real
    assert mask[:, :, 0].sum() == n  # k_x = 0: only k_z = 0 is measured
    assert mask[0].all()  # the k_z = 0 plane is always measured
    assert missing_wedge_mask((8, 8, 8), 90.0).all() and missing_wedge_mask((8, 8, 8), 0.0).mean() < 0.2
    x = molmap(_atoms(), 4.0, 1.5).data
    assert np.abs(np.fft.fftn(apply_missing_wedge(x, 45.0))[~missing_wedge_mask(x.shape, 45.0)]).max() < 1e-3


# ---------------------------------------------------------------- metrics


def _naive_fsc(a: np.ndarray, b: np.ndarray, apix: float) -> np.ndarray:
    n = a.shape[0]
    fa, fb = np.fft.fftn(a), np.fft.fftn(b)
    out = np.zeros(n // 2 + 1)
    num = np.zeros(n // 2 + 1, dtype=complex)
    pa, pb = np.zeros(n // 2 + 1), np.zeros(n // 2 + 1)
    f = np.fft.fftfreq(n)
    for i in range(n):
        for j in range(n):
            for k in range(n):
                shell = int(round(math.sqrt(f[i] ** 2 + f[j] ** 2 + f[k] ** 2) * n))
                if shell <= n // 2:
                    num[shell] += fa[i, j, k] * np.conj(fb[i, j, k])
                    pa[shell] += abs(fa[i, j, k]) ** 2
                    pb[shell] += abs(fb[i, j, k]) ** 2
    ok = pa * pb > 0
    out[ok] = np.real(num)[ok] / np.sqrt(pa[ok] * pb[ok])
    return out


def test_fsc_matches_a_brute_force_loop_and_is_one_with_itself() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((10, 10, 10)), rng.standard_normal((10, 10, 10))
    freqs, curve = fsc(a, a + 0.5 * b, 2.0)
    assert np.allclose(curve, _naive_fsc(a, a + 0.5 * b, 2.0))
    assert np.allclose(freqs, np.arange(6) / 20.0)
    x = molmap(_atoms(), 4.0, 1.5).data
    _, self_curve = fsc(x, x, 1.5)
    assert np.allclose(self_curve[1:], 1.0)
    assert fsc_resolution(*fsc(x, x, 1.5), 0.143) == pytest.approx(3.0)  # never crosses: Nyquist 2 · apix


def test_fsc_drops_with_noise_as_theory_says() -> None:
    """White signal S plus independent white noise N: FSC(S, S + N) = 1 / sqrt(1 + σ_N² / σ_S²) per shell."""
    rng = np.random.default_rng(1)
    s = rng.standard_normal((32, 32, 32))
    for ratio in (0.25, 1.0, 4.0):
        _, curve = fsc(s, s + math.sqrt(ratio) * rng.standard_normal(s.shape), 1.0)
        assert np.mean(curve[4:]) == pytest.approx(1 / math.sqrt(1 + ratio), abs=0.02)


def test_fsc_resolution_interpolates_the_crossing() -> None:
    freqs = np.array([0.0, 0.1, 0.2, 0.3])
    assert fsc_resolution(freqs, np.array([1.0, 0.8, 0.4, 0.1]), 0.5) == pytest.approx(1 / 0.175)
    assert fsc_resolution(freqs, np.array([1.0, 0.9, 0.8, 0.7]), 0.5) == pytest.approx(1 / 0.3)


def test_resolution_and_cc_rank_noisy_and_blurred_maps() -> None:
    """FSC is blind to isotropic filtering (the filter is constant on each shell) but not to noise; CC sees both."""
    atoms = load_structure("cobrotoxin")
    hi = molmap(atoms, 3.0, 1.0)
    lo = molmap(atoms, 8.0, 1.0, shape=hi.shape, origin=hi.origin)
    mid = molmap(atoms, 5.0, 1.0, shape=hi.shape, origin=hi.origin)
    assert np.allclose(fsc(lo.data, hi.data, 1.0)[1][1:12], 1.0, atol=0.01)
    assert cc(mid.data, hi.data) > cc(lo.data, hi.data)
    rng = np.random.default_rng(0)
    r_clean = fsc_resolution(*fsc(add_noise(hi.data, 4.0, rng), hi.data, 1.0), 0.5)
    r_noisy = fsc_resolution(*fsc(add_noise(hi.data, 0.25, rng), hi.data, 1.0), 0.5)
    assert r_clean < r_noisy


def test_cc_matches_numpy_and_masks() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((5, 6, 7)), rng.standard_normal((5, 6, 7))
    assert cc(a, b) == pytest.approx(np.corrcoef(a.ravel(), b.ravel())[0, 1])
    mask = a > 0
    assert cc(a, b, mask) == pytest.approx(np.corrcoef(a[mask], b[mask])[0, 1])
    assert cc(a, 3 * a + 1) == pytest.approx(1.0)


def test_atom_mask_covers_the_atoms() -> None:
    atoms = _atoms(5)
    m = molmap(atoms, 4.0, 1.0)
    mask = atom_mask(atoms, m.shape, 1.0, m.origin, radius=2.0)
    z, y, x = np.nonzero(mask)
    pos = np.stack([x, y, z], -1) * 1.0 + np.asarray(m.origin)
    d = np.sqrt(((pos[:, None] - atoms.positions[None]) ** 2).sum(-1)).min(1)
    assert d.max() <= 2.0 and mask.sum() >= 5 * 27


# ---------------------------------------------------------------- classical baselines


def test_global_sharpening_restores_a_blurred_map() -> None:
    atoms = load_structure("cobrotoxin")
    target = molmap(atoms, 4.0, 1.5)
    blurred = apply_bfactor(target.data, 150.0, 1.5)
    b_ref = guinier_bfactor(target.data, 1.5, 4.0)
    sharp = global_sharpen(blurred, 1.5, 4.0, b_target=b_ref)
    assert cc(sharp, target.data) > cc(blurred, target.data) + 0.05


def test_local_scaling_with_the_true_profile_helps_a_blurred_map() -> None:
    atoms = load_structure("cobrotoxin")
    target = molmap(atoms, 4.0, 1.5)
    blurred = apply_bfactor(target.data, 150.0, 1.5)
    win = 16
    _, ref = radial_amplitude(target.data[8 : 8 + win, 8 : 8 + win, 8 : 8 + win], 1.5)
    out = local_scale(blurred, 1.5, 4.0, ref, window=win)
    assert out.shape == blurred.shape and np.isfinite(out).all()
    assert cc(out, target.data) > cc(blurred, target.data)


def test_wiener_filter_recovers_a_known_band_gain_and_is_least_squares() -> None:
    """Noise-free, ``y = F⁻¹[g0(band) X]``: the fit returns ``g0`` and reproduces ``y``; with noise the fitted
    gain has the least training squared error of any gain (each band nudged by ±0.05 does worse, summed in
    real space, independently of the Fourier-space fit)."""
    from iclr26_science.cryoem import WienerFilter

    rng = np.random.default_rng(0)
    apix, bands = 1.5, 8
    g0 = np.linspace(1.0, 0.1, bands)
    xs = [rng.standard_normal(shape) for shape in ((12, 12, 12), (10, 14, 12))]  # boxes may differ between pairs
    ys = []
    for x in xs:
        kz, ky, kx = (np.fft.fftfreq(m, d=apix) for m in x.shape)
        s = np.sqrt(kz[:, None, None] ** 2 + ky[None, :, None] ** 2 + kx[None, None, :] ** 2)
        band = np.minimum(np.floor(s / (0.5 / apix / bands)).astype(int), bands - 1)
        ys.append(np.real(np.fft.ifftn(np.fft.fftn(x) * g0[band])))
    wf = WienerFilter.fit(xs, ys, apix, bands=bands)
    np.testing.assert_allclose(wf.gain, g0, rtol=1e-10)
    np.testing.assert_allclose(wf(xs[1]), ys[1], atol=1e-5)
    noisy = [y + 0.7 * rng.standard_normal(y.shape) for y in ys]
    fit = WienerFilter.fit(noisy, ys, apix, bands=bands)

    def sse(f: WienerFilter) -> float:
        return float(sum(((f(x).astype(np.float64) - y) ** 2).sum() for x, y in zip(noisy, ys, strict=True)))

    best = sse(fit)
    for b in range(bands):
        for d in (-0.05, 0.05):
            gain = fit.gain.copy()
            gain[b] += d
            assert sse(WienerFilter(gain, apix)) > best


def test_wiener_gain_is_the_signal_share_of_the_power() -> None:
    """White signal of variance 1 plus independent white noise of variance 3: ``g = S/(S+N) = 0.25`` in every band."""
    from iclr26_science.cryoem import WienerFilter

    rng = np.random.default_rng(1)
    ys = [rng.standard_normal((24, 24, 24)) for _ in range(4)]
    xs = [y + np.sqrt(3.0) * rng.standard_normal(y.shape) for y in ys]
    gain = WienerFilter.fit(xs, ys, 1.0, bands=4).gain
    np.testing.assert_allclose(gain[1:], 0.25, atol=0.02)  # band 0 holds few coefficients (sampling noise)
    with pytest.raises(ValueError, match="one 3-D grid"):
        WienerFilter.fit([xs[0]], [ys[0][:-1]], 1.0)
    with pytest.raises(ValueError, match="as many inputs as targets"):
        WienerFilter.fit([], [], 1.0)


# ---------------------------------------------------------------- training pairs


def test_pairs_of_the_three_tasks() -> None:
    from iclr26_science.cryoem import Degradation, make_pair, normalise, random_crops

    atoms = load_structure("5a7u")
    pairs = {}
    for task in ("sharpen", "super-resolution", "missing-wedge"):
        p = make_pair(atoms, Degradation(task=task, snr=100.0), 2.0, np.random.default_rng(0), min_edge=24)  # type: ignore[arg-type]
        assert p.x.shape == p.y.shape and p.x.shape[0] >= 24 and p.x.shape[0] % 8 == 0
        assert 0.0 <= p.x.min() and p.x.max() <= 1.0 and 0.0 <= p.y.min() and p.y.max() == pytest.approx(1.0)
        pairs[task] = p
    assert np.array_equal(pairs["sharpen"].y, pairs["missing-wedge"].y)  # one target, three inputs
    wedge = pairs["missing-wedge"].raw.data
    assert (
        np.abs(np.fft.fftn(wedge)[~missing_wedge_mask(wedge.shape, 60.0)]).max()
        < 1e-2 * np.abs(np.fft.fftn(wedge)).max()
    )
    _, amp_lo = radial_amplitude(pairs["super-resolution"].raw.data, 2.0)
    _, amp_hi = radial_amplitude(molmap(atoms, 4.0, 2.0).data, 2.0)
    assert amp_lo[-3] / amp_lo[1] < amp_hi[-3] / amp_hi[1]  # the 8 Å input lacks the 4 Å target's detail
    raw = pairs["sharpen"].raw.data
    assert np.allclose(pairs["sharpen"].x, np.clip(raw / np.quantile(raw[raw > 0], 0.999), 0, 1))
    assert normalise(raw, 0.01, 0.99).min() == 0.0 and normalise(raw, 0.01, 0.99).max() == 1.0
    x, y = random_crops(list(pairs.values()), 8, 5, np.random.default_rng(0))
    assert x.shape == y.shape == (5, 1, 8, 8, 8) and (y.reshape(5, -1).max(1) >= 0.2).all()


def test_molmap_on_a_target_grid_lines_up_voxel_for_voxel(tmp_path: Path) -> None:
    """``molmap(atoms, res, grid=target)`` takes the target's shape, origin and voxel size: equal to the
    explicit shape/origin/apix call, and comparable with fsc on maps (apix from them)."""
    from iclr26_science.cryoem import fsc, fsc_resolution, read_map, write_map

    atoms = _atoms()
    target = molmap(atoms, 4.0, 1.5, pad=12.0)  # a box other than the default one
    path = write_map(tmp_path / "target.mrc", target)
    m = read_map(path)
    model = molmap(atoms, 4.0, grid=m)
    explicit = molmap(atoms, 4.0, 1.5, shape=m.data.shape, origin=m.origin)
    assert model.data.shape == m.data.shape and model.origin == m.origin and np.array_equal(model.data, explicit.data)
    freqs, curve = fsc(model, m)
    f2, c2 = fsc(model.data, m.data, 1.5)
    assert np.array_equal(freqs, f2) and np.array_equal(curve, c2) and curve[1:10].min() > 0.99
    assert fsc_resolution(freqs, curve, 0.5) == fsc_resolution(f2, c2, 0.5)
    with pytest.raises(ValueError, match="grid=target"):
        fsc(molmap(atoms, 4.0, 1.5), m)  # the default box differs from the target's
    with pytest.raises(ValueError, match="differs from the grid"):
        molmap(atoms, 4.0, 1.0, grid=m)
    with pytest.raises(ValueError, match="apix="):
        molmap(atoms, 4.0)
    with pytest.raises(ValueError, match="apix="):
        fsc(model.data, m.data)


# ---------------------------------------------------------------- sharpening-sensitive spectrum metrics


def _hand_log_ratio(a: np.ndarray, t: np.ndarray, apix: float, resolution: float, low: float) -> tuple[list, list]:
    """``(s_k², ln A_a(k) − ln A_t(k))`` per shell in the band, by a loop over every Fourier coefficient."""
    n = max(a.shape)
    step = 1.0 / (n * apix)
    fa, ft = np.fft.fftn(a.astype(np.float64)), np.fft.fftn(t.astype(np.float64))
    power: dict[int, list[float]] = {}
    for idx in np.ndindex(*a.shape):
        q = [min(i, m - i) / (m * apix) for i, m in zip(idx, a.shape, strict=True)]  # |frequency| per axis
        k = int(round(math.sqrt(sum(v * v for v in q)) / step))
        acc = power.setdefault(k, [0.0, 0.0, 0.0])
        acc[0] += float(abs(fa[idx])) ** 2
        acc[1] += float(abs(ft[idx])) ** 2
        acc[2] += 1
    s2, r = [], []
    for k in sorted(power):
        if 1.0 / low <= k * step <= 1.0 / resolution and k <= n // 2:
            pa, pt, count = power[k]
            s2.append((k * step) ** 2)
            r.append(0.5 * math.log(pa / count) - 0.5 * math.log(pt / count))
    return s2, r


def test_amplitude_metrics_match_a_hand_computation() -> None:
    """D = RMS of the offset-free log amplitude ratio over the band's shells, ΔB = −4 × its slope in s²."""
    from iclr26_science.cryoem import amplitude_deviation, relative_bfactor

    rng = np.random.default_rng(3)
    a, t = rng.standard_normal((12, 12, 12)), rng.standard_normal((12, 12, 12))  # cubic: no rounding ties
    s2, r = _hand_log_ratio(a, t, 1.5, 3.5, 10.0)
    assert len(r) == 4  # shells 2..5 of width 1/18 Å⁻¹ lie between 1/10 and 1/3.5
    mean = sum(r) / len(r)
    hand_d = math.sqrt(sum((v - mean) ** 2 for v in r) / len(r))
    x_bar = sum(s2) / len(s2)
    slope = sum((x - x_bar) * (v - mean) for x, v in zip(s2, r, strict=True)) / sum((x - x_bar) ** 2 for x in s2)
    assert amplitude_deviation(a, t, 1.5, resolution=3.5) == pytest.approx(hand_d, rel=1e-10)
    assert relative_bfactor(a, t, 1.5, resolution=3.5) == pytest.approx(-4 * slope, rel=1e-8)
    maps = (
        DensityMap(a.astype(np.float32), (1.5, 1.5, 1.5), (0.0, 0.0, 0.0)),
        DensityMap(t.astype(np.float32), (1.5, 1.5, 1.5)),
    )
    assert amplitude_deviation(*maps, resolution=3.5) == pytest.approx(hand_d, rel=1e-5)  # apix from the maps
    assert amplitude_deviation(3.0 * t + 0.0, t, 1.5, resolution=3.5) == pytest.approx(0.0, abs=1e-12)  # scale-free


def test_an_extra_bfactor_moves_the_amplitude_metrics_while_fsc_barely_moves() -> None:
    """The issue's case: an extra isotropic B = 200 Å² on a noisy map moves FSC-0.5 by hundredths of an Å
    (the filter is constant on each shell) but the amplitude metrics by a lot (ΔB by ≈ 200 Å²)."""
    from iclr26_science.cryoem import amplitude_deviation, relative_bfactor

    target = molmap(load_structure("cobrotoxin"), 4.0, 1.5).data
    noisy = add_noise(target, 2.0, np.random.default_rng(0))
    blurred = apply_bfactor(noisy, 200.0, 1.5)
    r0 = fsc_resolution(*fsc(noisy, target, 1.5), 0.5)
    r1 = fsc_resolution(*fsc(blurred, target, 1.5), 0.5)
    assert abs(r1 - r0) < 0.05, (r0, r1)
    d0, d1 = (amplitude_deviation(m, target, 1.5, resolution=4.0) for m in (noisy, blurred))
    b0, b1 = (relative_bfactor(m, target, 1.5, resolution=4.0) for m in (noisy, blurred))
    assert d1 > d0 + 0.5 and d1 > 5 * d0, (d0, d1)
    assert b1 - b0 == pytest.approx(200.0, rel=0.05)
    # noise-free: the target blurred by B has ΔB ≈ B and D ≈ (B/4) · std(s²) over the band's shells
    clean = apply_bfactor(target, 200.0, 1.5)
    assert relative_bfactor(clean, target, 1.5, resolution=4.0) == pytest.approx(200.0, rel=0.05)
    s2, _ = _hand_log_ratio(clean, target, 1.5, 4.0, 10.0)
    assert amplitude_deviation(clean, target, 1.5, resolution=4.0) == pytest.approx(50.0 * np.std(s2), rel=0.05)


def test_amplitude_metrics_reject_bad_input() -> None:
    from iclr26_science.cryoem import amplitude_deviation

    a = np.random.default_rng(0).standard_normal((12, 12, 12))
    with pytest.raises(ValueError, match="apix="):
        amplitude_deviation(a, a, resolution=4.0)
    with pytest.raises(ValueError, match="different shapes"):
        amplitude_deviation(a, a[:10], 1.5, resolution=4.0)
    with pytest.raises(ValueError, match="resolution < low"):
        amplitude_deviation(a, a, 1.5, resolution=12.0)
    with pytest.raises(ValueError, match="fewer than 2 shells"):
        amplitude_deviation(a, a, 1.5, resolution=9.0, low=10.0)


# ---------------------------------------------------------------- restore(map, model)


def test_resample_keeps_the_box_and_interpolates_a_ramp_exactly() -> None:
    """Voxel i of the result sits at origin − a/2 + (i + ½)·a'; a linear ramp is reproduced inside the box."""
    from iclr26_science.cryoem import resample

    n, a, a2 = 12, 2.0, 1.5
    x = (np.arange(n) * a + 5.0).astype(np.float32)  # value = the x coordinate (Å) of the voxel centre
    m = DensityMap(np.broadcast_to(x, (n, n, n)).copy(), (a, a, a), (5.0, -1.0, 2.0))
    out = resample(m, a2)
    assert out.data.shape == (16, 16, 16) and out.apix == a2
    assert out.origin == pytest.approx((5.0 - a / 2 + a2 / 2, -1.0 - a / 2 + a2 / 2, 2.0 - a / 2 + a2 / 2))
    centres = out.origin[0] + np.arange(16) * a2
    inside = (centres >= 5.0) & (centres <= 5.0 + (n - 1) * a)
    assert np.allclose(out.data[3, 4, inside], centres[inside], atol=1e-4)
    assert resample(m, a) is m
    # a box that a' does not divide (10 × 1 Å → 8 voxels of 1.3 Å): the voxels still sit at (i + ½)·a'
    ramp = np.broadcast_to(np.arange(10, dtype=np.float32), (10, 10, 10)).copy()
    odd = resample(DensityMap(ramp, (1.0, 1.0, 1.0), (0.0, 0.0, 0.0)), 1.3)
    assert odd.data.shape == (8, 8, 8)
    want = (np.arange(8) + 0.5) * 1.3 - 0.5  # input index (= value) at each output centre
    inside = want <= 9
    assert np.allclose(odd.data[2, 5, inside], want[inside], atol=1e-5) and odd.data[2, 5, -1] == 9.0
    # where the box divides, the same as torch's trilinear resize
    import torch
    import torch.nn.functional as F

    rng = np.random.default_rng(0)
    d = rng.standard_normal((6, 8, 10)).astype(np.float32)
    ref = F.interpolate(torch.from_numpy(d)[None, None], size=(9, 12, 15), mode="trilinear", align_corners=False)
    assert np.allclose(
        resample(DensityMap(d, (1.5, 1.5, 1.5), (0.0, 0.0, 0.0)), 1.0).data, ref[0, 0].numpy(), atol=1e-5
    )


def test_restore_with_an_identity_network_returns_the_resampled_scaled_map(tmp_path: Path) -> None:
    """A residual SCUNet3D at initialisation is the identity (zero tail), so restore() must give back exactly
    the map resampled to the network's voxel size and scaled as in training, on the resampled grid (padding,
    tiling and fusion leave no trace), and write it as MRC."""
    from iclr26_science.cryoem import SCUNet3D, resample, restore, scale_positive

    m = molmap(load_structure("gramicidin"), 6.0, 2.0)
    net = SCUNet3D(dim=4, depths=(1, 1, 1), head_dim=2, window=2, residual=True, apix=3.0, crop=8)
    out = restore(m, net, out=tmp_path / "restored.mrc")
    expected = resample(m, 3.0)
    assert out.apix == 3.0 and out.origin == expected.origin and out.data.shape == expected.data.shape
    assert np.allclose(out.data, scale_positive(expected.data), atol=1e-5)
    back = read_map(tmp_path / "restored.mrc")
    assert np.array_equal(back.data, out.data) and back.apix == pytest.approx(3.0)
    same = restore(write_map(tmp_path / "in.mrc", m), net, apix=2.0, tile=12, stride=4, weighting="uniform")
    assert same.data.shape == m.data.shape and np.allclose(same.data, scale_positive(m.data), atol=1e-5)
    with pytest.raises(DataError, match="stride"):
        restore(m, net, stride=99)


# ---------------------------------------------------------------- fine_tune(inputs, targets, network)


def _user_pair() -> tuple[DensityMap, DensityMap]:
    """A blurred, noisy 'experimental' map at 2 Å and its model map on the same grid."""
    atoms = load_structure("gramicidin")
    target = molmap(atoms, 6.0, 2.0, pad=10.0)
    raw = add_noise(apply_bfactor(target.data, 150.0, 2.0), 2.0, np.random.default_rng(0))
    return DensityMap(raw, target.voxel_size, target.origin), target


def test_fine_tune_one_step_is_the_recipe_by_hand() -> None:
    """One step = the pair resampled to the network's voxel size and scaled, crops drawn by random_crops with
    the seed, α·MSE + (1 − α)·L_Hist, one AdamW step: the same parameters as doing it by hand."""
    import copy

    import torch

    from iclr26_science.cryoem import (
        FineTuneSettings,
        SCUNet3D,
        fine_tune,
        random_crops,
        resample,
        restoration_loss,
        scale_positive,
    )
    from iclr26_science.cryoem.finetune import MapPair

    torch.manual_seed(0)
    net = SCUNet3D(dim=4, depths=(1, 1, 1), head_dim=2, window=2, residual=True, apix=3.0, crop=8)
    by_hand = copy.deepcopy(net)
    x_map, y_map = _user_pair()
    s = FineTuneSettings(steps=1, batch_size=2, lr=1e-2, seed=5)
    fine_tune([x_map], [y_map], net, s)
    pair = MapPair("p", scale_positive(resample(x_map, 3.0).data), scale_positive(resample(y_map, 3.0).data))
    x, y = random_crops([pair], 8, 2, np.random.default_rng(5), min_target=0.2)
    opt = torch.optim.AdamW(by_hand.parameters(), lr=1e-2, weight_decay=0.05)
    by_hand.train()
    restoration_loss(by_hand(torch.from_numpy(x)), torch.from_numpy(y), 0.9, 32).backward()
    opt.step()
    for (name, a), b in zip(net.state_dict().items(), by_hand.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert not net.training


def test_fine_tune_learns_a_users_pair_and_rejects_bad_input(tmp_path: Path) -> None:
    import torch

    from iclr26_science.cryoem import FineTuneSettings, SCUNet3D, fine_tune, random_crops, restoration_loss
    from iclr26_science.cryoem.finetune import map_pairs

    torch.manual_seed(0)
    net = SCUNet3D(dim=4, depths=(1, 1, 1), head_dim=2, window=2, residual=True, apix=2.0, crop=8)
    x_map, y_map = _user_pair()
    pairs, apix = map_pairs([write_map(tmp_path / "x.mrc", x_map)], [y_map], None)  # paths or maps
    assert apix == 2.0 and pairs[0].x.max() <= 1.0
    x, y = (torch.from_numpy(v) for v in random_crops(pairs, 8, 8, np.random.default_rng(99)))

    def probe() -> float:
        with torch.no_grad():
            return float(restoration_loss(net.eval()(x), y, 1.0))

    before = probe()
    losses: list[float] = []
    fine_tune(
        [x_map], [y_map], net, FineTuneSettings(steps=40, batch_size=4, lr=3e-3), log=lambda _, v: losses.append(v)
    )
    assert len(losses) == 40 and probe() < 0.8 * before, (before, probe())
    with pytest.raises(DataError, match="as many targets as inputs"):
        fine_tune([x_map], [], net)
    with pytest.raises(DataError, match="pair 0: .* must share one grid"):
        fine_tune([x_map], [molmap(load_structure("gramicidin"), 6.0, 3.0)], net)
    with pytest.raises(DataError, match="smaller than the crop 48"):
        fine_tune([x_map], [y_map], net, FineTuneSettings(steps=1, crop=48))
    with pytest.raises(DataError, match="multiple of the network's 2\\^L = 2"):
        fine_tune([x_map], [y_map], net, FineTuneSettings(steps=1, crop=9))
    with pytest.raises(DataError, match=r"inputs\[0\]: expected a DensityMap"):
        fine_tune([x_map.data], [y_map], net)  # type: ignore[list-item]


# ---------------------------------------------------------------- pretrain(network, maps): JEPA on your maps


def _tiny_unet() -> Any:
    import torch

    from iclr26_science.cryoem import SCUNet3D

    torch.manual_seed(0)
    return SCUNet3D(dim=4, depths=(1, 1, 1), head_dim=2, window=2, residual=True, apix=2.0, crop=16)


def test_pretrain_one_step_is_the_jepa_recipe_by_hand() -> None:
    """One step = the map scaled, crops by random_crops and masks by sample_masks from the seeded generator,
    the JEPA loss, one AdamW step on the online parameters, the EMA update at ema_momentum(1, steps): the
    same network as doing it by hand; the decoder is untouched and trainable again afterwards."""
    import copy

    import torch

    from iclr26_science.cryoem import (
        JEPA3D,
        PretrainSettings,
        ema_momentum,
        pretrain,
        random_crops,
        sample_masks,
        scale_positive,
    )
    from iclr26_science.cryoem.finetune import MapPair

    net = _tiny_unet()
    by_hand, decoder0 = copy.deepcopy(net), copy.deepcopy(net.up.state_dict())
    x_map, _ = _user_pair()
    s = PretrainSettings(steps=1, batch_size=2, lr=1e-2, embed_dim=8, predictor_dim=8, predictor_depth=1,
                         predictor_heads=2, seed=5)  # fmt: skip
    pretrain(net, [x_map], s, progress=False)
    torch.manual_seed(5)
    g = 16 // 2**net.levels
    jepa = JEPA3D(by_hand, (g, g, g), embed_dim=8, predictor_dim=8, predictor_depth=1, predictor_heads=2)
    opt = torch.optim.AdamW(jepa.online_parameters(), lr=1e-2, weight_decay=0.05)
    rng = np.random.default_rng(5 * 7919 + 11)
    x, _ = random_crops([MapPair("m", scale_positive(x_map.data), scale_positive(x_map.data))], 16, 2, rng,
                        min_target=0.5)  # fmt: skip
    ctx, tgt = sample_masks((g, g, g), rng, targets=4)
    jepa.train()
    loss = jepa.loss(torch.from_numpy(x), ctx, tgt)
    loss.backward()
    opt.step()
    jepa.update_target(ema_momentum(1, 1, 0.996))
    for (name, a), b in zip(net.state_dict().items(), by_hand.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert net.history == [{"step": 0.0, "loss": float(loss.detach()), "momentum": 1.0}]
    assert all(torch.equal(v, decoder0[k]) for k, v in net.up.state_dict().items())
    assert all(p.requires_grad for p in net.parameters()) and not net.training


def test_pretrain_on_files_and_tensors_saves_and_rejects_bad_maps(tmp_path: Path) -> None:
    import torch

    from iclr26_science.cryoem import PretrainSettings, SCUNet3D, pretrain

    x_map, _ = _user_pair()
    path = write_map(tmp_path / "mine.mrc", x_map)
    s = PretrainSettings(steps=6, batch_size=2, embed_dim=8, predictor_dim=8, predictor_depth=1, predictor_heads=2)
    rows: list[dict[str, float]] = []
    net = pretrain(_tiny_unet(), [path, torch.from_numpy(x_map.data)], s, progress=False, callback=rows.append,
                   save_to=tmp_path / "pre")  # fmt: skip
    assert rows == net.history and [r["step"] for r in rows] == [0, 1, 2, 3, 4, 5]
    assert all(np.isfinite(r["loss"]) for r in rows) and rows[-1]["momentum"] == 1.0
    loaded = SCUNet3D.from_pretrained(tmp_path / "pre")
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), net.state_dict().values(), strict=True))
    stopped = pretrain(_tiny_unet(), [x_map], s, progress=False, callback=lambda r: r["step"] >= 1)
    assert len(stopped.history) == 2
    with pytest.raises(DataError, match=r"maps\[0\]: expected a 3-D map \[D, H, W\]"):
        pretrain(_tiny_unet(), [np.zeros((20, 20))], s, progress=False)
    with pytest.raises(DataError, match=r"maps\[0\]: map of shape \(10, 10, 10\) .* smaller than the crop 16"):
        pretrain(_tiny_unet(), [np.random.default_rng(0).random((10, 10, 10))], s, progress=False)
    with pytest.raises(DataError, match=r"maps\[1\]: the map is constant"):
        pretrain(_tiny_unet(), [x_map, np.ones((20, 20, 20))], s, progress=False)
    with pytest.raises(DataError, match="maps must be a list"):
        pretrain(_tiny_unet(), x_map, s, progress=False)  # type: ignore[arg-type]
    with pytest.raises(DataError, match=r"nothing.mrc: no such map file"):
        pretrain(_tiny_unet(), [tmp_path / "nothing.mrc"], s, progress=False)


# ---------------------------------------------------------------- bad maps: one line naming the map


def test_wrong_voxel_size_or_axis_order_is_one_line_naming_the_map(tmp_path: Path) -> None:
    """A map whose header gives a voxel size no cryo-EM map has (cell in nm: 0.1 Å; 50 Å), anisotropic voxels,
    an axis order that is not a permutation, or a tensor with the channel last: one line naming the input and
    what was expected, from restore, fine_tune and pretrain alike."""
    from iclr26_science.cryoem import SCUNet3D, fine_tune, pretrain, restore

    x_map, y_map = _user_pair()
    net = SCUNet3D(dim=4, depths=(1, 1, 1), head_dim=2, window=2, residual=True, apix=2.0, crop=8)
    in_nm = DensityMap(x_map.data, (0.2 / 10, 0.2 / 10, 0.2 / 10))  # 2 Å written as 0.2 nm, then ÷ 10 again
    with pytest.raises(DataError, match=r"^restore: the map: voxel size 0.02 Å is outside 0.2–20 Å per voxel") as err:
        restore(in_nm, net)
    assert "\n" not in str(err.value)
    path = write_map(tmp_path / "coarse.mrc", DensityMap(x_map.data, (50.0, 50.0, 50.0)))
    with pytest.raises(DataError, match=r"coarse.mrc: voxel size 50 Å is outside 0.2–20 Å"):
        restore(path, net)
    aniso = DensityMap(x_map.data, (2.0, 2.0, 3.0))
    with pytest.raises(DataError, match=r"^inputs\[0\]: anisotropic voxels \(2.0, 2.0, 3.0\) Å .* expected cubic"):
        fine_tune([aniso], [y_map], net)
    with pytest.raises(DataError, match=r"^targets\[0\]: voxel size 0.02 Å"):
        fine_tune([x_map], [DensityMap(y_map.data, in_nm.voxel_size)], net)
    with pytest.raises(DataError, match=r"^maps\[1\]: anisotropic voxels"):
        pretrain(net, [x_map, aniso], progress=False)
    with pytest.raises(
        DataError,
        match=r"^maps\[0\]: expected a 3-D map \[D, H, W\] \(or \[1, D, H, W\]\), got shape \(20, 20, 20, 1\)",
    ):
        pretrain(net, [np.ones((20, 20, 20, 1), np.float32)], progress=False)
    bad_axes = tmp_path / "axes.mrc"
    with mrcfile.new(bad_axes) as m:
        m.set_data(np.ones((4, 4, 4), np.float32))
        m.voxel_size = 2.0
        header: Any = m.header
        header.mapc, header.mapr, header.maps = 1, 1, 3
    with pytest.raises(
        DataError, match=r"axes.mrc: axis order \(mapc, mapr, maps\) = \(1, 1, 3\) is not a permutation"
    ):
        restore(bad_axes, net)
