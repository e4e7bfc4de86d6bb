"""The TTT recipe: masking, the SGD update, frozen embeddings, LoRA and bit-exact reset."""

from __future__ import annotations

import copy
from typing import Literal

import numpy as np
import pytest
import torch

from iclr26_science.proteins import MaskedLM, ProteinTTT, TTTSettings, lora_parameters, mlm_loss
from iclr26_science.proteins.lora import LoRALinear
from iclr26_shared.errors import ConfigError, DataError

SEQ = "MKTVRQERLKSIVRILERSKEPVSGAQLAEELSVSRQVIVQDIAYLRSLGYNIVATPRGYVLAGG"


def _params(lm: MaskedLM) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in lm.state_dict().items()}


def test_masking_rate_and_special_tokens(tiny_lm: MaskedLM) -> None:
    ttt = ProteinTTT(tiny_lm, TTTSettings(batch_size=300, seed=1))
    x = ttt.tokenize(SEQ)
    masked, targets, mask = ttt.sample_batch(x)
    ab = tiny_lm.alphabet
    assert masked.shape == targets.shape == mask.shape == (300, len(SEQ) + 2)
    assert (targets == x).all()
    # exactly int(0.15 · L) residues selected per copy; cls/eos never
    assert (mask.sum(1) == int(len(SEQ) * 0.15)).all()
    assert not mask[:, 0].any() and not mask[:, -1].any()
    assert (masked[:, 0] == ab.cls).all() and (masked[:, -1] == ab.eos).all()
    assert (masked[~mask] == targets[~mask]).all()
    sel_in, sel_tgt = masked[mask], targets[mask]
    n = sel_in.numel()
    frac_mask = (sel_in == ab.mask).float().mean().item()
    frac_same = (sel_in == sel_tgt).float().mean().item()
    assert abs(frac_mask - 0.8) < 0.03, frac_mask
    # unchanged = the 10 % kept + the 10 % replaced that drew the same token (1/|standard_toks| of them)
    assert abs(frac_same - (0.1 + 0.1 / len(ab.standard_toks))) < 0.025, frac_same
    assert torch.isin(sel_in, torch.tensor([*ab.standard_toks, ab.mask])).all() and n == 300 * 9
    # the 20-amino-acid switch draws replacements from the 20 only
    aa_only = ProteinTTT(tiny_lm, TTTSettings(batch_size=300, seed=1, replace_vocab="amino_acids"))
    masked, _, mask = aa_only.sample_batch(x)
    assert torch.isin(masked[mask], torch.tensor([*ab.aa_ids, ab.mask])).all()


def test_replacements_follow_the_references_vocabulary() -> None:
    """ESM-2: the reference's random replacements include X B U Z O . - (fair-esm's standard_toks)."""
    from iclr26_science.proteins import esm2_from_config

    lm = esm2_from_config(layers=1, width=16, heads=2)
    ttt = ProteinTTT(lm, TTTSettings(batch_size=2000, seed=0, bert_leave_prob=0.0, bert_replace_prob=1.0))
    masked, _, mask = ttt.sample_batch(ttt.tokenize(SEQ))
    drawn = {lm.alphabet.tokens[int(i)] for i in masked[mask].unique()}
    assert drawn == set("LAGVSERTIDPKQNFYMHWCXBUZO.-")


def test_crop_is_clamped_to_the_models_position_limit() -> None:
    from iclr26_science.proteins import bert_from_config, masked_marginals

    lm = bert_from_config(layers=1, width=16, heads=2)
    assert lm.max_tokens == 512
    ttt = ProteinTTT(lm, TTTSettings(crop_size=1024))
    assert ttt.crop_size == 512
    seq = "MKTAYIAKQR" * 60  # 600 residues: 602 tokens
    masked, _, _ = ttt.sample_batch(ttt.tokenize(seq))
    assert masked.shape[1] == 512
    assert masked_marginals(lm, seq[:520], window=1024, batch_size=256).shape == (520, len(lm.alphabet))


def test_crop_keeps_windows_of_crop_size(tiny_lm: MaskedLM) -> None:
    ttt = ProteinTTT(tiny_lm, TTTSettings(batch_size=4, crop_size=20, seed=0))
    masked, targets, _ = ttt.sample_batch(ttt.tokenize(SEQ))
    assert masked.shape == (4, 20)
    full = ttt.tokenize(SEQ)[0].tolist()
    for row in targets.tolist():
        assert any(full[a : a + 20] == row for a in range(len(full) - 19))


