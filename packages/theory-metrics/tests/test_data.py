"""The image tensors: shapes, standardisation with training statistics, subsets, clear errors."""

from __future__ import annotations

import pytest
import torch

from iclr26_shared.errors import DataError
from iclr26_theory_metrics.data import load_image_tensors


def test_digits_tensors() -> None:
    d = load_image_tensors("digits", n_train=200, n_test=50)
    assert d.x_train.shape == (200, 1, 8, 8) and d.x_test.shape == (50, 1, 8, 8)
    assert d.x_train.dtype == torch.float32 and d.y_train.dtype == torch.int64
    assert d.num_classes == 10 and d.image_shape == (1, 8, 8)
    assert abs(float(d.x_train.mean())) < 1e-5 and abs(float(d.x_train.std()) - 1) < 1e-2
    assert sorted(set(d.y_train.tolist())) == list(range(10))


def test_bad_names_and_sizes() -> None:
    with pytest.raises(DataError, match="unknown data set 'svhn'"):
        load_image_tensors("svhn")
    with pytest.raises(DataError, match="no images of class"):
        load_image_tensors("digits", n_train=5)
