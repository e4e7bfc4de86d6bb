"""The in-repo patch-descriptor CNN: patches, HardNet loss, training lowers the loss and learns to match."""

from __future__ import annotations

import numpy as np
import torch

from iclr26_generative_vision.data.retrieval import load_sources
from iclr26_generative_vision.retrieval.patch_cnn import (
    PatchCNN,
    cnn_describe,
    hardnet_loss,
    keypoint_patches,
    random_patch_pairs,
    train_patch_cnn,
)


def test_hardnet_loss_is_zero_for_matched_orthogonal_rows_and_positive_when_swapped() -> None:
    a = torch.eye(4, 8)
    assert float(hardnet_loss(a, a)) == 0.0  # positives at 0, negatives at √2 > margin 1
    assert float(hardnet_loss(a, a.roll(1, 0))) > 1.0


def test_patches_descriptors_shapes_and_unit_norm() -> None:
    img = load_sources(("camera",), 192)["camera"]
    patches, xy = keypoint_patches(img, 20)
    assert patches.shape == (20, 32, 32) and xy.shape == (20, 2) and 0 <= patches.min() and patches.max() <= 1
    torch.manual_seed(0)
    desc, xy2 = cnn_describe(PatchCNN().eval(), img, 20)
    assert desc.shape == (20, 128) and np.allclose(np.linalg.norm(desc, axis=1), 1, atol=1e-5)
    np.testing.assert_array_equal(xy, xy2)
    assert cnn_describe(PatchCNN().eval(), np.zeros((64, 64), np.uint8), 20)[0].shape == (0, 128)


def test_training_lowers_the_loss_on_its_and_on_held_out_pairs() -> None:
    images = list(load_sources(("astronaut", "coffee"), 160).values())
    a, p = random_patch_pairs(images, 64, np.random.default_rng(99))  # held-out pairs (another seed)

    def held_out_loss(cnn: PatchCNN) -> float:
        with torch.no_grad():
            return float(hardnet_loss(cnn(torch.from_numpy(a)), cnn(torch.from_numpy(p))))

    torch.manual_seed(0)
    init = held_out_loss(PatchCNN().eval())
    cnn, losses = train_patch_cnn(images, steps=40, batch=32, lr=3e-3, seed=0)
    assert np.mean(losses[-5:]) < np.mean(losses[:5]) - 0.1, losses
    assert held_out_loss(cnn) < init - 0.1, (held_out_loss(cnn), init)
