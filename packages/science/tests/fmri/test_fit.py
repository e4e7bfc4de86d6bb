"""fit(encoder, scans): Brain-Semantoks pre-training on a user's parcellated time series; the preprocessing
(TR, band, crop) saved with the encoder so a reloaded one prepares a new scan identically."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from iclr26_science.fmri import SemantoksEncoder, preprocess
from iclr26_science.methods.brain_semantoks.config import PRESETS
from iclr26_science.methods.brain_semantoks.train import fit
from iclr26_shared.errors import DataError

GROUPS = [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9, 10, 11]]
CFG = dataclasses.replace(PRESETS["smoke"], steps=3, batch_size=4, head_hidden=16, proj_dim=8)


def _encoder(
    tr: float | None = None, band_low: float | None = None, band_high: float | None = None
) -> SemantoksEncoder:
    torch.manual_seed(0)
    return SemantoksEncoder(GROUPS, dim=16, depth=1, heads=2, patch=16, patches=2, tr=tr, band_low=band_low,
                            band_high=band_high)  # fmt: skip  # crop 32


def _scans(n: int = 3, t: int = 150, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((12, t)).cumsum(1) * 0.1 + rng.standard_normal((12, t)) for _ in range(n)]


def test_fit_records_the_preprocessing_and_a_reloaded_encoder_prepares_a_new_scan_identically(tmp_path: Path) -> None:
    rows: list[dict[str, float]] = []
    enc = fit(_encoder(tr=1.5, band_low=0.02, band_high=0.15), _scans(), tr=0.8, cfg=CFG, progress=False,
              callback=rows.append, save_to=tmp_path / "enc")  # fmt: skip
    assert (enc.tr, enc.band_low, enc.band_high, enc.crop) == (1.5, 0.02, 0.15, 32)  # the encoder's, not CFG's
    assert [r["step"] for r in rows] == [0, 1, 2] and enc.history == rows
    assert all(np.isfinite(r["loss"]) for r in rows)
    loaded = SemantoksEncoder.from_pretrained(tmp_path / "enc")
    new = _scans(1, t=200, seed=9)[0]
    want = preprocess(new, 0.72, target_tr=1.5, low=0.02, high=0.15, n_rois=12, min_length=32)  # by hand
    np.testing.assert_array_equal(loaded.preprocess(new, 0.72), want)
    np.testing.assert_array_equal(enc.preprocess(new, 0.72), want)
    assert np.array_equal(loaded.scan_features(new, 0.72, windows=3), enc.scan_features(new, 0.72, windows=3))
    assert enc.scan_features(new, 0.72).shape == (32,)
    # an encoder without recorded preprocessing trains with the recipe's and records it
    plain = fit(_encoder(), _scans(), tr=2.0, cfg=CFG, progress=False)
    assert (plain.tr, plain.band_low, plain.band_high) == (CFG.tr, CFG.band_low, CFG.band_high)
    with pytest.raises(DataError, match="scan: this encoder records no preprocessing"):
        _encoder().preprocess(new, 0.72)
    stopped = fit(_encoder(), _scans(), tr=2.0, cfg=CFG, progress=False, callback=lambda r: r["step"] >= 1)
    assert len(stopped.history) == 2


def test_fit_starts_from_the_encoders_weights() -> None:
    """The teacher starts as the encoder and the EMA momentum reaches 1 at the last step: after a one-step fit
    the returned encoder is the starting one exactly (not a fresh initialisation); after two steps it moved."""
    start = _encoder()
    enc = fit(start, _scans(), tr=2.0, cfg=dataclasses.replace(CFG, steps=1), progress=False)
    assert all(torch.equal(a, b) for a, b in zip(enc.state_dict().values(), start.state_dict().values(), strict=True))
    fresh = SemantoksEncoder(GROUPS, dim=16, depth=1, heads=2, patch=16, patches=2)
    assert not torch.equal(enc.cls.detach(), fresh.cls.detach())
    moved = fit(start, _scans(), tr=2.0, cfg=dataclasses.replace(CFG, steps=2), progress=False)
    changed = [
        not torch.equal(a, b) for a, b in zip(moved.state_dict().values(), start.state_dict().values(), strict=True)
    ]
    assert sum(changed) > 5


def test_fit_rejects_bad_scans_in_one_line() -> None:
    enc = _encoder(tr=2.0, band_low=0.01, band_high=0.1)
    short = _scans(1, t=40)[0]  # 40 × 0.8 s = 32 s: 16 points at TR 2 s, crop 32
    with pytest.raises(DataError, match=r"scans\[1\]: scan too short: 16 time points at TR 2.0 s, need at least 32"):
        fit(enc, [_scans(1)[0], short], tr=0.8, cfg=CFG, progress=False)
    with pytest.raises(DataError, match=r"scans\[0\]: .*12"):
        fit(enc, [np.zeros((10, 150)) + np.arange(150)], tr=0.8, cfg=CFG, progress=False)
    with pytest.raises(DataError, match="expected a list of scans"):
        fit(enc, _scans(1)[0], tr=0.8, cfg=CFG, progress=False)  # type: ignore[arg-type]
    with pytest.raises(DataError, match="no scans given"):
        fit(enc, [], tr=0.8, cfg=CFG, progress=False)
    with pytest.raises(DataError, match=r"scan: scan too short"):
        enc.preprocess(short, 0.8)
