"""The TTT recipe: masking, the SGD update, frozen embeddings, LoRA and bit-exact reset."""

from __future__ import annotations

import copy
import warnings
from pathlib import Path
from typing import Literal

import numpy as np
import pytest
import safetensors.torch
import torch

from iclr26_science.proteins import MaskedLM, ProteinTTT, TTTSettings, lora_parameters, lora_scales, mlm_loss
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
    wrapped = {
        k.replace(".linear.", ".").replace(".base_layer.", "."): v
        for k, v in tiny_lm.state_dict().items()
        if "lora_" not in k
    }
    assert set(wrapped) == set(base)
    for k, v in wrapped.items():
        assert torch.equal(v, base[k]), k  # base weights untouched; only adapters moved
    names = [n for n, _ in tiny_lm.named_parameters() if "lora_up" in n or "lora_B" in n]
    assert len(names) == 4 and all(dict(tiny_lm.named_parameters())[n].abs().sum() > 0 for n in names)
    # transformers networks get PEFT's LoRA layers, fair-esm's ESM2 ours
    kinds = {
        type(m).__module__.split(".")[0] for m in tiny_lm.modules() if hasattr(m, "lora_A") or isinstance(m, LoRALinear)
    }
    assert kinds == ({"peft"} if tiny_lm.kind == "hf" else {"iclr26_science"}), kinds


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
    ttt = ProteinTTT(tiny_lm, TTTSettings(lr=0.05, ags=1, steps=2, score_every_step=True))
    res = ttt.ttt(SEQ, msa=msa)  # automatic_best_state_reset (default on): the lowest pseudo-perplexity is kept
    ppl = [r["perplexity"] for r in res.history]
    assert len(ppl) == 3 and res.selected_step == min(range(3), key=ppl.__getitem__)
    ttt.reset()
    last = ProteinTTT(tiny_lm, TTTSettings(lr=0.05, ags=1, steps=2, score_every_step=True,
                                           automatic_best_state_reset=False)).ttt(SEQ, msa=msa)  # fmt: skip
    assert last.selected_step == 2
    with pytest.raises(DataError, match="MSA row 1 has length"):
        ttt.ttt(SEQ, msa=[SEQ[:-1]])


