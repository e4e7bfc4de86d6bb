"""DUPA's collapse metric (issue 36): other-class partners and the centred same/other cosines of
``path_cosines``, pinned against a numpy computation on constructed aligned-layer tokens (a stand-in model
returns them): a shared offset makes every uncentred cosine high, and centring removes it, leaving the
image-specific part (same image high, other class near 0)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

from iclr26_generative_vision.flow.dupa import draw_paths
from iclr26_generative_vision.methods.dupa.train import other_class_partners, path_cosines

B, N, H = 8, 3, 6


class _StandIn:
    """What ``path_cosines`` reads of a DUPAObjective: ``aligned_tokens(...)`` (through ``model(...)``) giving
    ``hidden [2B, N, H]``, a projector
    (or None), ``align_layer`` and the train/eval switch."""

    def __init__(self, hidden: torch.Tensor, projector: torch.nn.Module | None) -> None:
        self.hidden, self.projector, self.align_layer, self.training = hidden, projector, 1, True
        self.calls: list[tuple[torch.Size, Any]] = []

    def model(self, x_t: torch.Tensor, t: torch.Tensor, labels: torch.Tensor, *, align_layer: int) -> SimpleNamespace:
        self.calls.append((x_t.shape, align_layer))
        return SimpleNamespace(hidden=self.hidden)

    def aligned_tokens(self, x_t: torch.Tensor, t: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return self.model(x_t, t, labels, align_layer=self.align_layer).hidden

    def eval(self) -> None:
        self.training = False

    def train(self, mode: bool = True) -> None:
        self.training = mode


def _tokens() -> torch.Tensor:
    """Path k of image i: offset c (shared by all) + u_i (the image) + small path noise; ``[2B, N, H]``."""
    gen = torch.Generator().manual_seed(0)
    c = 10.0 * torch.ones(1, N, H)
    u = torch.randn(B, N, H, generator=gen)
    noise = 0.1 * torch.randn(2, B, N, H, generator=gen)
    return (c + u + noise).reshape(2 * B, N, H)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    a = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b = b / np.linalg.norm(b, axis=-1, keepdims=True)
    return float((a * b).sum(-1).mean())


def test_other_class_partners_are_of_another_class_and_shuffled() -> None:
    y = torch.tensor([0, 0, 0, 1, 1, 2, 2, 2])
    for seed in range(5):
        p = other_class_partners(y, torch.Generator().manual_seed(seed))
        assert p.shape == (8,) and bool((y[p] != y).all())
    draws = {tuple(other_class_partners(y, torch.Generator().manual_seed(s)).tolist()) for s in range(5)}
    assert len(draws) > 1  # a random pairing, not a fixed roll
    with pytest.raises(ValueError, match="two classes"):
        other_class_partners(torch.zeros(4, dtype=torch.long), torch.Generator())


@pytest.mark.parametrize("with_projector", [False, True])
@torch.no_grad()
def test_centred_cosines_equal_numpy_and_remove_a_shared_offset(with_projector: bool) -> None:
    torch.manual_seed(0)
    projector = torch.nn.Linear(H, 4) if with_projector else None
    hidden = _tokens()
    stand_in = _StandIn(hidden, projector)
    x, y = torch.randn(B, 1, 4, 4), torch.tensor([0, 1, 2, 3, 0, 1, 2, 3])
    res = path_cosines(stand_in, x, y, torch.Generator().manual_seed(7))  # type: ignore[arg-type]
    assert stand_in.training and stand_in.calls == [(torch.Size([2 * B, 1, 4, 4]), 1)]  # mode restored
    gen = torch.Generator().manual_seed(7)  # the same draws: the paths first, then the partners
    draw_paths(x, y, 2, gen)
    partners = other_class_partners(y, gen).numpy()
    kinds = {"raw": hidden.numpy().reshape(2, B, N, H)}
    if projector is not None:
        kinds["projected"] = projector(hidden).numpy().reshape(2, B, N, 4)
    assert {k for k in res if k.startswith("gap_")} == {f"gap_{k}" for k in kinds}
    for name, f in kinds.items():
        centred = f - f.mean(axis=(0, 1), keepdims=True)
        expected = {
            f"same_{name}_uncentred": _cos(f[0], f[1]),
            f"other_{name}_uncentred": _cos(f[0], f[1][partners]),
            f"same_{name}": _cos(centred[0], centred[1]),
            f"other_{name}": _cos(centred[0], centred[1][partners]),
        }
        for key, value in expected.items():
            assert res[key] == pytest.approx(value, abs=1e-5), key
        assert res[f"gap_{name}"] == pytest.approx(expected[f"same_{name}"] - expected[f"other_{name}"], abs=1e-5)
    # the offset dominates the uncentred cosines (≈ 1 for any two images); centred, only the image is left
    assert res["other_raw_uncentred"] > 0.9 and res["same_raw"] > 0.95 and abs(res["other_raw"]) < 0.5
