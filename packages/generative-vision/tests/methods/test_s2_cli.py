"""The s2-guidance smoke run writes a valid run directory, saves its denoisers (they load back bit for bit) and
its claims hold nothing on degenerate results; bad CLI flags exit 2 with one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from iclr26_generative_vision import cli
from iclr26_generative_vision.methods.s2_guidance.spec import SPEC
from iclr26_shared.testing import Arms, assert_models_roundtrip, assert_no_claim_holds, run_cli, smoke_run


def _probe(net: torch.nn.Module) -> torch.Tensor:
    """ε̂ of a saved denoiser on a fixed input shaped by its config (DiT: images; MLP: points)."""
    model: Any = net
    cfg = model.config
    gen = torch.Generator().manual_seed(0)
    if "sample_size" in cfg:
        x = torch.randn(2, cfg["in_channels"], cfg["sample_size"], cfg["sample_size"], generator=gen)
    else:
        x = torch.randn(2, cfg["dim"], generator=gen)
    return model(x, torch.tensor([3, 700]), torch.tensor([0, model.null_label]))


def test_smoke_run_writes_a_valid_run_dir(tmp_path: Path) -> None:
    run, results = smoke_run(SPEC, tmp_path)
    run_dir = run.path
    assert_models_roundtrip(run, {"dit": _probe, "mlp-1d": _probe})
    names = [c["claim"] for c in results["claims"]]
    assert len(names) == 6 and any("exact denoiser" in n for n in names) and any("FID-style" in n for n in names)
    im = results["images"]["guiders"]
    assert im["s2"]["nfe_per_sample"] == 2 * 10 + 8  # S² only in the central 80% of 10 steps
    assert im["s2"]["distinct_masks"] >= 2
    assert (run_dir / "figures" / "gmm_1d.png").is_file() and (run_dir / "figures" / "samples_s2.png").is_file()
    assert "## Gaussian mixture 1d" in (run_dir / "report.md").read_text()
    # the DiT runs its own guiders and ω sweep (image_guiders, image_s2_sweep); the toys keep theirs
    assert set(im) == {"cond", "cfg", "s2"} and set(results["gmm"]["1d"]["mlp"]) == {"cond", "cfg", "naive-s2", "s2"}
    assert results["image_guiders"] == ["cond", "cfg", "s2"]
    sweep = results["images"]["s2_sweep"]
    assert [r["s2_scale"] for r in sweep] == [0.0, 0.25, 0.5]
    assert sweep[2]["fd"] != im["s2"]["fd"] and sweep[2]["nfe_per_sample"] == im["s2"]["nfe_per_sample"]
    assert sweep[0]["fd"] == im["cfg"]["fd"] and sweep[0]["nfe_per_sample"] == im["cfg"]["nfe_per_sample"]  # ω = 0: CFG
    assert sweep[1]["fd"] == im["s2"]["fd"]
    gmm_sweep = results["gmm"]["1d"]["s2_sweep"]
    assert [r["s2_scale"] for r in gmm_sweep] == [0.0, 0.25, 1.0]
    assert gmm_sweep[0]["nfe_per_sample"] == 20 and gmm_sweep[1]["nfe_per_sample"] == 28
    assert -1.0 <= results["gmm"]["1d"]["mlp_alignment"]["cosine"] <= 1.0
    assert (run_dir / "figures" / "s2_sweep.png").is_file() and "ω sweep" in (run_dir / "report.md").read_text()

    arms = [
        Arms(
            ours=["gmm/1d/mlp/s2/w2"],
            others=["gmm/1d/mlp/cfg/w2", "gmm/1d/mlp/naive-s2/w2"],
            trivial=results["gmm"]["1d"]["w2_unconditional"],
            worse=2 * results["gmm"]["1d"]["w2_unconditional"],
        ),
        Arms(
            ours=["images/guiders/s2/fd"],
            others=["images/guiders/cfg/fd"],
            trivial=results["images"]["fd_noise"],
            worse=2 * results["images"]["fd_noise"],
        ),
    ]
    assert_no_claim_holds(SPEC, results, arms)


def test_bad_flag_exits_2_with_one_line(tmp_path: Path) -> None:
    res = run_cli(cli.main, ["s2-guidance", "--preset", "smoke", "--s2-scale", "-1", "--out-dir", str(tmp_path)])
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1 and "s2_scale" in res.err
    res = run_cli(cli.main, ["s2-guidance", "--preset", "smoke", "--guiders", "cfg", "--out-dir", str(tmp_path)])
    assert res.code == 2 and "guiders" in res.err
