"""S² with the pruned pass batched with the conditional pass equals the sequential guider."""

from __future__ import annotations

from typing import Any, cast

import torch

from iclr26_generative_vision import S2Guidance
from iclr26_generative_vision.guidance.batched import s2_batched_prediction
from iclr26_generative_vision.nn.dit import ClassConditionalDiT


def test_batched_equals_sequential(dit: ClassConditionalDiT) -> None:
    dit = dit.double()  # float64: batch-size-dependent float32 rounding would blur the comparison
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, 1, 8, 8, generator=gen, dtype=torch.float64)
    t = torch.full((3,), 400)
    y = torch.tensor([1, 2, 3])
    null = torch.full_like(y, 10)
    g = S2Guidance(guidance_scale=3.0, s2_scale=0.5, s2_start=0.0, s2_stop=1.0, fixed_blocks=[3])
    g.set_state(step=0, num_inference_steps=1, timestep=cast(torch.LongTensor, t[0]))
    batches: list[Any] = g.prepare_inputs({"class_labels": (y, null)})  # BlockState: dynamic fields
    for b in batches:
        g.prepare_models(dit)
        b.noise_pred = dit(x, t, class_labels=b.class_labels)
        g.cleanup_models(dit)
    seq = g(batches).pred
    fast = s2_batched_prediction(
        dit, dit.transformer_blocks, x, t, {"class_labels": y}, {"class_labels": null}, [3], 3.0, 0.5
    )
    torch.testing.assert_close(fast, seq, rtol=1e-10, atol=1e-10)
    assert not torch.allclose(
        seq, g.forward(batches[0].noise_pred, batches[1].noise_pred, pred_cond_skip=batches[0].noise_pred).pred
    )
