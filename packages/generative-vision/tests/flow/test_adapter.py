"""DUPA and the Euler sampler on a user's flow transformer (diffusers' DiTTransformer2DModel, not ours) through
the FlowModel protocol and HookedFlowModel (issue 54)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
import torch
from diffusers.models.transformers.dit_transformer_2d import DiTTransformer2DModel

from iclr26_generative_vision.flow.adapter import FlowModel, HookedFlowModel
from iclr26_generative_vision.flow.dupa import ConditionProjector, draw_paths, dupa_loss
from iclr26_generative_vision.flow.sampler import euler_sample, flow_scheduler
from iclr26_generative_vision.methods.dupa.model import DUPAObjective
from iclr26_shared.errors import ConfigError, DataError


def tiny_dit(seed: int = 0, **kw: Any) -> DiTTransformer2DModel:
    torch.manual_seed(seed)
    cfg: dict[str, Any] = dict(
        num_attention_heads=2, attention_head_dim=8, in_channels=1, num_layers=3, sample_size=8, patch_size=2,
        num_embeds_ada_norm=10, norm_num_groups=1,
    )  # fmt: skip
    cfg.update(kw)
    return DiTTransformer2DModel(**cfg)


def _inputs(b: int = 4) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(1)
    return (
        torch.randn(b, 1, 8, 8, generator=gen),
        torch.rand(b, generator=gen),
        torch.randint(0, 10, (b,), generator=gen),
    )


def test_hooked_model_is_a_flow_model_and_returns_the_block_output_and_the_velocity() -> None:
    dit = tiny_dit().eval()
    flow = HookedFlowModel(dit, "transformer_blocks.1", null_label=10)
    assert isinstance(flow, FlowModel) and flow.null_label == 10
    x, t, y = _inputs()
    seen: list[Any] = []
    handle = dit.transformer_blocks[1].register_forward_hook(lambda m, a, o: seen.append(o))
    with torch.no_grad():
        ref = dit(hidden_states=x, timestep=t * 1000, class_labels=y).sample
        out = flow.flow_forward(x, t, y, features=True)
    handle.remove()
    assert out.features is not None and out.features.shape == (4, 16, 16)
    assert torch.equal(out.velocity, ref) and torch.equal(out.features, seen[1])
    assert flow.flow_forward(x, t, y).features is None
    # learned σ (out_channels = 2C): the velocity is the first C channels
    sigma = HookedFlowModel(tiny_dit(out_channels=2).eval(), "transformer_blocks.0", null_label=10)
    with torch.no_grad():
        full = sigma.model(hidden_states=x, timestep=t * 1000, class_labels=y).sample
        assert torch.equal(sigma(x, t, y), full[:, :1])


def test_dupa_objective_on_the_user_model_equals_the_loss_by_hand() -> None:
    flow = HookedFlowModel(tiny_dit().eval(), "transformer_blocks.0", null_label=10)
    projector = ConditionProjector(16, 32, 8)
    obj = DUPAObjective(flow, num_paths=2, weight=0.5, projector=projector)
    x, _, y = _inputs()
    paths = draw_paths(x, y, 2, torch.Generator().manual_seed(0))
    loss, vel, align = obj(paths)
    with torch.no_grad():
        out = flow.flow_forward(paths.x_t, paths.t, paths.labels, features=True)
        assert out.features is not None
        p = projector(out.features).reshape(2, 4, 16, 8)
        cos = torch.nn.functional.cosine_similarity(p[0], p[1], dim=-1).mean()
        mse = ((out.velocity - paths.target) ** 2).mean()
    torch.testing.assert_close(align, -cos)
    torch.testing.assert_close(align, dupa_loss(p))
    torch.testing.assert_close(vel, mse)
    torch.testing.assert_close(loss, mse - 0.5 * cos)
    loss.backward()  # the gradient reaches the hooked block and the projector
    dit = cast(DiTTransformer2DModel, flow.model)
    assert cast(Any, dit.transformer_blocks[0]).attn1.to_q.weight.grad is not None
    assert projector.net[0].weight.grad is not None


def test_train_save_and_reload_the_user_model_bit_exactly(tmp_path: Path) -> None:
    flow = HookedFlowModel(tiny_dit(), "transformer_blocks.1", null_label=10)
    obj = DUPAObjective(flow, num_paths=2, weight=0.5, projector=ConditionProjector(16, 32, 8))
    opt = torch.optim.AdamW(obj.parameters(), lr=1e-3)
    x, _, y = _inputs(8)
    gen = torch.Generator().manual_seed(0)
    before = {k: v.clone() for k, v in flow.model.state_dict().items()}
    for _ in range(3):
        loss, _, _ = obj(draw_paths(x, y, 2, gen))
        opt.zero_grad()
        loss.backward()
        opt.step()
    dit = cast(DiTTransformer2DModel, flow.model)
    assert any(not torch.equal(before[k], v) for k, v in dit.state_dict().items())
    dit.save_pretrained(tmp_path / "dit")
    back = HookedFlowModel(
        DiTTransformer2DModel.from_pretrained(tmp_path / "dit"), "transformer_blocks.1", null_label=10
    )
    a, b = flow.eval(), back.eval()
    sa, sb = dit.state_dict(), cast(DiTTransformer2DModel, back.model).state_dict()
    assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)
    xs, t, ys = _inputs()
    with torch.no_grad():
        oa, ob = a.flow_forward(xs, t, ys, features=True), b.flow_forward(xs, t, ys, features=True)
    assert torch.equal(oa.velocity, ob.velocity) and torch.equal(
        cast(torch.Tensor, oa.features), cast(torch.Tensor, ob.features)
    )
    noise = torch.randn(4, 1, 8, 8, generator=torch.Generator().manual_seed(3))
    sa_, _ = euler_sample(a, noise, ys, num_steps=3, guidance_scale=2.0)
    sb_, _ = euler_sample(b, noise, ys, num_steps=3, guidance_scale=2.0)
    assert torch.equal(sa_, sb_)


def test_euler_sample_on_the_user_model_equals_a_hand_written_loop_with_cfg() -> None:
    flow = HookedFlowModel(tiny_dit().eval(), "transformer_blocks.2", null_label=10)
    noise, _, y = _inputs()
    xs, info = euler_sample(flow, noise, y, num_steps=4, guidance_scale=3.0, cfg_interval=(0.0, 0.7))
    assert info["block_evals"] is None and info["encoder_passes"] == 4 + 2  # CFG at t = 0.5, 0.25 only
    x = noise.clone()
    ts = [1.0, 0.75, 0.5, 0.25, 0.0]
    null = torch.full_like(y, 10)
    with torch.no_grad():
        for i in range(4):
            t = torch.full((4,), ts[i])
            v = flow(x, t, y)
            if 0.0 < ts[i] <= 0.7:
                v_u = flow(x, t, null)
                v = v_u + 3.0 * (v - v_u)
            x = x + (ts[i + 1] - ts[i]) * v
    torch.testing.assert_close(xs, x, rtol=1e-5, atol=1e-6)
    assert cast(torch.Tensor, flow_scheduler(4).sigmas).tolist() == ts


def test_bad_input_is_one_line_naming_the_argument() -> None:
    dit = tiny_dit().eval()
    with pytest.raises(ConfigError, match=r"'block' = 'transformer_block\.1'.*did you mean"):
        HookedFlowModel(dit, "transformer_block.1", null_label=10)
    with pytest.raises(ConfigError, match="'model'"):
        DUPAObjective(cast(Any, torch.nn.Linear(2, 2)), num_paths=2, weight=0.5, projector=ConditionProjector(16, 8, 4))
    flow = HookedFlowModel(dit, "transformer_blocks.0", null_label=10)
    x, t, y = _inputs()
    wide = DUPAObjective(flow, num_paths=2, weight=0.5, projector=ConditionProjector(32, 8, 4))  # hidden 16, not 32
    paths = draw_paths(x, y, 2, torch.Generator().manual_seed(0))
    with pytest.raises(DataError, match=r"projector takes width 32 .*\(8, 16, 16\)"):
        wide(paths)
    with pytest.raises(DataError, match="class_labels must be an integer tensor"):
        flow.flow_forward(x, t, y.float())
    with pytest.raises(DataError, match=r"timestep must be a float tensor \[B\] = \[4\]"):
        flow.flow_forward(x, t[:2], y)
    with pytest.raises(DataError, match="sample must be a float tensor"):
        flow.flow_forward(x[0], t, y)
    if torch.cuda.is_available():
        with pytest.raises(DataError, match="class_labels is on cuda"):
            flow.flow_forward(x, t, y.cuda())
    with pytest.raises(DataError, match="refresh_rate = 2 needs the DDT"):
        euler_sample(flow, x, y, num_steps=2, refresh_rate=2)
    with pytest.raises(DataError, match="class_labels must be an integer tensor"):
        euler_sample(flow, x, y.float(), num_steps=2)
    with pytest.raises(DataError, match="not a multiple of num_paths"):
        DUPAObjective(flow, num_paths=3, weight=0.5, projector=ConditionProjector(16, 8, 4))(paths)
    for line in ("transformer_block.1",):
        try:
            HookedFlowModel(dit, line, null_label=10)
        except ConfigError as err:
            assert "\n" not in str(err)


def test_bad_input_to_the_ddt_path_is_one_line_naming_the_argument() -> None:
    from iclr26_generative_vision.nn.ddt import DDT

    torch.manual_seed(0)
    ddt = DDT(8, 1, 10, patch_size=2, hidden=32, encoder_depth=1, decoder_depth=1, heads=2)
    x, t, y = _inputs()
    cases: list[tuple[Any, str]] = [
        (
            lambda: draw_paths(x, y[:3], 2, torch.Generator()),
            r"draw_paths: labels must be an integer tensor \[B\] = \[4\]",
        ),
        (lambda: draw_paths(x, y.float(), 2, torch.Generator()), "draw_paths: labels must be an integer"),
        (lambda: draw_paths(x.long(), y, 2, torch.Generator()), "draw_paths: x must be a float tensor"),
        (lambda: dupa_loss(torch.randn(2, 5)), r"dupa_loss: projected must be \[K, B, N, D\]"),
        (lambda: ddt(x, t, y.float()), "DDT: class_labels must be an integer"),
        (lambda: ddt(x.double(), t, y), "DDT: sample is torch.float64 on cpu, the weights torch.float32"),
        (lambda: ddt(x, t, y, condition=torch.zeros(4, 16, 8)), r"DDT: condition must be \[B, N, H\] = \[4, 16, 32\]"),
        (lambda: euler_sample(ddt, x, y[:2], num_steps=2), "euler_sample: class_labels must be an integer tensor"),
    ]
    obj = DUPAObjective(ddt, num_paths=2, weight=0.5, align_layer=1, projector=ConditionProjector(32, 8, 4))
    paths = draw_paths(x, y, 2, torch.Generator().manual_seed(0))
    cases.append((lambda: obj(paths._replace(x_t=paths.x_t.double())), "DUPAObjective: paths.x_t is torch.float64"))
    cases.append(
        (
            lambda: DUPAObjective(ddt, num_paths=2, weight=0.5, align_layer=3, projector=ConditionProjector(32, 8, 4)),
            "'align_layer' = 3",
        )
    )
    for call, match in cases:
        with pytest.raises((DataError, ConfigError), match=match) as err:
            call()
        assert "\n" not in str(err.value)


def test_an_sd3_style_transformer_through_call_and_output_index() -> None:
    """SD3's signature (text context + pooled projection, no class labels) through ``call=``; its joint block
    returns ``(context, image tokens)``, so ``output_index=1`` picks the image tokens."""
    from diffusers.models.transformers.transformer_sd3 import SD3Transformer2DModel

    torch.manual_seed(0)
    sd3 = SD3Transformer2DModel(
        sample_size=8, patch_size=2, in_channels=1, num_layers=2, attention_head_dim=8, num_attention_heads=2,
        joint_attention_dim=16, caption_projection_dim=16, pooled_projection_dim=16, out_channels=1,
        pos_embed_max_size=8,
    )  # fmt: skip
    table = torch.nn.Embedding(11, 16)  # the user's class → context, label 10 = ∅

    def call(m: torch.nn.Module, x: torch.Tensor, t: torch.Tensor, y: torch.Tensor) -> Any:
        return m(hidden_states=x, encoder_hidden_states=table(y)[:, None], pooled_projections=table(y), timestep=t)

    flow = HookedFlowModel(sd3, "transformer_blocks.0", null_label=10, call=call, output_index=1)
    x, t, y = _inputs()
    seen: list[Any] = []
    handle = sd3.transformer_blocks[0].register_forward_hook(lambda m, a, o: seen.append(o))
    out = flow.flow_forward(x, t, y, features=True)
    handle.remove()
    assert out.features is not None and torch.equal(out.features, seen[0][1]) and out.features.shape == (4, 16, 16)
    obj = DUPAObjective(flow, num_paths=2, weight=0.5, projector=ConditionProjector(16, 16, 8))
    loss, _, align = obj(draw_paths(x, y, 2, torch.Generator().manual_seed(0)))
    loss.backward()
    assert -1 <= align.item() <= 1 and cast(Any, sd3.transformer_blocks[0]).attn.to_q.weight.grad is not None