def test_sgd_step_equals_hand_computed_update(tiny_lm: MaskedLM) -> None:
    s = TTTSettings(lr=0.05, ags=2, steps=1, batch_size=3, seed=7)
    ref = copy.deepcopy(tiny_lm)
    theta0 = _params(tiny_lm)
    ProteinTTT(tiny_lm, s).ttt(SEQ)
    # by hand: the same two masked batches (same generator), gradients summed over the 2 micro-steps
    sampler = ProteinTTT(ref, s)
    x = sampler.tokenize(SEQ)
    ref.train()
    grads: dict[str, torch.Tensor] = {}
    emb = {id(p) for p in ref.token_embedding.parameters()}
    for _ in range(2):
        masked, targets, mask = sampler.sample_batch(x)
        ref.zero_grad(set_to_none=True)
        mlm_loss(ref(masked), targets, mask, "cross_entropy").backward()
        for n, p in ref.named_parameters():
            if p.grad is not None and id(p) not in emb:
                grads[n] = grads.get(n, torch.zeros_like(p)) + p.grad
    after = dict(tiny_lm.named_parameters())
    moved = 0
    for n, g in grads.items():
        torch.testing.assert_close(after[n].detach(), theta0[n] - 0.05 * g, rtol=1e-5, atol=1e-6)
        moved += int((g != 0).any())
    assert moved > 5


def test_embeddings_stay_frozen_and_the_rest_moves(tiny_lm: MaskedLM) -> None:
    emb0 = tiny_lm.token_embedding.weight.detach().clone()
    theta0 = _params(tiny_lm)
    ProteinTTT(tiny_lm, TTTSettings(lr=0.1, ags=1, steps=3, batch_size=2)).ttt(SEQ)
    assert torch.equal(tiny_lm.token_embedding.weight, emb0)
    table = next(
        k for k, v in tiny_lm.state_dict().items() if v.data_ptr() == tiny_lm.token_embedding.weight.data_ptr()
    )
    changed = {k for k, v in tiny_lm.state_dict().items() if not torch.equal(v, theta0[k])}
    assert table not in changed and any("layer" in k for k in changed)


def test_unfrozen_embeddings_move(tiny_lm: MaskedLM) -> None:
    emb0 = tiny_lm.token_embedding.weight.detach().clone()
    ProteinTTT(tiny_lm, TTTSettings(lr=0.1, ags=1, steps=2, freeze_embeddings=False)).ttt(SEQ)
    assert not torch.equal(tiny_lm.token_embedding.weight, emb0)


@pytest.mark.parametrize("lora_rank", [0, 4])
def test_reset_is_bit_exact(tiny_lm: MaskedLM, lora_rank: int) -> None:
    theta0 = _params(tiny_lm)
    x = torch.tensor([tiny_lm.alphabet.encode(SEQ)])
    with torch.no_grad():
        logits0 = tiny_lm(x)
    ttt = ProteinTTT(tiny_lm, TTTSettings(lr=0.1, ags=1, steps=3, lora_rank=lora_rank, lora_alpha=4.0))
    ttt.ttt(SEQ)
    with torch.no_grad():
        assert not torch.equal(tiny_lm(x), logits0)  # TTT changed the predictions
    ttt.reset()
    assert not any(isinstance(m, LoRALinear) for m in tiny_lm.modules())
    assert set(tiny_lm.state_dict()) == set(theta0)
    for k, v in tiny_lm.state_dict().items():
        assert torch.equal(v, theta0[k]), k
    with torch.no_grad():
        assert torch.equal(tiny_lm(x), logits0)


def test_lora_starts_at_the_base_function_and_trains_only_adapters(tiny_lm: MaskedLM) -> None:
    x = torch.tensor([tiny_lm.alphabet.encode(SEQ)])
    with torch.no_grad():
        logits0 = tiny_lm(x)
    base = _params(tiny_lm)
    ttt = ProteinTTT(tiny_lm, TTTSettings(lr=0.05, ags=1, steps=0, lora_rank=2))
    params = ttt.trainable_parameters()
    assert params == lora_parameters(tiny_lm) and len(params) == 2 * 4  # q, k, v, out of one layer
    with torch.no_grad():
        torch.testing.assert_close(tiny_lm(x), logits0)
    ttt.settings = TTTSettings(lr=0.05, ags=1, steps=2, lora_rank=2)
    ttt.ttt(SEQ)
    wrapped = {k.replace(".linear.", "."): v for k, v in tiny_lm.state_dict().items() if "lora_" not in k}
    for k, v in wrapped.items():
        assert torch.equal(v, base[k]), k  # base weights untouched; only adapters moved
    assert any(p.abs().sum() > 0 for m in tiny_lm.modules() if isinstance(m, LoRALinear) for p in [m.lora_up.weight])


def test_loss_kinds() -> None:
    torch.manual_seed(0)
    logits = torch.randn(2, 5, 7)
    targets = torch.randint(0, 7, (2, 5))
    mask = torch.tensor([[0, 1, 0, 0, 0], [1, 1, 1, 0, 0]], dtype=torch.bool)
    ce = torch.nn.functional.cross_entropy(logits.reshape(-1, 7), targets.reshape(-1), reduction="none").view(2, 5)
    want = (ce[0, 1] + ce[1, :3].mean()) / 2
    torch.testing.assert_close(mlm_loss(logits, targets, mask, "cross_entropy"), want)
    torch.testing.assert_close(mlm_loss(logits, targets, mask, "unnormalized_cross_entropy"), ce.mean())


