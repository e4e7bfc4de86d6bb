"""Saved models: save_pretrained under <run>/models/<name>/, load_model offline, `iclr26 models`, and the
test helpers that every method's tests use (round trip bit for bit, degenerate claims)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import torch
from huggingface_hub import PyTorchModelHubMixin

from iclr26_shared.errors import CheckpointError, UsageError
from iclr26_shared.models import list_models, load_model, model_dir, save_model
from iclr26_shared.spec import Claim
from iclr26_shared.testing import Arms, assert_no_claim_holds, degenerate_cases, run_cli
from iclr26_shared.umbrella import main as umbrella_main


class TinyNet(torch.nn.Module, PyTorchModelHubMixin):
    """A plain torch module with the hub mixin: its __init__ arguments become config.json."""

    def __init__(self, width: int = 3, scale: float = 1.0) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(width, 2)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) * self.scale


def test_save_and_load_round_trip_bit_for_bit(tmp_path: Path) -> None:
    torch.manual_seed(0)
    net = TinyNet(width=5, scale=2.5)
    folder = save_model(tmp_path, "net", net, extra={"input": "[B, 5]"})
    assert folder == model_dir(tmp_path, "net")
    files = {p.name for p in folder.iterdir()}
    assert {"model.safetensors", "config.json", "iclr26_model.json"} <= files
    assert json.loads((folder / "config.json").read_text()) == {"width": 5, "scale": 2.5}
    loaded = load_model(tmp_path, trust_class=TinyNet)  # a test module's class: vouched for
    assert isinstance(loaded, TinyNet) and loaded.scale == 2.5 and not loaded.training
    x = torch.randn(4, 5)
    assert torch.equal(loaded(x), net(x))
    meta = list_models(tmp_path)["net"]
    assert meta["class"].endswith(":TinyNet") and meta["extra"] == {"input": "[B, 5]"} and meta["bytes"] > 0


def test_loaded_tensors_are_aligned_as_fresh_allocations(tmp_path: Path) -> None:
    """safetensors returns tensors at their (unaligned) file offsets; CPU kernels then sum in another
    order. load_model copies them, so a loaded model computes as the saved one, bit for bit."""
    from safetensors.torch import load_file

    torch.manual_seed(0)
    net = TinyNet(width=7)  # 14 + 2 floats: the second tensor starts 56 bytes into the data
    folder = save_model(tmp_path, "net", net)
    raw = load_file(folder / "model.safetensors")
    assert any(t.data_ptr() % 64 for t in raw.values())  # the condition the copy exists for
    loaded = load_model(tmp_path, trust_class=TinyNet)  # a test module's class: vouched for
    assert all(t.data_ptr() % 64 == 0 for t in (*loaded.parameters(), *loaded.buffers()))
    assert all(torch.equal(a, b) for a, b in zip(net.state_dict().values(), loaded.state_dict().values(), strict=True))


def test_load_model_names_what_there_is(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such run directory"):
        load_model(tmp_path / "absent")
    with pytest.raises(UsageError, match="saved no model"):
        load_model(tmp_path)
    save_model(tmp_path, "a", TinyNet())
    save_model(tmp_path, "b", TinyNet(width=2))
    with pytest.raises(UsageError, match=r"saved 2 models \(a, b\): name one"):
        load_model(tmp_path)
    with pytest.raises(UsageError, match=r"no model 'c' \(saved: a, b\)"):
        load_model(tmp_path, "c")
    assert load_model(tmp_path, "b", trust_class=TinyNet).lin.in_features == 2


def test_save_replaces_atomically_and_rejects_what_cannot_load(tmp_path: Path) -> None:
    save_model(tmp_path, "net", TinyNet(width=2))
    save_model(tmp_path, "net", TinyNet(width=4))
    assert load_model(tmp_path, "net", trust_class=TinyNet).lin.in_features == 4
    assert [p.name for p in (tmp_path / "models").iterdir()] == ["net"]  # no temporary folder left
    with pytest.raises(TypeError, match="PyTorchModelHubMixin"):
        save_model(tmp_path, "plain", torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="folder name"):
        save_model(tmp_path, "../x", TinyNet())
    assert not (tmp_path / "models" / "plain").exists()


def test_iclr26_models_lists_a_run(tmp_path: Path) -> None:
    res = run_cli(umbrella_main, ["models", str(tmp_path)])  # an empty folder is not a run (issue 52)
    assert res.code == 2 and "not a run directory" in res.err and len(res.err.strip().splitlines()) == 1
    (tmp_path / "config.json").write_text("{}")  # a run whose method saved no model
    res = run_cli(umbrella_main, ["models", str(tmp_path)])
    assert res.code == 0 and "saved no model" in res.out
    save_model(tmp_path, "net", TinyNet())
    res = run_cli(umbrella_main, ["models", str(tmp_path)])
    assert res.code == 0 and res.out.splitlines()[0].startswith("net ") and "TinyNet" in res.out
    res = run_cli(umbrella_main, ["models", str(tmp_path / "nope")])
    assert res.code == 2 and "no such run directory" in res.err and len(res.err.strip().splitlines()) == 1


def test_toy_ddp_run_saves_its_model_and_it_round_trips(tmp_path: Path) -> None:
    from iclr26_shared.testing import TOY_DDP_SPEC, assert_models_roundtrip, smoke_run

    run, _ = smoke_run(TOY_DDP_SPEC, tmp_path)
    assert_models_roundtrip(run, {"linear": torch.linspace(-1, 1, 24).reshape(3, 8)})
    with pytest.raises(AssertionError, match="no probe"):
        assert_models_roundtrip(run, {})
    run.saved_models["linear"].weight.data.add_(1e-6)  # an in-memory model that differs from the saved one
    with pytest.raises(AssertionError, match="outputs differ"):
        assert_models_roundtrip(run, {"linear": torch.ones(2, 8)})


# --------------------------------------------------------------------------------------------------
# degenerate results
# --------------------------------------------------------------------------------------------------

_RESULTS = {"test": {"ours": 0.9, "base": 0.7, "curve": [0.5, 0.8, 0.9]}, "chance": 0.5}


def _honest(r: Mapping[str, Any]) -> list[Claim]:
    t = r["test"]
    return [Claim("ours beats base", "acc", t["ours"], baseline=t["base"], margin=0.02, chance=r["chance"])]


def _by_construction(r: Mapping[str, Any]) -> list[Claim]:  # a non-inferiority claim with no chance guard
    return [Claim("ours keeps up", "acc", r["test"]["ours"], baseline=r["test"]["base"], margin=-0.05)]


def test_degenerate_cases_replace_only_the_named_arms() -> None:
    arms = [Arms(ours=["test/ours", "test/curve"], others=["test/base"], trivial=0.5, worse=0.4)]
    cases = degenerate_cases(_RESULTS, arms)
    assert cases["every arm equal"]["test"] == {"ours": 0.9, "base": 0.9, "curve": [0.5, 0.8, 0.9]}
    assert cases["every arm at the trivial answer"]["test"] == {"ours": 0.5, "base": 0.5, "curve": [0.5] * 3}
    assert cases["ours worse than the trivial answer"]["test"] == {"ours": 0.4, "base": 0.7, "curve": [0.4] * 3}
    assert _RESULTS["test"]["ours"] == 0.9  # the input is not modified
    with pytest.raises(KeyError, match="test/absent"):
        degenerate_cases(_RESULTS, [Arms(ours=["test/absent"], others=[], trivial=0.5)])


def test_assert_no_claim_holds_passes_an_honest_claim_and_catches_one_that_holds_by_construction() -> None:
    arms = [Arms(ours=["test/ours"], others=["test/base"], trivial=0.5, worse=0.4)]
    assert _honest(_RESULTS)[0].holds
    out = assert_no_claim_holds(_honest, _RESULTS, arms)
    assert [c.verdict for c in out["every arm equal"]] == ["fails"]
    assert [c.verdict for c in out["every arm at the trivial answer"]] == ["inconclusive"]
    assert [c.verdict for c in out["ours worse than the trivial answer"]] == ["fails"]
    with pytest.raises(AssertionError, match="still hold"):
        assert_no_claim_holds(_by_construction, _RESULTS, arms)
    with pytest.raises(AssertionError, match="changed no claim"):
        assert_no_claim_holds(_honest, _RESULTS, [Arms(ours=["chance"], others=[], trivial=0.5)])


def test_non_inferiority_claims_may_hold_at_a_tie_but_not_at_chance() -> None:
    def keeps_up(r: Mapping[str, Any]) -> list[Claim]:
        t = r["test"]
        return [
            Claim("ours keeps up (non-inferiority)", "acc", t["ours"], baseline=t["base"], margin=-0.05, chance=0.5)
        ]

    arms = [Arms(ours=["test/ours"], others=["test/base"], trivial=0.5, worse=0.4)]
    out = assert_no_claim_holds(keeps_up, _RESULTS, arms)
    assert [c.verdict for c in out["every arm equal"]] == ["holds"]  # exempt: a tie is what it claims
    assert degenerate_cases(_RESULTS, []) == {}
    with pytest.raises(AssertionError, match="no degenerate case"):
        assert_no_claim_holds(keeps_up, _RESULTS, [])


def test_degenerate_cases_accept_in_memory_results_with_tuples() -> None:
    results = {"test": {"ours": 0.9, "base": 0.7, "curve": (0.5, 0.8)}, "chance": 0.5}
    cases = degenerate_cases(results, [Arms(ours=["test/curve/1", "test/ours"], others=["test/base"], trivial=0.5)])
    assert cases["every arm at the trivial answer"]["test"]["curve"] == [0.5, 0.5]
    assert results["test"]["curve"] == (0.5, 0.8)


def _drop_key(file: Path, key: str) -> None:
    from safetensors.torch import load_file, save_file

    tensors = load_file(file)
    del tensors[key]
    save_file(tensors, file, metadata={"format": "pt"})


def test_a_partial_checkpoint_is_refused_not_loaded_with_random_weights(tmp_path: Path) -> None:
    """PyTorchModelHubMixin's own default is strict=False: a file missing `lin.bias` would load, the bias
    left at its random init. load_model refuses it and names the key; strict=False still opts out."""
    torch.manual_seed(0)
    folder = save_model(tmp_path, "net", TinyNet(width=3))
    _drop_key(folder / "model.safetensors", "lin.bias")
    lenient = TinyNet.from_pretrained(folder)  # the ecosystem's default: silently partial
    assert isinstance(lenient, TinyNet)
    with pytest.raises(CheckpointError, match=r"do not match TinyNet .*lin\.bias.*refusing a partial load"):
        load_model(tmp_path, trust_class=TinyNet)
    assert isinstance(load_model(tmp_path, trust_class=TinyNet, strict=False), TinyNet)


def test_transformers_and_diffusers_partial_checkpoints_are_refused(tmp_path: Path) -> None:
    """transformers and diffusers only warn about missing keys (and initialise them); load_model reads
    their loading info and refuses."""
    from diffusers.models.unets.unet_1d import UNet1DModel
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    lm = GPT2LMHeadModel(GPT2Config(n_layer=1, n_head=2, n_embd=8, vocab_size=11, n_positions=8))
    folder = save_model(tmp_path / "lm", "lm", lm)
    ids = torch.tensor([[1, 2, 3]])
    assert torch.equal(load_model(tmp_path / "lm")(ids).logits, lm.eval()(ids).logits)
    _drop_key(folder / "model.safetensors", "transformer.h.0.mlp.c_fc.bias")
    with pytest.raises(CheckpointError, match=r"missing keys: transformer\.h\.0\.mlp\.c_fc\.bias"):
        load_model(tmp_path / "lm")

    unet = UNet1DModel(
        block_out_channels=(8,),
        down_block_types=("DownBlock1DNoSkip",),
        up_block_types=("UpBlock1DNoSkip",),
        mid_block_type="UNetMidBlock1D",
        in_channels=2,
        out_channels=2,
        extra_in_channels=0,
        layers_per_block=1,
        time_embedding_type="positional",
        use_timestep_embedding=False,
        flip_sin_to_cos=False,
    )
    folder = save_model(tmp_path / "unet", "unet", unet)
    first = next(iter(unet.state_dict()))
    assert isinstance(load_model(tmp_path / "unet"), UNet1DModel)
    _drop_key(folder / "diffusion_pytorch_model.safetensors", first)
    with pytest.raises(CheckpointError, match="refusing a partial load"):
        load_model(tmp_path / "unet")
