"""CUDA checks (deselected by default; run with ``-m gpu`` on a machine with a GPU)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from iclr26_sequence_models import chunk_gla, naive_recurrent_gla
from iclr26_sequence_models.nn import SequenceModel
from iclr26_sequence_models.nn.model import LayerName
from iclr26_shared.testing import assert_close

pytestmark = pytest.mark.gpu


@pytest.fixture
def cuda() -> torch.device:
    if not torch.cuda.is_available():
        pytest.skip("CUDA is not available")
    return torch.device("cuda")


def test_chunk_gla_on_cuda_matches_cpu_naive(cuda: torch.device) -> None:
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 300, 4, 32, generator=gen, dtype=torch.float64) for _ in range(3))
    g = F.logsigmoid(torch.randn(2, 300, 4, 32, generator=gen, dtype=torch.float64))
    ref, ref_s = naive_recurrent_gla(q, k, v, g)
    out, s = chunk_gla(q.to(cuda), k.to(cuda), v.to(cuda), g.to(cuda))
    assert_close(out.cpu(), ref, rtol=1e-9, atol=1e-10)
    assert_close(s.cpu(), ref_s, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("layer", ["gla", "gdn", "attn", "fox"])
def test_model_runs_and_decodes_on_cuda(cuda: torch.device, layer: LayerName) -> None:
    torch.manual_seed(0)
    model = SequenceModel(50, 64, 2, layer, 4, "selective", {"use_bias": True, "use_gate": True}).to(cuda)
    ids = torch.randint(0, 50, (2, 70), device=cuda)
    full, _ = model(ids)
    full.float().sum().backward()
    with torch.no_grad():
        first, cache = model(ids[:, :40])
        rest, _ = model(ids[:, 40:], cache)
    assert_close(torch.cat([first, rest], 1), full.detach(), rtol=1e-3, atol=1e-4)
