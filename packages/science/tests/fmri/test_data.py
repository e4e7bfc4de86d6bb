"""ROI time-series handling against scipy, bad inputs, and the heuristic AAL2 → Yeo-7 network map."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import signal, stats

from iclr26_science.fmri import (
    NetworkMap,
    aal2_network_map,
    bandpass,
    load_hcp,
    preprocess,
    random_crops,
    resample_tr,
    sliding_windows,
    validate_timeseries,
    zscore,
)
from iclr26_shared.errors import DataError


def test_zscore_matches_scipy() -> None:
    x = np.random.default_rng(0).normal(3.0, 2.0, (5, 200))
    np.testing.assert_allclose(zscore(x), np.asarray(stats.zscore(x, axis=1)), atol=1e-12)
    assert np.all(zscore(np.ones((2, 10))) == 0)  # a constant ROI gives zeros, not NaN


def test_bandpass_matches_scipy_and_keeps_the_band() -> None:
    tr = 2.0
    t = np.arange(400) * tr
    x = np.stack([np.sin(2 * np.pi * 0.05 * t), np.sin(2 * np.pi * 0.2 * t), np.sin(2 * np.pi * 0.003 * t)])
    sos = signal.butter(2, [0.01, 0.1], btype="bandpass", fs=1 / tr, output="sos")
    y = bandpass(x, tr)
    np.testing.assert_allclose(y, signal.sosfiltfilt(sos, x, axis=-1), atol=1e-12)
    mid = slice(50, 350)
    assert np.std(y[0, mid]) > 0.9 * np.std(x[0, mid])  # 0.05 Hz passes
    assert np.std(y[1, mid]) < 0.1 * np.std(x[1, mid])  # 0.2 Hz is cut
    assert np.std(y[2, mid]) < 0.2 * np.std(x[2, mid])  # 0.003 Hz drift is cut


def test_resample_tr_matches_scipy() -> None:
    x = np.random.default_rng(1).normal(size=(3, 1200))
    y = resample_tr(x, 0.72, 2.0)
    assert y.shape == (3, 432)
    np.testing.assert_allclose(y, signal.resample_poly(x, 9, 25, axis=-1))
    assert resample_tr(x, 2.0, 2.0) is not None and resample_tr(x, 2.0, 2.0).shape == x.shape


@pytest.mark.parametrize(
    ("x", "kwargs", "match"),
    [
        (np.array([[1.0, np.nan, 2.0]]), {}, "NaN/inf values in ROI"),
        (np.zeros((4, 50)), {"n_rois": 80}, "4 ROIs, but the network map has 80"),
        (np.zeros((80, 5)), {"min_length": 64}, "scan too short: 5 time points"),
        (np.zeros(10), {}, r"\[ROIs, time\]"),
    ],
)
def test_bad_series_raise_one_line(x: np.ndarray, kwargs: dict[str, int], match: str) -> None:
    with pytest.raises(DataError, match=match) as err:
        validate_timeseries(x, name="subject 3", **kwargs)
    assert "\n" not in str(err.value) and str(err.value).startswith("subject 3")


def test_preprocess_checks_length_after_resampling_and_bad_bands() -> None:
    x = np.random.default_rng(2).normal(size=(4, 100))
    with pytest.raises(DataError, match="scan too short: 36 time points at TR 2.0 s"):
        preprocess(x, 0.72, min_length=64)
    with pytest.raises(DataError, match="Nyquist"):
        bandpass(x, 2.0, 0.01, 0.3)
    y = preprocess(np.random.default_rng(2).normal(size=(4, 300)), 0.72)
    np.testing.assert_allclose(y.mean(1), 0, atol=1e-9)
    np.testing.assert_allclose(y.std(1), 1, atol=1e-9)


def test_crops() -> None:
    x = np.arange(2 * 50, dtype=float).reshape(2, 50)
    c = random_crops(x, 10, 4, np.random.default_rng(0))
    assert c.shape == (4, 2, 10)
    for crop in c:  # each crop is a contiguous window of the scan
        s = int(crop[0, 0])
        np.testing.assert_array_equal(crop, x[:, s : s + 10])
    w = sliding_windows(x, 10, 3)
    assert [int(v[0, 0]) for v in w] == [0, 20, 40]
    with pytest.raises(DataError, match="crop length 60"):
        random_crops(x, 60, 1, np.random.default_rng(0))


def test_hcp_scans_are_real_and_preprocessed() -> None:
    hcp = load_hcp()
    assert len(hcp.scans) == 7 and all(s.shape == (80, 432) for s in hcp.scans)
    np.testing.assert_allclose(hcp.scans[0].std(1), 1, atol=1e-4)
    assert hcp.n_rois == 80


def test_network_map_is_anatomically_plausible() -> None:
    m = aal2_network_map()
    assert m.n_rois == 80 and m.heuristic and sum(m.sizes()) == 80
    assert m.names == ("Vis", "SomMot", "DorsAttn", "SalVentAttn", "Limbic", "Cont", "Default")
    net = {r: m.names[k] for r, k in zip(m.roi_names, m.labels, strict=True)}

    def share(keys: tuple[str, ...], want: str) -> float:
        rois = [r for r in net if r.startswith(keys)]
        return float(np.mean([net[r] == want for r in rois]))

    assert share(("Calcarine", "Cuneus", "Lingual", "Occipital"), "Vis") >= 0.6
    assert share(("Precentral", "Postcentral", "Paracentral", "Supp_Motor"), "SomMot") >= 0.75
    assert share(("Precuneus", "Angular", "Cingulate_Post", "Frontal_Sup_Medial"), "Default") >= 0.75
    sub = aal2_network_map(subcortical=True)
    assert sub.n_rois == 94 and sub.names[-1] == "Subcortex" and sub.sizes()[-1] == 14
    assert aal2_network_map(source="dosenbach").n_rois == 80


def test_network_map_validates() -> None:
    with pytest.raises(DataError, match="have no ROI"):
        NetworkMap(labels=np.array([0, 0, 1]), names=("a", "b", "c"))
    with pytest.raises(DataError, match="must lie in"):
        NetworkMap(labels=np.array([0, 3]), names=("a", "b"))
    groups = NetworkMap(labels=np.array([1, 0, 1]), names=("a", "b")).groups()
    assert [g.tolist() for g in groups] == [[1], [0, 2]]


def test_official_network_mapping_npz_is_read_as_the_official_model_does(tmp_path: Path) -> None:
    """Keys ``network_map_{atlas}_{n}n`` (n > 1) or ``network_map_{atlas}``; each atlas shifted to start after
    the previous one's largest label (official CNN_TF: nwd − (nwd.min() − max_prev) + 1), concatenated."""
    from iclr26_science.fmri import OFFICIAL_ATLASES, read_network_map

    schaefer = np.repeat(np.arange(1, 8), [3, 2, 2, 1, 1, 2, 3])  # labels 1..7 as a file may store them
    path = tmp_path / "network_mapping.npz"
    np.savez(path, network_map_schaefer400_7n=schaefer, network_map_tian3=np.zeros(4, dtype=np.int64),
             network_map_buckner7=np.full(2, 5), network_map_schaefer400_17n=np.arange(14) % 3)  # fmt: skip
    m = read_network_map(path)
    hand = np.concatenate([schaefer - 1, np.full(4, 7), np.full(2, 8)])  # shifted by hand
    assert np.array_equal(m.labels, hand) and m.n_rois == 20 and m.names[-2:] == ("Subcortex", "Cerebellum")
    assert m.names[:7] == ("Vis", "SomMot", "DorsAttn", "SalVentAttn", "Limbic", "Cont", "Default")
    assert m.sizes() == [3, 2, 2, 1, 1, 2, 3, 4, 2] and OFFICIAL_ATLASES[0] == ("schaefer400", 7)
    with pytest.raises(DataError, match="no key 'network_map_tian3_2n'"):
        read_network_map(path, [("schaefer400", 7), ("tian3", 2)])
    with pytest.raises(DataError, match="17 consecutive labels, got \\[0, 1, 2\\]"):
        read_network_map(path, [("schaefer400", 17)])
    np.savez(path, network_map_x_3n=np.array([0, 1, 3]))
    with pytest.raises(DataError, match="3 consecutive labels, got \\[0, 1, 3\\]"):
        read_network_map(path, [("x", 3)])
    with pytest.raises(DataError, match="no network-mapping file"):
        read_network_map(tmp_path / "missing.npz")


