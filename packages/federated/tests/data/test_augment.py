"""Weak and strong views: shapes, range, seeded reproducibility."""

import torch

from iclr26_federated.data.augment import normalize, strong_view, weak_view


def test_views_shapes_ranges_and_seeding() -> None:
    imgs = torch.randint(0, 256, (5, 12, 12), dtype=torch.uint8)
    x = normalize(imgs)
    assert x.shape == (5, 1, 12, 12) and float(x.min()) >= -1 and float(x.max()) <= 1
    rgb = torch.randint(0, 256, (2, 8, 8, 3), dtype=torch.uint8)
    assert normalize(rgb).shape == (2, 3, 8, 8)
    for view in (weak_view, strong_view):
        a = view(imgs, torch.Generator().manual_seed(1), hflip=True)
        b = view(imgs, torch.Generator().manual_seed(1), hflip=True)
        c = view(imgs, torch.Generator().manual_seed(2), hflip=True)
        assert a.shape == (5, 1, 12, 12)
        assert torch.equal(a, b) and not torch.equal(a, c)
        assert float(a.min()) >= -1.0 - 1e-6 and float(a.max()) <= 1.0 + 1e-6
    # the strong view differs from the weak one much more
    g = torch.Generator().manual_seed(0)
    assert float((strong_view(imgs, g) - x).abs().mean()) > float((weak_view(imgs, g) - x).abs().mean())
