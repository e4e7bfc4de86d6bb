"""The s2-guidance CLI: a smoke run writes a valid run directory; bad flags exit 2 with one line."""

from __future__ import annotations

from pathlib import Path

from iclr26_generative_vision import cli
from iclr26_shared.testing import assert_valid_run_dir, run_cli


def test_smoke_run_writes_a_valid_run_dir(tmp_path: Path) -> None:
    res = run_cli(
        cli.main, ["s2-guidance", "--preset", "smoke", "--device", "cpu", "--out-dir", str(tmp_path), "--quiet"]
    )
    assert res.code == 0, res.err
    (run_dir,) = (tmp_path / "s2-guidance").iterdir()
    results = assert_valid_run_dir(run_dir)
    names = [c["claim"] for c in results["claims"]]
    assert len(names) == 7 and any("exact denoiser" in n for n in names) and any("FID-style" in n for n in names)
    im = results["images"]["guiders"]
    assert im["s2"]["nfe_per_sample"] == 2 * 10 + 8  # S² only in the central 80% of 10 steps
    assert im["s2"]["distinct_masks"] >= 2
    assert (run_dir / "figures" / "gmm_1d.png").is_file() and (run_dir / "figures" / "samples_s2.png").is_file()
    assert "## Gaussian mixture 1d" in (run_dir / "report.md").read_text()
    sweep = results["images"]["s2_sweep"]
    assert [r["s2_scale"] for r in sweep] == [0.0, 0.25, 1.0]
    assert sweep[0]["fd"] == im["cfg"]["fd"] and sweep[0]["nfe_per_sample"] == im["cfg"]["nfe_per_sample"]  # ω = 0: CFG
    assert sweep[1]["fd"] == im["s2"]["fd"]
    gmm_sweep = results["gmm"]["1d"]["s2_sweep"]
    assert gmm_sweep[0]["nfe_per_sample"] == 20 and gmm_sweep[1]["nfe_per_sample"] == 28
    assert -1.0 <= results["gmm"]["1d"]["mlp_alignment"]["cosine"] <= 1.0
    assert (run_dir / "figures" / "s2_sweep.png").is_file() and "ω sweep" in (run_dir / "report.md").read_text()


def test_bad_flag_exits_2_with_one_line(tmp_path: Path) -> None:
    res = run_cli(cli.main, ["s2-guidance", "--preset", "smoke", "--s2-scale", "-1", "--out-dir", str(tmp_path)])
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "s2_scale" in res.err
    res = run_cli(cli.main, ["s2-guidance", "--preset", "smoke", "--guiders", "cfg", "--out-dir", str(tmp_path)])
    assert res.code == 2 and "guiders" in res.err
