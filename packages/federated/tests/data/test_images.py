"""Image-set names: unknown names and a missing opt-in set give clear errors (readers: shared tests)."""

import pytest

from iclr26_federated.data.images import load_images
from iclr26_shared.errors import DataError


def test_unknown_name_and_missing_cifar100_give_clear_errors(tmp_path, monkeypatch) -> None:
    with pytest.raises(DataError, match="unknown data set 'svhn'"):
        load_images("svhn")
    monkeypatch.setenv("ICLR26_DATA", str(tmp_path))
    with pytest.raises(DataError, match="cifar-100-binary"):
        load_images("cifar100")
