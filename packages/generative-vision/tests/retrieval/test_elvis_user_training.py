"""ELViS training on the user's own descriptors and labelled pairs, without the harness (issue 54)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch.utils.data import Dataset

from iclr26_generative_vision.retrieval.elvis import ELViS
from iclr26_generative_vision.retrieval.train import DescriptorPairs, pad_pair_batch, train_elvis
from iclr26_shared.errors import ConfigError, DataError


def _instances(n_inst: int = 6, views: int = 2, d: int = 16, seed: int = 0) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Views of an instance share its descriptors (plus noise; 5-9 per view); returns descriptor lists and
    each view's instance id."""
    gen = torch.Generator().manual_seed(seed)
    descs, inst = [], []
    for i in range(n_inst):
        base = torch.randn(9, d, generator=gen)
        for _ in range(views):
            n = int(torch.randint(5, 10, (1,), generator=gen))
            descs.append(base[:n] + 0.3 * torch.randn(n, d, generator=gen))
            inst.append(i)
    return descs, torch.tensor(inst)


def _pairs(inst: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    n = len(inst)
    pairs = torch.tensor([(a, b) for a in range(n) for b in range(n) if a != b])
    return pairs, (inst[pairs[:, 0]] == inst[pairs[:, 1]]).float()


def test_one_batch_equals_a_hand_written_bce_adamw_loop() -> None:
    descs, inst = _instances()
    pairs, labels = _pairs(inst)
    data = DescriptorPairs(descs, pairs, labels)
    torch.manual_seed(0)
    ours = ELViS(16, dim=8, f_hidden=4, g_hidden=8)
    ref = ELViS(16, dim=8, f_hidden=4, g_hidden=8)
    ref.load_state_dict(ours.state_dict())
    losses = train_elvis(ours, data, epochs=2, batch_size=len(pairs), lr=1e-3, weight_decay=0.0)
    # by hand: the whole set as one padded batch (the lr schedule is flat at 1 over 2 steps)
    q, qm = data.descriptors[pairs[:, 0]], data.masks[pairs[:, 0]]
    x, xm = data.descriptors[pairs[:, 1]], data.masks[pairs[:, 1]]
    opt = torch.optim.AdamW(ref.parameters(), lr=1e-3, weight_decay=0.0)
    ref.train()
    want = []
    for _ in range(2):
        loss = F.binary_cross_entropy_with_logits(ref.logit(q, qm, x, xm), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        want.append(float(loss.detach()))
    assert losses == pytest.approx(want, rel=1e-5)
    for (name, a), b in zip(ours.state_dict().items(), ref.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6, msg=name)
    assert not ours.training


def test_training_separates_positives_and_the_model_reloads_bit_exactly(tmp_path: Path) -> None:
    descs, inst = _instances(n_inst=4)
    pairs, labels = _pairs(inst)
    torch.manual_seed(0)
    model = ELViS(16, dim=8, f_hidden=4, g_hidden=8)
    batch = pad_pair_batch([DescriptorPairs(descs, pairs, labels)[i] for i in range(len(pairs))])
    with torch.no_grad():
        before = model.eval().logit(*batch[:4])
    losses = train_elvis(model, DescriptorPairs(descs, pairs, labels), epochs=8, batch_size=28, lr=5e-3, seed=1)
    assert sum(losses[-4:]) / 4 < sum(losses[:4]) / 4
    with torch.no_grad():
        logit, s = model.logit(*batch[:4]), model(*batch[:4])
    gap, gap_before = (float(v[labels == 1].mean() - v[labels == 0].mean()) for v in (logit, before))
    assert gap > 0 and gap > gap_before  # the trained logit ranks positives above negatives on average
    model.save_pretrained(tmp_path / "elvis")
    back = ELViS.from_pretrained(tmp_path / "elvis").eval()
    with torch.no_grad():
        assert torch.equal(back(*batch[:4]), s)
    # the same seed gives the same run (the first epoch of it)
    torch.manual_seed(0)
    again = ELViS(16, dim=8, f_hidden=4, g_hidden=8)
    first = train_elvis(again, DescriptorPairs(descs, pairs, labels), epochs=1, batch_size=28, lr=5e-3, seed=1)
    torch.manual_seed(0)
    twin = ELViS(16, dim=8, f_hidden=4, g_hidden=8)
    assert train_elvis(twin, DescriptorPairs(descs, pairs, labels), epochs=1, batch_size=28, lr=5e-3, seed=1) == first


class _Variable(Dataset[tuple[torch.Tensor, ...]]):
    """A user's dataset of (q, q_mask, x, x_mask, label) items of varying lengths."""

    def __init__(self) -> None:
        self.descs, inst = _instances(n_inst=3)
        self.pairs, self.labels = _pairs(inst)

    def __len__(self) -> int:
        return len(self.pairs)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, ...]:
        a, b = self.pairs[i].tolist()
        qa, xb = self.descs[a], self.descs[b]
        return qa, torch.ones(len(qa), dtype=torch.bool), xb, torch.ones(len(xb), dtype=torch.bool), self.labels[i]


def test_any_dataset_of_pair_items_trains_and_pads_per_batch() -> None:
    data = _Variable()
    q, qm, x, xm, y = pad_pair_batch([data[0], data[1], data[5]])
    lengths = [len(data.descs[int(data.pairs[i, 0])]) for i in (0, 1, 5)]
    assert q.shape == (3, max(lengths), 16) and qm.sum(1).tolist() == lengths and y.shape == (3,)
    assert x.shape[0] == 3 and xm.dtype == torch.bool
    torch.manual_seed(0)
    losses = train_elvis(ELViS(16, dim=8), data, epochs=1, batch_size=8)
    assert len(losses) == -(-len(data) // 8) and all(v == v for v in losses)


def test_bad_input_is_one_line_naming_the_argument() -> None:
    descs, inst = _instances(n_inst=2)
    pairs, labels = _pairs(inst)
    padded = torch.zeros(4, 9, 16)
    cases = [
        (lambda: DescriptorPairs(descs, pairs.float(), labels), "pairs: expected integer"),
        (lambda: DescriptorPairs(descs, pairs + 10, labels), r"pairs: indices must be in \[0, 4\)"),
        (lambda: DescriptorPairs(descs, pairs, labels[:-1]), "labels: expected"),
        (lambda: DescriptorPairs(descs, pairs, labels * 2), "labels: expected 0"),
        (
            lambda: DescriptorPairs(padded, pairs, labels, masks=torch.ones(4, 8, dtype=torch.bool)),
            "masks: expected bool",
        ),
        (
            lambda: DescriptorPairs(padded, pairs, labels, masks=torch.zeros(4, 9, dtype=torch.bool)),
            "at least one real",
        ),
        (
            lambda: DescriptorPairs([descs[0], descs[1][:, :8]], pairs[:1], labels[:1]),
            "descriptors: expected a non-empty list",
        ),
        (
            lambda: train_elvis(ELViS(32), DescriptorPairs(descs, pairs, labels), epochs=1),
            "width 16, the model expects in_dim = 32",
        ),
        (
            lambda: train_elvis(ELViS(16).double(), DescriptorPairs(descs, pairs, labels), epochs=1),
            "descriptors are torch.float32",
        ),
    ]
    for call, match in cases:
        with pytest.raises(DataError, match=match) as err:
            call()
        assert "\n" not in str(err.value)
    with pytest.raises(ConfigError, match="'epochs'"):
        train_elvis(ELViS(16), DescriptorPairs(descs, pairs, labels), epochs=0)
    with pytest.raises(ConfigError, match="'model'"):
        train_elvis(torch.nn.Linear(2, 2), DescriptorPairs(descs, pairs, labels))  # type: ignore[arg-type]