def test_msa_mode_and_selection(tiny_lm: MaskedLM) -> None:
    msa = [SEQ[:-1] + "A", SEQ[:-2] + "AA"]
    ttt = ProteinTTT(
        tiny_lm, TTTSettings(lr=0.05, ags=1, steps=2, score_every_step=True, select="best_pseudo_perplexity")
    )
    res = ttt.ttt(SEQ, msa=msa)
    ppl = [r["perplexity"] for r in res.history]
    assert len(ppl) == 3 and res.selected_step == min(range(3), key=ppl.__getitem__)
    with pytest.raises(DataError, match="MSA row 1 has length"):
        ttt.ttt(SEQ, msa=[SEQ[:-1]])


@pytest.mark.parametrize(
    ("kw", "field"),
    [({"lr": 0.0}, "lr"), ({"ags": 0}, "ags"), ({"mask_ratio": 1.0}, "mask_ratio"), ({"loss_kind": "mse"}, "loss_kind"),
     ({"bert_leave_prob": 0.6, "bert_replace_prob": 0.6}, "bert_replace_prob"),
     ({"select": "best_pseudo_perplexity"}, "select")],
)  # fmt: skip
def test_bad_settings_name_the_field(kw: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        TTTSettings(**kw)  # pyright: ignore[reportArgumentType]


def test_bad_target_is_a_data_error(tiny_lm: MaskedLM) -> None:
    ttt = ProteinTTT(tiny_lm, TTTSettings(steps=1, ags=1))
    with pytest.raises(DataError, match="invalid residue 'J'"):
        ttt.ttt("MKJV")
    with pytest.raises(DataError, match="empty"):
        ttt.ttt("")


def test_perplexity_early_stopping_stops_at_the_first_step_below_the_threshold(tiny_lm: MaskedLM) -> None:
    ttt = ProteinTTT(tiny_lm, TTTSettings(lr=0.05, ags=1, steps=5, score_every_step=True))
    first = ttt.ttt(SEQ).history[0]["perplexity"]
    ttt.reset()
    stop = ProteinTTT(tiny_lm, TTTSettings(lr=0.05, ags=1, steps=5, score_every_step=True,
                                           perplexity_early_stopping=first * 2))  # fmt: skip
    res = stop.ttt(SEQ)
    assert len(res.history) == 1 and res.selected_step == 0


def test_lora_scaling_reference_alpha_or_peft_alpha_over_r(tiny_lm: MaskedLM) -> None:
    cases: tuple[tuple[Literal["reference", "peft"], float], ...] = (("reference", 32.0), ("peft", 32.0 / 4))
    for scaling, want in cases:
        handle = ProteinTTT(tiny_lm, TTTSettings(lora_rank=4, lora_scaling=scaling))
        handle.trainable_parameters()
        scales = {m.scale for m in tiny_lm.modules() if isinstance(m, LoRALinear)}
        assert scales == {want}, (scaling, scales)
        handle.reset()


def _hf_esm(seed: int = 0) -> torch.nn.Module:
    from transformers import EsmConfig, EsmForMaskedLM

    from iclr26_science.proteins.lm import esm_alphabet

    ref = esm_alphabet()
    torch.manual_seed(seed)
    cfg = EsmConfig(
        vocab_size=len(ref.all_toks), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=1026, position_embedding_type="rotary",
        pad_token_id=ref.padding_idx, mask_token_id=ref.mask_idx, token_dropout=True,
    )  # fmt: skip
    return EsmForMaskedLM(cfg).eval()


@pytest.mark.parametrize("lora_rank", [0, 2])
def test_ttt_on_a_users_hf_esm_model_and_reset(lora_rank: int) -> None:
    """``ttt(sequence, model)`` on a plain ``transformers`` EsmForMaskedLM: the model moves (LoRA in its
    EsmAttention blocks when asked), scores come from the adapted model, reset restores it bit for bit."""
    from iclr26_science.proteins import score_mutants, ttt

    net = _hf_esm()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    base = score_mutants(ttt(SEQ, net, TTTSettings(steps=0)).lm, SEQ, ["M1A", "K2R"])
    adapted = ttt(SEQ, net, TTTSettings(steps=2, ags=2, lr=0.05, lora_rank=lora_rank, lora_scaling="peft"))
    assert adapted.result is not None and adapted.result.trainable_params > 0
    after = score_mutants(adapted.lm, SEQ, ["M1A", "K2R"])
    assert not np.allclose(base, after)
    adapted.reset()
    assert all(torch.equal(v, before[k]) for k, v in net.state_dict().items())
    assert np.array_equal(score_mutants(adapted.lm, SEQ, ["M1A", "K2R"]), base)
