"""LoRA (peft) and bf16 autocast switches of RESTRAIN and Semantic Voting on the bundled tiny Llama."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from iclr26_sequence_models.methods.restrain.config import RestrainConfig
from iclr26_sequence_models.methods.semantic_voting.config import SemanticVotingConfig
from iclr26_sequence_models.selfimprove.models import CharCodec, autocast, tiny_llama, trainable_copy


def _setup() -> tuple[torch.nn.Module, CharCodec, list[str]]:
    codec = CharCodec("0123456789+=")
    model = tiny_llama(codec.vocab_size, hidden_size=16, num_layers=1, num_heads=2, max_positions=32, seed=0)
    return model.eval(), codec, ["1+2=", "3+4=", "5+1=", "2+2="]


def _extract(text: str) -> str | None:
    digits = "".join(c for c in text if c.isdigit())
    return digits[:1] or None


def _changed(before: dict[str, torch.Tensor], model: torch.nn.Module) -> set[str]:
    return {n for n, p in model.named_parameters() if not torch.equal(before[n], p.detach())}


def test_lora_copy_trains_only_adapters_and_starts_at_the_base() -> None:
    base, _, _ = _setup()
    policy = trainable_copy(base, lora_r=4, lora_alpha=8, lora_targets=("q_proj", "v_proj"))
    trainable = [n for n, p in policy.named_parameters() if p.requires_grad]
    assert trainable and all("lora_A" in n or "lora_B" in n for n in trainable)
    # 1 layer x 2 targets x (A [4, 16] + B [out, 4])
    assert sum(p.numel() for p in policy.parameters() if p.requires_grad) == 2 * (4 * 16 + 16 * 4)
    ids = torch.tensor([[1, 2, 3, 4, 5]])
    with torch.no_grad():  # B = 0 at init: the policy is the base
        assert torch.equal(policy(input_ids=ids).logits, base(input_ids=ids).logits)
    with pytest.raises(ValueError, match="lora_targets"):
        trainable_copy(base, lora_r=4, lora_targets=("nope_proj",))


def test_bf16_autocast_runs_the_matmuls_in_bf16() -> None:
    base, _, _ = _setup()
    ids = torch.tensor([[1, 2, 3, 4, 5]])
    with torch.no_grad():
        with autocast("cpu", True):
            low = base(input_ids=ids).logits
        with autocast("cpu", False):
            full = base(input_ids=ids).logits
    assert low.dtype == torch.bfloat16 and full.dtype == torch.float32
    assert torch.allclose(low.float(), full, atol=0.05)  # bf16 has an 8-bit mantissa
    assert next(base.parameters()).dtype == torch.float32  # master weights stay fp32


def test_restrain_with_lora_and_bf16_updates_only_the_adapters(tmp_path) -> None:
    from iclr26_sequence_models.methods.restrain.train import train_label_free

    base, codec, prompts = _setup()
    before = {n: p.detach().clone() for n, p in base.named_parameters()}
    cfg = RestrainConfig(
        steps=2, prompts_per_step=2, rollouts=4, kappa=2, max_new_tokens=3, lr=1e-2, lora_r=4, bf16=True
    )
    policy = train_label_free(base, codec, prompts, _extract, cfg=cfg)
    assert not _changed(before, base)  # the base (reference) is untouched
    moved = _changed({n: p.detach().clone() for n, p in trainable_copy(base, lora_r=4).named_parameters()}, policy)
    assert moved and all("lora_" in n for n in moved)
    policy.save_pretrained(tmp_path)  # peft saves the adapter only
    assert (tmp_path / "adapter_config.json").exists()


def test_dpo_with_lora_and_bf16_moves_only_adapters_and_raises_the_margin() -> None:
    from iclr26_sequence_models.methods.semantic_voting.train import _seq_logps, dpo_train
    from iclr26_shared.distributed import DistContext

    codec = CharCodec("0123456789>? abcdefghijklmnopqrstuvwxyz")
    base = tiny_llama(codec.vocab_size, hidden_size=16, num_layers=1, num_heads=2, max_positions=64, seed=0).eval()
    pairs = [("cat>", "a red cat", "zzz qq"), ("dog>", "a big dog", "qqq zz")]
    cfg = SemanticVotingConfig(epochs=8, batch_size=2, lr=5e-2, warmup=0.1, lora_r=4, lora_alpha=8, bf16=True)
    low, low_losses = dpo_train(base, codec, pairs, cfg, 0, DistContext())
    trainable = {n for n, p in low.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in n for n in trainable)
    assert all(torch.isfinite(torch.tensor(low_losses)))
    assert any(float(p.detach().abs().sum()) > 0 for n, p in low.named_parameters() if "lora_B" in n)  # B moved
    # fp32 LoRA DPO raises the margin. (Under bf16 this untrained toy's attention output is below the
    # residual stream's bf16 resolution, so the loss stays at ln 2 although B moves: a precision effect.)
    policy, losses = dpo_train(base, codec, pairs, dataclasses.replace(cfg, bf16=False), 0, DistContext())
    assert losses[-1] < losses[0]

    def margin(m: torch.nn.Module) -> float:
        with torch.no_grad():
            c = _seq_logps(m, codec, [p for p, _, _ in pairs], [c for _, c, _ in pairs], False, 0)
            r = _seq_logps(m, codec, [p for p, _, _ in pairs], [r for _, _, r in pairs], False, 0)
        return float((c - r).mean())

    assert margin(policy) > margin(base)
    full = dpo_train(base, codec, pairs[:1], dataclasses.replace(cfg, lora_r=0, bf16=False, epochs=1), 0, DistContext())
    assert all(p.requires_grad for p in full[0].parameters())  # lora_r = 0: full fine-tuning


def test_merged_lora_policy_is_a_plain_model_with_the_same_logits() -> None:
    from iclr26_sequence_models.selfimprove.models import merged

    base, _, _ = _setup()
    policy = trainable_copy(base, lora_r=4)
    with torch.no_grad():
        for n, p in policy.named_parameters():
            if "lora_B" in n:
                p.normal_(0.0, 0.5)  # a non-zero update
    plain = merged(policy)
    assert not hasattr(plain, "peft_config") and type(plain) is type(base)
    ids = torch.tensor([[1, 2, 3, 4, 5]])
    with torch.no_grad():
        assert torch.allclose(plain(input_ids=ids).logits, policy(input_ids=ids).logits, atol=1e-5)
        assert not torch.allclose(plain(input_ids=ids).logits, base(input_ids=ids).logits, atol=1e-3)
    assert merged(base) is base
