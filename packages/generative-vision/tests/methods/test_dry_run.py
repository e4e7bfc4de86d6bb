"""``--dry-run`` of the four methods: the preset's networks at their real sizes, one training step and one
evaluation at batch 2; the parameter count equals the networks the run builds (an independent count)."""

from __future__ import annotations

import pytest
import torch

from iclr26_generative_vision.methods.causal_delta.spec import SPEC as CDE
from iclr26_generative_vision.methods.dupa.spec import SPEC as DUPA
from iclr26_generative_vision.methods.elvis.spec import SPEC as ELVIS
from iclr26_generative_vision.methods.s2_guidance.spec import SPEC as S2
from iclr26_shared.dryrun import dry_run

SPECS = {"s2-guidance": S2, "dupa": DUPA, "elvis": ELVIS, "causal-delta": CDE}


def _count(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def _expected_parameters(name: str, preset: str) -> int:
    """The trainable parameters of the networks the method's run builds, counted from its own builders."""
    spec = SPECS[name]
    cfg = spec.preset(preset)
    if name == "dupa":
        from iclr26_generative_vision.methods.dupa.model import build_ddt, build_objective
        from iclr26_generative_vision.methods.s2_guidance.images import load_images

        return _count(build_objective(cfg, "dupa", build_ddt(cfg, load_images(cfg, 0))))
    if name == "causal-delta":
        from iclr26_generative_vision.methods.causal_delta.model import build_model

        return sum(_count(build_model(cfg, v)) for v in cfg.variants)
    if name == "elvis":
        from iclr26_generative_vision.methods.elvis.model import build_reranker

        return sum(_count(build_reranker(cfg, v, 128)) for v in cfg.variants if v == "rrt" or v.startswith("elvis"))
    from iclr26_generative_vision.data.gmm import toy_mixture
    from iclr26_generative_vision.methods.s2_guidance.images import load_images
    from iclr26_generative_vision.methods.s2_guidance.model import build_dit, build_mlp

    total = _count(build_dit(cfg, load_images(cfg, 0))) if cfg.run_images else 0
    if cfg.run_gmm:
        gmm = toy_mixture(cfg.gmm_dims[0], cfg.gmm_spread, cfg.gmm_std)
        total += _count(build_mlp(cfg, gmm.dim, gmm.num_components))
    return total


@pytest.mark.parametrize("name", list(SPECS))
def test_dry_run_of_the_smoke_preset(name: str) -> None:
    out = dry_run(SPECS[name], SPECS[name].preset("smoke"), "cpu")
    assert out["parameters"] == _expected_parameters(name, "smoke")
    assert out["peak_rss_bytes"] > 0 and out["seconds"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SPECS))
def test_dry_run_of_the_full_preset(name: str) -> None:
    out = dry_run(SPECS[name], SPECS[name].preset("full"), "cpu")
    assert out["parameters"] == _expected_parameters(name, "full")
