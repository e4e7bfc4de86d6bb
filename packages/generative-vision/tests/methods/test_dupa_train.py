"""The dupa trainer: a smoke CLI run writes a valid run directory; sharded batches keep the paths of an
image together and average to the global gradient; training resumes bit for bit; the alignment loss's
gradient reaches the blocks up to the aligned one (and not the later blocks or the decoder)."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path
from typing import Any

import torch

from iclr26_generative_vision.flow.dupa import draw_paths, dupa_loss
from iclr26_generative_vision.methods.dupa.config import PRESETS, DUPAConfig
from iclr26_generative_vision.methods.dupa.model import build_ddt, build_objective
from iclr26_generative_vision.methods.dupa.spec import SPEC
from iclr26_generative_vision.methods.dupa.train import shard_paths, train_variants
from iclr26_generative_vision.methods.s2_guidance.images import load_images
from iclr26_shared.distributed import DistContext
from iclr26_shared.runs import RunDir
from iclr26_shared.testing import Arms, assert_models_roundtrip, assert_no_claim_holds, smoke_run

TINY = dataclasses.replace(
    PRESETS["smoke"], max_train=60, batch_size=8, train_steps=6, checkpoint_every=3, eval_every=6
)


def _velocity(net: torch.nn.Module) -> torch.Tensor:
    """A saved DDT's velocity on a fixed input shaped by its config."""
    model: Any = net
    c = model.config
    x = torch.randn(2, c["in_channels"], c["sample_size"], c["sample_size"], generator=torch.Generator().manual_seed(0))
    return model(x, torch.tensor([0.2, 0.8]), torch.tensor([1, c["num_classes"]])).velocity


def test_smoke_run_writes_a_valid_run_dir(tmp_path: Path) -> None:
    run, results = smoke_run(SPEC, tmp_path)
    run_dir = run.path
    assert_models_roundtrip(run, dict.fromkeys(("ddt", "dual-path", "dupa"), _velocity))
    noise = results["fd_noise"]
    arms = [Arms(ours=["final/dupa/fd"], others=["final/ddt/fd", "final/dual-path/fd"], trivial=noise, worse=2 * noise)]
    collapsed = copy.deepcopy(results)
    for key in ("gap_projected", "gap_raw"):
        collapsed["alignment"]["dupa"][key] = 0.0
    assert_no_claim_holds(SPEC, results, arms, extra_cases={"collapsed DUPA (centred gaps 0)": collapsed})
    assert len(results["claims"]) == 7
    assert set(results["final"]) == {"ddt", "dual-path", "dupa"}
    assert [r["step"] for r in results["curves"]["dupa"]] == [10, 20]
    sharing = {r["refresh_rate"]: r for r in results["sharing"]}
    assert sharing[2]["block_evals_per_sample"] < sharing[1]["block_evals_per_sample"]
    assert sharing[1]["fd"] == results["final"]["dupa"]["fd"] and sharing[1]["time_ratio"] == 1.0
    assert sharing[2]["fd"] != sharing[1]["fd"]
    assert "same_projected" in results["alignment"]["dupa"] and "same_projected" not in results["alignment"]["ddt"]
    assert (run_dir / "figures" / "fd_curve.png").is_file() and (run_dir / "figures" / "samples_dupa.png").is_file()
    assert "Encoder sharing" in (run_dir / "report.md").read_text()


def _objective(variant: str = "dupa", cfg: DUPAConfig = TINY):  # noqa: ANN202
    data = load_images(cfg, seed=0)
    torch.manual_seed(0)
    model = build_ddt(cfg, data)
    for p in model.parameters():  # leave the zero-initialised start so every block gets a gradient
        torch.nn.init.normal_(p, std=0.1)
    torch.manual_seed(1)
    return build_objective(cfg, variant, model), data


def test_alignment_gradient_reaches_the_encoder_only() -> None:
    obj, data = _objective()
    paths = draw_paths(data.x_train[:4], data.y_train[:4], 2, torch.Generator().manual_seed(0))
    _, _, align = obj(paths)
    align.backward()
    k = TINY.aligned_layer  # DDT's REPA depth ⌈8·n_enc/22⌉: block 1 of the 2 encoder blocks here
    assert 1 <= k <= TINY.encoder_depth
    enc, rest = obj.model.blocks[:k], obj.model.blocks[k:]
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in enc.parameters() if p.requires_grad)
    assert obj.model.s_embedder.weight.grad is not None and obj.model.s_embedder.weight.grad.abs().sum() > 0
    assert all(p.grad is None or p.grad.abs().sum() == 0 for p in rest.parameters())  # later blocks, decoder
    assert obj.projector is not None and all(p.grad is not None for p in obj.projector.parameters())