@pytest.mark.parametrize(
    ("kw", "field"),
    [({"lr": 0.0}, "lr"), ({"ags": 0}, "ags"), ({"mask_ratio": 1.0}, "mask_ratio"), ({"loss_kind": "mse"}, "loss_kind"),
     ({"bert_leave_prob": 0.6, "bert_replace_prob": 0.6}, "bert_replace_prob"),
     ({"lr": 1e-3, "lr_min": 2e-3}, "lr_min"), ({"lr_warmup_steps": 2}, "lr_warmup_steps"),
     ({"gradient_clip_max_norm": 0.0}, "gradient_clip_max_norm")],
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
        scales = lora_scales(tiny_lm)
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


# ---------------------------------------------------------------- the reference's switches and one pinned step
def _reference_batch(
    x: torch.Tensor, s: TTTSettings, standard: list[int], mask_id: int, g: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``TTTModule._ttt_sample_batch`` of anton-bushuiev/ProteinTTT (base.py), re-derived step by step: the
    same generator calls in the same order (one sequence: no row draw; crop starts drawn when the sequence
    is at least crop_size long; a randperm per row; then a rand(1) per selected position, ascending, and a
    randint(1) for each replacement)."""
    bs, crop = s.batch_size, s.crop_size
    seq_len = x.shape[1]
    rows = x.expand(bs, -1)
    if seq_len < crop:
        starts, crop = torch.zeros(bs, dtype=torch.long), seq_len
    else:
        starts = torch.randint(0, seq_len - crop + 1, (bs,), generator=g)
    cropped = torch.stack([rows[i, int(a) : int(a) + crop] for i, a in enumerate(starts)])
    mask = torch.zeros((bs, crop), dtype=torch.bool)
    for i in range(bs):
        pos = [j for j in range(crop) if int(cropped[i, j]) in set(standard)]
        k = int(len(pos) * s.mask_ratio)
        if k > 0:
            mask[i, torch.tensor(pos)[torch.randperm(len(pos), generator=g)[:k]]] = True
    masked = cropped.clone()
    for i in range(bs):
        for j in torch.nonzero(mask[i], as_tuple=True)[0]:
            u = torch.rand(1, generator=g).item()
            if u < 1 - s.bert_leave_prob - s.bert_replace_prob:
                masked[i, j] = mask_id
            elif u < 1 - s.bert_leave_prob:
                masked[i, j] = standard[int(torch.randint(0, len(standard), (1,), generator=g).item())]
    return masked, cropped, mask


def _reference_ce(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``_ttt_cross_entropy_loss``: CE of the masked tokens, split per sequence, mean each, mean of means."""
    v = logits.shape[-1]
    flat = mask.reshape(-1)
    ce = torch.nn.functional.cross_entropy(logits.reshape(-1, v)[flat], targets.reshape(-1)[flat], reduction="none")
    return torch.stack([c.mean() for c in torch.split(ce, mask.sum(1).tolist())]).mean()


def test_one_ttt_step_matches_the_reference_masking_loss_and_update(tiny_lm: MaskedLM) -> None:
    """Fixed inputs (SEQ, seed 5, a crop shorter than the sequence): the two micro-batches are token for token
    the reference sampler's, and θ₁ = θ₀ − lr · Σ_micro ∇(reference loss) over every non-embedding tensor."""
    s = TTTSettings(lr=0.05, ags=2, steps=1, batch_size=3, crop_size=40, seed=5)
    ref = copy.deepcopy(tiny_lm)
    theta0 = _params(tiny_lm)
    handle = ProteinTTT(tiny_lm, s)
    x = handle.tokenize(SEQ)
    ours = ProteinTTT(copy.deepcopy(tiny_lm), s).sample_batch(x)
    res = handle.ttt(SEQ)
    g = torch.Generator().manual_seed(5)
    ab = tiny_lm.alphabet
    standard = list(ab.standard_toks)
    emb = {id(p) for p in ref.token_embedding.parameters()}
    grads: dict[str, torch.Tensor] = {}
    loss = torch.tensor(float("nan"))
    ref.train()
    for micro in range(2):
        masked, targets, mask = _reference_batch(x, s, standard, ab.mask, g)
        if micro == 0:
            for a, b in zip(ours, (masked, targets, mask), strict=True):
                assert torch.equal(a, b)
        n_res = torch.isin(targets, torch.tensor(standard)).sum(1)
        assert targets.shape == (3, 40) and mask.sum(1).tolist() == [int(n * 0.15) for n in n_res.tolist()]
        ref.zero_grad(set_to_none=True)
        loss = _reference_ce(ref(masked), targets, mask)
        loss.backward()
        for n, p in ref.named_parameters():
            if p.grad is not None and id(p) not in emb:
                grads[n] = grads.get(n, torch.zeros_like(p)) + p.grad
    assert res.history[1]["loss"] == pytest.approx(float(loss.detach()), rel=1e-5)
    after = dict(tiny_lm.named_parameters())
    for n, grad in grads.items():
        torch.testing.assert_close(after[n].detach(), theta0[n] - 0.05 * grad, rtol=1e-5, atol=1e-6)
    assert sum(int((grad != 0).any()) for grad in grads.values()) > 5


def test_nonfinite_gradients_skip_the_step(tiny_lm: MaskedLM) -> None:
    theta0 = _params(tiny_lm)
    layer = next(p for n, p in tiny_lm.named_parameters() if "layer" in n and n.endswith("weight"))
    hook = layer.register_hook(lambda g: g * float("nan"))
    with pytest.warns(UserWarning, match="NaN/Inf gradient at optimiser step 0"):
        res = ProteinTTT(tiny_lm, TTTSettings(lr=0.1, ags=1, steps=1)).ttt(SEQ)
    assert res.skipped_steps == [0]
    assert all(torch.equal(v, theta0[k]) for k, v in tiny_lm.state_dict().items())
    res = ProteinTTT(tiny_lm, TTTSettings(lr=0.1, ags=1, steps=1, skip_nonfinite_grads=False)).ttt(SEQ)
    hook.remove()
    assert res.skipped_steps == [] and torch.isnan(layer).all()


def test_gradient_clipping_bounds_the_step(tiny_lm: MaskedLM) -> None:
    """With clipping at norm c the SGD step moves the trainable tensors by lr · c in global L2 norm."""
    theta0 = _params(tiny_lm)
    handle = ProteinTTT(tiny_lm, TTTSettings(lr=0.1, ags=1, steps=1, gradient_clip=True, gradient_clip_max_norm=1e-3))
    handle.ttt(SEQ)
    moved = dict(tiny_lm.named_parameters())
    frozen = {id(p) for p in tiny_lm.token_embedding.parameters()}
    sq = sum(float(((p.detach() - theta0[n]) ** 2).sum()) for n, p in moved.items() if id(p) not in frozen)
    assert np.sqrt(sq) == pytest.approx(0.1 * 1e-3, rel=1e-3)


@pytest.mark.parametrize("kind", ["cosine", "cosine_warmup"])
def test_lr_schedules_follow_the_reference_formulas(
    tiny_lm: MaskedLM, kind: Literal["cosine", "cosine_warmup"]
) -> None:
    lr, lo, steps, warm = 0.01, 0.001, 4, (1 if kind == "cosine_warmup" else 0)
    s = TTTSettings(lr=lr, ags=1, steps=steps, lr_scheduler=kind, lr_min=lo, lr_warmup_steps=warm)
    got = [r["lr"] for r in ProteinTTT(tiny_lm, s).ttt(SEQ).history]
    if kind == "cosine":  # CosineAnnealingLR(T_max=steps): lr at step t
        want = [lo + (lr - lo) * (1 + np.cos(np.pi * t / steps)) / 2 for t in range(steps + 1)]
    else:  # LambdaLR: warm-up (t + 1)/w, then lo/lr + (1 − lo/lr)(1 + cos(π (t − w)/(T − w)))/2, times lr
        f = lo / lr
        cos = [(1 + np.cos(np.pi * (t - warm) / (steps - warm))) / 2 for t in range(steps + 1)]
        want = [lr * ((t + 1) / warm if t < warm else f + (1 - f) * cos[t]) for t in range(steps + 1)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert ProteinTTT(tiny_lm, TTTSettings(ags=1, steps=2)).ttt(SEQ).history[-1]["lr"] == 4e-4  # default: none


# ---------------------------------------------------------------- every model kind scores; adapters save
def test_score_mutants_takes_every_model_kind_ttt_takes() -> None:
    """A raw fair-esm ESM2 and a raw transformers EsmForMaskedLM score as their MaskedLM wrappers do."""
    from iclr26_science.proteins import as_masked_lm, esm2_from_config, pseudo_log_likelihood, score_mutants

    raw = esm2_from_config(layers=1, width=16, heads=2).net
    wrapped = as_masked_lm(raw)
    for kind in ("masked_marginal", "wildtype_marginal", "pseudo_ll"):
        a = score_mutants(raw, SEQ[:20], ["M1A", "K2R:T3S"], kind)  # pyright: ignore[reportArgumentType]
        assert np.array_equal(a, score_mutants(wrapped, SEQ[:20], ["M1A", "K2R:T3S"], kind))  # pyright: ignore[reportArgumentType]
    hf = _hf_esm()
    assert np.array_equal(score_mutants(hf, SEQ[:20], ["M1A"]), score_mutants(as_masked_lm(hf), SEQ[:20], ["M1A"]))
    assert pseudo_log_likelihood(raw, SEQ[:10]) == pseudo_log_likelihood(wrapped, SEQ[:10])
    with pytest.raises(TypeError, match="cannot use a Linear"):
        score_mutants(torch.nn.Linear(2, 2), SEQ[:10], ["M1A"])
    with pytest.raises(
        DataError, match=r"^wild-type sequence has the invalid residue 'J' at position 3; expected one of"
    ):
        score_mutants(raw, "MKJV", ["M1A"])


def _logits(lm: MaskedLM) -> torch.Tensor:
    with torch.no_grad():
        return lm(torch.tensor([lm.alphabet.encode(SEQ)]))


def test_lora_adapter_saves_and_reloads_into_a_fresh_base_model(tiny_lm: MaskedLM, tmp_path: Path) -> None:
    from iclr26_science.proteins import bert_from_config, esm2_from_config, load_adapter

    handle = ProteinTTT(tiny_lm, TTTSettings(lr=0.05, ags=1, steps=2, lora_rank=2))
    handle.ttt(SEQ)
    adapted = _logits(tiny_lm)
    folder = handle.save_adapter(tmp_path / "adapter")
    assert {"adapter_config.json", "adapter_model.safetensors"} <= {p.name for p in folder.iterdir()}
    weights = safetensors.torch.load_file(str(folder / "adapter_model.safetensors"))
    assert weights and all(".lora_A." in k or ".lora_B." in k for k in weights)  # the adapter only
    fresh = (bert_from_config if tiny_lm.kind == "hf" else esm2_from_config)(layers=1, width=16, heads=2, seed=0)
    torch.testing.assert_close(_logits(fresh), _logits(copy.deepcopy(fresh)))
    assert not torch.allclose(_logits(fresh), adapted)
    reloaded = load_adapter(fresh, folder)
    assert torch.equal(_logits(reloaded), adapted)
    assert len(lora_parameters(reloaded)) == 2 * 4  # q, k, v, out of one layer
    with pytest.raises(DataError, match="already has LoRA adapters"):
        load_adapter(reloaded, folder)
    with pytest.raises(DataError, match="no adapter_config.json"):
        load_adapter(fresh, tmp_path)
    handle.reset()
    with pytest.raises(DataError, match="needs LoRA"):
        ProteinTTT(tiny_lm, TTTSettings()).save_adapter(tmp_path / "x")


def test_hf_esm_adapter_is_peft_format(tmp_path: Path) -> None:
    """The HF ESM path is PEFT's: ``get_peft_model`` puts PEFT's LoRA layers in, ``save_pretrained`` writes the
    adapter only, and both ``load_adapter`` and ``peft.PeftModel.from_pretrained`` on a fresh base model give
    the adapted logits bit for bit; ``reset`` unloads them."""
    import json

    import peft

    from iclr26_science.proteins import load_adapter, ttt

    net = _hf_esm()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    adapted = ttt(SEQ, net, TTTSettings(steps=2, ags=1, lr=0.05, lora_rank=2, lora_scaling="peft"))
    assert any(isinstance(m, peft.tuners.lora.LoraLayer) for m in net.modules())
    want = _logits(adapted.lm)
    folder = adapted.save_adapter(tmp_path)
    config = json.loads((folder / "adapter_config.json").read_text())
    assert config["peft_type"] == "LORA" and config["r"] == 2 and len(config["target_modules"]) == 4
    weights = safetensors.torch.load_file(str(folder / "adapter_model.safetensors"))
    assert len(weights) == 8 and all("lora_" in k for k in weights)  # no base weight is written
    reloaded = load_adapter(_hf_esm(), folder)
    assert torch.equal(_logits(reloaded), want)
    with warnings.catch_warnings():  # transformers' deprecation of an attribute PEFT reads, not ours
        warnings.simplefilter("ignore", FutureWarning)
        model = peft.PeftModel.from_pretrained(_hf_esm(), str(folder)).eval()
    ids = torch.tensor([adapted.lm.alphabet.encode(SEQ)])
    with torch.no_grad():
        got = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits
    assert torch.equal(got, want)
    adapted.reset()
    assert not any(isinstance(m, peft.tuners.lora.LoraLayer) for m in net.modules())
    assert set(net.state_dict()) == set(before)
    assert all(torch.equal(v, before[k]) for k, v in net.state_dict().items())
    with pytest.raises(DataError, match="no layer|not a LoRA adapter|do not fit"):
        load_adapter(_hf_esm_wider(), folder)


def _hf_esm_wider() -> torch.nn.Module:
    """An HF ESM of another width: the saved adapter does not fit it."""
    from transformers import EsmConfig, EsmForMaskedLM

    from iclr26_science.proteins.lm import esm_alphabet

    ref = esm_alphabet()
    cfg = EsmConfig(
        vocab_size=len(ref.all_toks), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=1026, position_embedding_type="rotary",
        pad_token_id=ref.padding_idx, mask_token_id=ref.mask_idx, token_dropout=True,
    )  # fmt: skip
    return EsmForMaskedLM(cfg).eval()


def test_seed_above_the_default_int_bound_is_a_generator_seed(tiny_lm: MaskedLM) -> None:
    """Issue 52: ``--seed`` goes up to 2**32 - 1 and the experiment adds a target index (up to 1000 + families),
    so TTTSettings.seed may exceed 2**31 - 1; it seeds torch's generator exactly (< 2**64), and 2**64 is refused."""
    big = 2**32 - 1 + 1000 + 7
    ttt = ProteinTTT(tiny_lm, TTTSettings(seed=big))
    assert ttt.generator.initial_seed() == big
    assert torch.equal(ttt.generator.get_state(), torch.Generator().manual_seed(big).get_state())
    with pytest.raises(ConfigError, match="seed"):
        TTTSettings(seed=2**64)