def test_schaefer_tian_buckner_names_give_the_papers_nine_tokens(tmp_path: Path) -> None:
    from iclr26_science.fmri import atlas_network_map, schaefer_labels

    lines = [
        "1\t7Networks_LH_Vis_1\t120\t18\t131\t0",
        "2\t7Networks_LH_SomMot_1\t70\t130\t180\t0",
        "3\t7Networks_RH_Default_pCunPCC_2\t205\t62\t78\t0",
        "4\t7Networks_RH_Cont_Par_1\t230\t148\t34\t0",
    ]
    (tmp_path / "order.txt").write_text("\n".join(lines) + "\n")
    names = schaefer_labels(tmp_path / "order.txt")
    assert names == ["7Networks_LH_Vis_1", "7Networks_LH_SomMot_1", "7Networks_RH_Default_pCunPCC_2",
                     "7Networks_RH_Cont_Par_1"]  # fmt: skip
    m = atlas_network_map(tmp_path / "order.txt", tian=3, buckner=2)
    assert m.names == ("Vis", "SomMot", "Cont", "Default", "Subcortex", "Cerebellum")
    assert [m.names[k] for k in m.labels] == ["Vis", "SomMot", "Default", "Cont", *["Subcortex"] * 3,
                                              *["Cerebellum"] * 2]  # fmt: skip
    seventeen = atlas_network_map(["17Networks_LH_VisCent_ExStr_1", "17Networks_RH_TempPar_1",
                                   "17Networks_LH_DefaultA_PFCm_1", "17Networks_LH_SalVentAttnB_PFCl_1"])  # fmt: skip
    assert [seventeen.names[k] for k in seventeen.labels] == ["Vis", "Default", "Default", "SalVentAttn"]
    with pytest.raises(DataError, match=r"schaefer\[1\]: 'Thal_L' is not a Schaefer ROI name"):
        atlas_network_map(["7Networks_LH_Vis_1", "Thal_L"])
    with pytest.raises(DataError, match="unknown network 'Foo'"):
        atlas_network_map(["7Networks_LH_Foo_1"])
    (tmp_path / "empty.txt").write_text("no names here\n")
    with pytest.raises(DataError, match="no Schaefer ROI name"):
        schaefer_labels(tmp_path / "empty.txt")