def test_sharded_paths_average_to_the_global_gradient() -> None:
    """Two ranks' shares of a batch (each image with both paths) give DDP's average = the global gradient."""
    obj, data = _objective()
    obj = obj.double()
    paths = draw_paths(data.x_train[:8].double(), data.y_train[:8], 2, torch.Generator().manual_seed(0))
    params = [p for p in obj.parameters() if p.requires_grad]
    ref = torch.autograd.grad(obj(paths)[0], params, allow_unused=True)
    shares = [shard_paths(paths, 2, DistContext(rank=r, world_size=2)) for r in range(2)]
    assert torch.equal(shares[0].t.reshape(2, 4), paths.t.reshape(2, 8)[:, 0::2])  # both paths of image 0, 2, ...
    grads = [torch.autograd.grad(obj(s)[0], params, allow_unused=True) for s in shares]
    for g_ref, g0, g1 in zip(ref, *grads, strict=True):
        if g_ref is not None:
            torch.testing.assert_close((g0 + g1) / 2, g_ref)
    assert shard_paths(paths, 2, DistContext()) is paths


def test_training_resumes_bit_for_bit(tmp_path: Path) -> None:
    data = load_images(TINY, seed=0)
    straight, _, _ = train_variants(TINY, data, RunDir.create(tmp_path / "a", "dupa", TINY, quiet=True))
    run = RunDir.create(tmp_path / "b", "dupa", TINY, quiet=True)
    train_variants(TINY, data, run)
    assert [s for s, _ in run.checkpoints()] == [3, 6]
    run.checkpoints()[-1][1].unlink()  # killed between step 3 and 6
    torch.manual_seed(123)
    resumed, _, _ = train_variants(TINY, data, run)
    for v in TINY.variants:
        for (name, a), b in zip(straight[v].state_dict().items(), resumed[v].state_dict().values(), strict=True):
            assert torch.equal(a, b), (v, name)


def test_frozen_projector_gets_no_gradient_and_does_not_train(tmp_path: Path) -> None:
    """projector_mode=frozen: the projector's weights are the trained mode's init, get no gradient, and stay
    fixed through training while the alignment gradient still reaches the encoder."""
    cfg = dataclasses.replace(TINY, projector_mode="frozen")
    obj, data = _objective()
    frozen, data_ = _objective(cfg=cfg)
    assert frozen.projector is not None and obj.projector is not None
    for a, b in zip(frozen.projector.parameters(), obj.projector.parameters(), strict=True):
        assert not a.requires_grad and torch.equal(a, b)  # same init as the trained projector
    paths = draw_paths(data.x_train[:4], data.y_train[:4], 2, torch.Generator().manual_seed(0))
    frozen(paths)[2].backward()
    assert all(p.grad is None for p in frozen.projector.parameters())
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in frozen.model.blocks[0].parameters())
    run = RunDir.create(tmp_path, "dupa", cfg, quiet=True)
    _, _, objectives = train_variants(cfg, data_, run)
    trained = objectives["dupa"].projector
    assert trained is not None
    base = build_ddt(cfg, data_)
    torch.manual_seed(1)  # the run's seed 0 + 1: the projector's init in train_variants
    init = build_objective(cfg, "dupa", base).projector
    assert init is not None
    for a, b in zip(trained.parameters(), init.parameters(), strict=True):
        torch.testing.assert_close(a.cpu(), b)


def test_predictor_runs_on_the_online_side_only() -> None:
    """predictor=true: the loss is ½[cos(q(p_i), sg p_j) + cos(q(p_j), sg p_i)]: its gradient equals that of
    the hand-written form with detached targets, the predictor gets a gradient, and the projector's init is
    the same as without a predictor."""
    cfg = dataclasses.replace(TINY, predictor=True)
    plain, data = _objective()
    obj, _ = _objective(cfg=cfg)
    assert obj.predictor is not None and obj.projector is not None and plain.projector is not None
    for a, b in zip(obj.projector.parameters(), plain.projector.parameters(), strict=True):
        assert torch.equal(a, b)
    p = torch.randn(2, 3, 4, cfg.projector_dim, requires_grad=True)
    (g,) = torch.autograd.grad(dupa_loss(p, predictor=obj.predictor), p)
    q = torch.nn.functional.normalize(obj.predictor(p), dim=-1)
    u = torch.nn.functional.normalize(p, dim=-1).detach()
    manual = -0.5 * ((q[0] * u[1]).sum(-1) + (q[1] * u[0]).sum(-1)).mean()
    (g_manual,) = torch.autograd.grad(manual, p)
    torch.testing.assert_close(g, g_manual)
    with torch.no_grad():  # not q on both sides
        both = torch.nn.functional.cosine_similarity(q[0], q[1], dim=-1).mean()
        assert abs(dupa_loss(p, predictor=obj.predictor).item() + both.item()) > 1e-4
    paths = draw_paths(data.x_train[:4], data.y_train[:4], 2, torch.Generator().manual_seed(0))
    obj(paths)[2].backward()
    assert all(w.grad is not None and w.grad.abs().sum() > 0 for w in obj.predictor.parameters())
