"""Selective RoPE as a transformers model: Auto* registration, save/load, generate, recurrent = parallel."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoConfig, AutoModelForCausalLM

from iclr26_sequence_models.nn.hf import SelectiveRopeForCausalLM, SelectiveRopeLMConfig
from iclr26_sequence_models.nn.model import SequenceModel
from iclr26_shared.testing import assert_close

SEL = {"use_bias": True, "use_gate": True, "conv_act": "silu"}


def _model(layer: str, position: str, seed: int = 0) -> SelectiveRopeForCausalLM:
    torch.manual_seed(seed)
    cfg = SelectiveRopeLMConfig(
        vocab_size=40,
        hidden_size=32,
        num_hidden_layers=2,
        num_heads=4,
        layer=layer,
        position=position,
        position_options=SEL if position == "selective" else {},
        layer_options={"use_short_conv": True} if layer == "gla" else {},
    )
    return SelectiveRopeForCausalLM(cfg).eval()


@pytest.mark.parametrize("layer", ["gla", "gdn", "attn", "fox"])
@pytest.mark.parametrize("position", ["selective", "rope", "none"])
def test_recurrent_steps_equal_parallel_forward(layer: str, position: str) -> None:
    model = _model(layer, position).double()
    ids = torch.randint(0, 40, (2, 21))
    with torch.no_grad():
        full = model(ids).logits
        out = model(ids[:, :6])
        steps, cache = [out.logits], out.cache
        for t in range(6, 21):  # one token at a time through the recurrent cache
            out = model(ids[:, t : t + 1], cache=cache)
            steps.append(out.logits)
            cache = out.cache
    assert_close(torch.cat(steps, 1), full, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("layer", ["gla", "gdn", "attn"])
def test_generate_greedy_equals_argmax_of_parallel_forward(layer: str) -> None:
    model = _model(layer, "selective")
    prompt = torch.randint(0, 40, (3, 5))
    out = model.generate(prompt, max_new_tokens=8, do_sample=False, pad_token_id=0)  # pyright: ignore[reportAttributeAccessIssue]
    ids = prompt
    with torch.no_grad():
        for _ in range(8):  # greedy by hand with full (parallel) forwards, no cache
            ids = torch.cat([ids, model(ids).logits[:, -1].argmax(-1, keepdim=True)], 1)
    assert torch.equal(out, ids)


def test_auto_classes_save_load_round_trip(tmp_path) -> None:
    model = _model("gla", "selective")
    model.save_pretrained(tmp_path)
    cfg = AutoConfig.from_pretrained(tmp_path)
    assert isinstance(cfg, SelectiveRopeLMConfig) and cfg.position == "selective" and cfg.position_options == SEL
    again = AutoModelForCausalLM.from_pretrained(tmp_path)
    assert isinstance(again, SelectiveRopeForCausalLM)
    ids = torch.randint(0, 40, (2, 17))
    with torch.no_grad():
        assert torch.equal(again.eval()(ids).logits, model(ids).logits)
    rope = _model("gla", "rope")  # a non-persistent buffer (inv_freq) is rebuilt on load
    rope.save_pretrained(tmp_path / "rope")
    with torch.no_grad():
        assert torch.equal(AutoModelForCausalLM.from_pretrained(tmp_path / "rope")(ids).logits, rope(ids).logits)


def test_labels_loss_is_shifted_cross_entropy_and_trains() -> None:
    model = _model("gla", "selective").train()
    ids = torch.randint(0, 40, (2, 16))
    out = model(ids, labels=ids)
    ref = torch.nn.functional.cross_entropy(out.logits[:, :-1].reshape(-1, 40), ids[:, 1:].reshape(-1))
    assert out.loss is not None
    assert_close(out.loss, ref, rtol=1e-6, atol=1e-7)
    out.loss.backward()
    assert all(p.grad is not None for p in model.parameters() if p.requires_grad)


def test_from_sequence_model_copies_weights() -> None:
    torch.manual_seed(3)
    seq = SequenceModel(40, 32, 2, "gdn", 4, "selective", SEL)
    cfg = SelectiveRopeLMConfig(
        vocab_size=40, hidden_size=32, num_hidden_layers=2, num_heads=4, layer="gdn", position_options=SEL
    )
    hf = SelectiveRopeForCausalLM.from_sequence_model(seq, cfg)
    ids = torch.randint(0, 40, (2, 9))
    with torch.no_grad():
        assert torch.equal(hf(ids).logits, seq(ids)[0])


def test_bad_config_and_padding_are_one_line_errors() -> None:
    with pytest.raises(ValueError, match="position"):
        SelectiveRopeLMConfig(position="alibi")
    with pytest.raises(ValueError, match="layer"):
        SelectiveRopeLMConfig(layer="lstm")
    model = _model("gla", "none")
    with pytest.raises(ValueError, match="padding"):
        model(torch.ones(1, 4, dtype=torch.long), attention_mask=torch.tensor([[0, 1, 1, 1]]))
