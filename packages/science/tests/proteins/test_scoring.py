"""Fitness scores against brute force on tiny models; Spearman; real sequences; model loaders."""

from __future__ import annotations

import argparse
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from iclr26_science.proteins import (
    MaskedLM,
    antibody_sequences,
    esm2_from_config,
    esm_readme_proteins,
    load_antiberty,
    load_esm2,
    masked_marginals,
    pseudo_log_likelihood,
    pseudo_perplexity,
    score_mutants,
    spearman,
    wildtype_marginals,
)
from iclr26_science.proteins.scoring import optimal_window
from iclr26_shared.errors import DataError

WT = "MKTVRQERLKSIVRILERSK"


def _brute_marginals(lm: MaskedLM, seq: str, window: int) -> torch.Tensor:
    ids = torch.tensor(lm.alphabet.encode(seq))
    rows = []
    for p in range(1, len(ids) - 1):
        x = ids.clone()
        x[p] = lm.alphabet.mask
        a, b = optimal_window(p, len(ids), window)
        with torch.no_grad():
            rows.append(torch.log_softmax(lm(x[None, a:b]), -1)[0, p - a])
    return torch.stack(rows)


@pytest.mark.parametrize("window", [1024, 9])
def test_masked_marginals_match_brute_force(tiny_lm: MaskedLM, window: int) -> None:
    got = masked_marginals(tiny_lm, WT, batch_size=3, window=window)
    assert got.shape == (len(WT), len(tiny_lm.alphabet))
    torch.testing.assert_close(got, _brute_marginals(tiny_lm, WT, window), rtol=1e-4, atol=1e-5)
    idx = tiny_lm.alphabet.index
    scores = score_mutants(tiny_lm, WT, ["K2A", "M1W:K20P"], window=window)
    want = [
        got[1, idx["A"]] - got[1, idx["K"]],
        got[0, idx["W"]] - got[0, idx["M"]] + got[19, idx["P"]] - got[19, idx["K"]],
    ]
    np.testing.assert_allclose(scores, [float(w) for w in want], rtol=1e-5)


def test_wildtype_marginal_and_pseudo_ll(tiny_lm: MaskedLM) -> None:
    ids = torch.tensor([tiny_lm.alphabet.encode(WT)])
    with torch.no_grad():
        want = torch.log_softmax(tiny_lm(ids), -1)[0, 1:-1]
    torch.testing.assert_close(wildtype_marginals(tiny_lm, WT), want)
    s = score_mutants(tiny_lm, WT, ["K2A"], kind="wildtype_marginal")
    idx = tiny_lm.alphabet.index
    assert s[0] == pytest.approx(float(want[1, idx["A"]] - want[1, idx["K"]]), rel=1e-5)
    pll = score_mutants(tiny_lm, WT, ["K2A"], kind="pseudo_ll")[0]
    assert pll == pytest.approx(
        pseudo_log_likelihood(tiny_lm, "MATVRQERLKSIVRILERSK") - pseudo_log_likelihood(tiny_lm, WT), abs=1e-4
    )


def test_mutation_not_matching_the_wild_type(tiny_lm: MaskedLM) -> None:
    with pytest.raises(DataError, match="does not match the wild type"):
        score_mutants(tiny_lm, WT, ["A2K"])


def test_spearman() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 45]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    x = np.random.default_rng(0).normal(size=50)
    y = x + np.random.default_rng(1).normal(size=50)
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    assert spearman(x, y) == pytest.approx(np.corrcoef(rx, ry)[0, 1])
    assert spearman([1, 1, 2], [3, 2, 1]) == pytest.approx(-0.8660254, abs=1e-6)  # tie-averaged ranks
    assert np.isnan(spearman([1, 1], [1, 2]))


def test_real_sequences_ship_offline() -> None:
    ab = antibody_sequences()
    assert [r.name for r in ab] == ["antiberty-VH", "antiberty-VL", "antiberty-VL2"]
    assert ab[0].sequence.startswith("EVQLVQSGPEV") and len(ab[0].sequence) == 122
    esm = esm_readme_proteins()
    assert [len(r.sequence) for r in esm] == [65, 71]


def test_antiberty_predicts_masked_antibody_residues() -> None:
    """The wheel's weights load into BertForMaskedLM and fill masked VH residues far above chance (1/20)."""
    lm = load_antiberty()
    vh = antibody_sequences()[0].sequence
    ids = torch.tensor([lm.alphabet.encode(vh)])
    x = ids.clone()
    pos = torch.arange(3, len(vh), 7)
    x[0, pos] = lm.alphabet.mask
    with torch.no_grad():
        pred = lm(x).argmax(-1)[0, pos]
    assert (pred == ids[0, pos]).float().mean() > 0.5
    assert pseudo_perplexity(masked_marginals(lm, vh[:30]), vh[:30], lm) < 20


def test_pretrained_esm2_without_weights_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    monkeypatch.setattr(torch.hub, "get_dir", lambda: str(tmp_path))
    with pytest.raises(DataError, match=r"esm2_t6_8M_UR50D\.pt not found") as err:
        load_esm2("esm2_t6_8M_UR50D")
    assert "\n" not in str(err.value)
    with pytest.raises(DataError, match="unknown ESM-2"):
        load_esm2("esm3")


def _write_fair_esm_checkpoint(lm: MaskedLM, path: Path, *, regression: bool = True) -> None:
    """A checkpoint in fair-esm's ESM-2 layout: fairseq's ``cfg`` with the model config as an
    ``argparse.Namespace``, the state dict under fairseq's prefixes, contact regression in its own file."""
    net: Any = lm.net
    model_cfg = argparse.Namespace(
        encoder_layers=len(net.layers), encoder_embed_dim=net.embed_dim, encoder_attention_heads=net.attention_heads,
        token_dropout=net.token_dropout, arch="esm2",
    )  # fmt: skip
    state = net.state_dict()
    main = {
        ("encoder." if k.startswith("lm_head") else "encoder.sentence_encoder.") + k: v
        for k, v in state.items()
        if not k.startswith("contact_head")
    }
    ckpt = {"cfg": {"model": model_cfg, "common": argparse.Namespace(seed=1)}, "model": main, "args": None}
    torch.save(ckpt, path)
    if regression:
        reg = {k: v for k, v in state.items() if k.startswith("contact_head")}
        torch.save({"model": reg}, path.with_name(path.stem + "-contact-regression.pt"))


def test_esm2_checkpoint_in_fair_esm_layout_loads_with_weights_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fair-esm's own loader fails on such a file under torch >= 2.6 (weights_only=True by default);
    ours loads it and reproduces the network's logits bit for bit, with and without the regression file."""
    import esm

    src = esm2_from_config(layers=2, width=32, heads=4, seed=3)
    path = tmp_path / "esm2_t2_tiny_UR50D.pt"
    _write_fair_esm_checkpoint(src, path)
    with pytest.raises(pickle.UnpicklingError):
        esm.pretrained.load_model_and_alphabet_local(str(path))  # the bug this loader works around
    lm = load_esm2(path)
    x = torch.tensor([src.alphabet.encode("MKTAYIAKQRQISFVKSHFSRQ")])
    with torch.no_grad():
        assert torch.equal(lm(x), src(x))
    loaded_net: Any = lm.net
    src_net: Any = src.net
    assert torch.equal(loaded_net.contact_head.regression.weight, src_net.contact_head.regression.weight)
    bare = tmp_path / "bare" / "esm2_t2_tiny_UR50D.pt"
    bare.parent.mkdir()
    _write_fair_esm_checkpoint(src, bare, regression=False)
    with torch.no_grad():
        assert torch.equal(load_esm2(bare)(x), src(x))
    # found by name in $ICLR26_DATA/esm/ as well
    (tmp_path / "esm").mkdir()
    named = tmp_path / "esm" / "esm2_t6_8M_UR50D.pt"
    _write_fair_esm_checkpoint(esm2_from_config(layers=1, width=16, heads=2), named, regression=False)
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    assert load_esm2("esm2_t6_8M_UR50D").name == "esm2_t6_8M_UR50D"


class _NotAllowed:
    pass


def test_esm2_checkpoint_with_other_objects_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "esm2_t1_evil.pt"
    torch.save({"cfg": {"model": _NotAllowed()}, "model": {}}, path)
    with pytest.raises(DataError, match=r"not a fair-esm checkpoint that loads safely \(holds .*_NotAllowed") as err:
        load_esm2(path)
    assert "\n" not in str(err.value)
    torch.save({"cfg": {"model": argparse.Namespace()}, "model": {}}, path)
    with pytest.raises(DataError, match="not an ESM-2 checkpoint in fair-esm's layout"):
        load_esm2(path)
    with pytest.raises(DataError, match="not found"):
        load_esm2(tmp_path / "esm2_missing.pt")
