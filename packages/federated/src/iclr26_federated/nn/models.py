"""Two-head open-set networks: a shared extractor g, an inlier head h_c and a one-vs-all head h_d.

``p = h_c(g(x))`` (``[B, K]``) and ``q = h_d(g(x))`` reshaped to ``[B, K, 2]`` (outlier, inlier). With
gradient stop (FedOpenMatch, OpenReview 5UrPAW3uI1, method section) the OVA head reads
``stopgrad(g(x))``: OVA losses update h_d only and never the extractor.

:class:`FedOpenMatchNet` (the built-in network) has :class:`huggingface_hub.PyTorchModelHubMixin`:
``save_pretrained(dir)`` writes safetensors + its ``__init__`` arguments as ``config.json`` and
``FedOpenMatchNet.from_pretrained(dir)`` reads them back from a local folder (offline). An
:class:`OpenSetNet` around a user's own extractor saves and loads the same way: ``config.json`` holds K,
D and the extractor's class (``module:QualName``) with the arguments that rebuild it.

Normalisation layers are GroupNorm rather than BatchNorm: FedAvg then averages only trainable weights
(no running statistics or integer counters), the usual choice for non-IID federated training.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import torch
from huggingface_hub import PyTorchModelHubMixin
from torch import Tensor, nn

from iclr26_shared.models import resolve_class

__all__ = ["FedOpenMatchNet", "OpenSetNet", "ResNet18", "SmallCNN", "build_model"]


def _norm(channels: int) -> nn.GroupNorm:
    return nn.GroupNorm(min(8, channels), channels)


class SmallCNN(nn.Module):
    """Three 3×3 conv blocks (GroupNorm, ReLU, 2×2 max-pool on the first two) and global average pooling.

    Input ``[B, C, H, W]`` → features ``[B, 4·width]``.
    """

    def __init__(self, in_channels: int, width: int = 16) -> None:
        super().__init__()
        self.config = {"in_channels": in_channels, "width": width}
        w = width
        self.body = nn.Sequential(
            nn.Conv2d(in_channels, w, 3, padding=1, bias=False),
            _norm(w),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(w, 2 * w, 3, padding=1, bias=False),
            _norm(2 * w),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(2 * w, 4 * w, 3, padding=1, bias=False),
            _norm(4 * w),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.out_dim = 4 * w

    def forward(self, x: Tensor) -> Tensor:
        return self.body(x)


class _BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.n1 = _norm(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.n2 = _norm(cout)
        self.short = (
            nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), _norm(cout))
            if stride != 1 or cin != cout
            else nn.Identity()
        )

    def forward(self, x: Tensor) -> Tensor:
        out = torch.relu(self.n1(self.conv1(x)))
        return torch.relu(self.n2(self.conv2(out)) + self.short(x))


class ResNet18(nn.Module):
    """CIFAR-style ResNet-18 (3×3 stem, no max-pool; stages of 2 basic blocks with widths
    ``width·(1, 2, 4, 8)``), the paper's backbone; ``width = 64`` is the standard size.

    Input ``[B, C, H, W]`` → features ``[B, 8·width]``.
    """

    def __init__(self, in_channels: int, width: int = 64) -> None:
        super().__init__()
        self.config = {"in_channels": in_channels, "width": width}
        w = width
        self.stem = nn.Sequential(nn.Conv2d(in_channels, w, 3, 1, 1, bias=False), _norm(w), nn.ReLU(inplace=True))
        layers: list[nn.Module] = []
        cin = w
        for i, mult in enumerate((1, 2, 4, 8)):
            cout = w * mult
            stride = 1 if i == 0 else 2
            layers += [_BasicBlock(cin, cout, stride), _BasicBlock(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.out_dim = cin

    def forward(self, x: Tensor) -> Tensor:
        return self.pool(self.layers(self.stem(x)))


class OpenSetNet(nn.Module, PyTorchModelHubMixin):
    """Shared extractor g + inlier head h_c (K logits) + OVA head h_d (2K logits).

    Args:
        extractor: Module mapping ``[B, C, H, W]`` to ``[B, D]`` (any torch model's feature part).
        num_known: K, the number of known classes.
        feature_dim: D; default the extractor's ``out_dim`` attribute.
        extractor_init: The keyword arguments that rebuild the extractor as ``type(extractor)(**init)``
            when a saved model is loaded; default the extractor's ``config`` dict (the built-in
            :class:`SmallCNN` / :class:`ResNet18` have one), else none.

    ``save_pretrained(dir)`` writes ``model.safetensors`` and ``config.json`` (K, D, the extractor's class
    ``module:QualName`` and its ``init``); ``OpenSetNet.from_pretrained(dir)`` rebuilds it bit for bit. The
    extractor's class is one you pass (``extractor_classes=[MyNet]``), else it is taken only from a module
    already imported or one of this workspace's packages (``trust_extractor_class=True`` to import it; never
    from the current directory or the saved folder: ``iclr26_shared.models.resolve_class``); a class defined inside a
    function is refused at saving, one that cannot be found or built at loading, each in one line.
    """

    def __init__(
        self,
        extractor: nn.Module,
        num_known: int,
        feature_dim: int | None = None,
        extractor_init: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        if feature_dim is None:
            if not hasattr(extractor, "out_dim"):
                raise ValueError("OpenSetNet: give feature_dim (the extractor has no out_dim attribute)")
            feature_dim = int(extractor.out_dim)  # type: ignore[arg-type]
        dim = int(feature_dim)
        self.extractor = extractor
        self.inlier_head = nn.Linear(dim, num_known)
        self.ova_head = nn.Linear(dim, 2 * num_known, bias=False)
        self.num_known = num_known
        self.feature_dim = dim
        config = getattr(extractor, "config", None)
        default = dict(config) if isinstance(config, dict) else {}
        self.extractor_init: dict[str, Any] = dict(extractor_init) if extractor_init is not None else default

    def _save_pretrained(self, save_directory: Path) -> None:
        if type(self) is OpenSetNet:  # subclasses (FedOpenMatchNet) keep the mixin's own config
            cls = type(self.extractor)
            if "<locals>" in cls.__qualname__:
                raise ValueError(
                    f"OpenSetNet.save_pretrained: the extractor class {cls.__name__} is defined inside a function; "
                    "define it at module level so that from_pretrained can find it"
                )
            if cls.__module__.startswith("torch.nn") and not self.extractor_init:
                raise ValueError(
                    f"OpenSetNet.save_pretrained: the extractor is a torch {cls.__name__}, which its arguments do not "
                    "rebuild; make it a module-level nn.Module class (with a config dict of its arguments)"
                )
            config = {
                "num_known": self.num_known,
                "feature_dim": self.feature_dim,
                "extractor_class": f"{cls.__module__}:{cls.__qualname__}",
                "extractor_init": self.extractor_init,
            }
            (Path(save_directory) / "config.json").write_text(json.dumps(config, sort_keys=True, indent=2))
        super()._save_pretrained(save_directory)

    @classmethod
    def _from_pretrained(  # type: ignore[override]
        cls,
        *,
        model_id: str,
        map_location: str = "cpu",
        strict: bool = False,
        extractor_classes: Sequence[type] = (),
        trust_extractor_class: bool = False,
        **kwargs: Any,
    ) -> OpenSetNet:
        if cls is not OpenSetNet:
            return super()._from_pretrained(model_id=model_id, map_location=map_location, strict=strict, **kwargs)  # pyright: ignore[reportReturnType]
        config = json.loads((Path(model_id) / "config.json").read_text())
        path = str(config.get("extractor_class", "?"))
        init = config.get("extractor_init") or {}
        extractor_cls = _find_class(path, extractor_classes, trust_extractor_class, Path(model_id))
        try:
            extractor = extractor_cls(**init)
        except (TypeError, ValueError) as err:
            raise ValueError(
                f"OpenSetNet.from_pretrained: cannot rebuild the extractor {extractor_cls.__name__}(**{init}): "
                f"{' '.join(str(err).split())}"
            ) from None
        model = cls(extractor, int(config["num_known"]), int(config["feature_dim"]), extractor_init=init)
        try:  # always strict: a rebuilt extractor that does not match the weights must not load partially
            return cls._load_as_safetensor(model, str(Path(model_id) / "model.safetensors"), map_location, True)  # pyright: ignore[reportReturnType]
        except RuntimeError as err:
            raise ValueError(
                f"OpenSetNet.from_pretrained: the rebuilt extractor {extractor_cls.__name__}(**{init}) does not "
                f"match the saved weights ({' '.join(str(err).split())[:300]})"
            ) from None

    def forward(self, x: Tensor, gradient_stop: bool = True) -> tuple[Tensor, Tensor]:
        """Return ``(p [B, K], q [B, K, 2])``; with ``gradient_stop`` q is computed from ``g(x).detach()``."""
        feat = self.extractor(x)
        p = self.inlier_head(feat)
        q = self.ova_head(feat.detach() if gradient_stop else feat)
        return p, q.view(x.shape[0], self.num_known, 2)


def _find_class(path: str, given: Sequence[type], trust: bool, folder: Path | None = None) -> Any:
    """The class ``module:QualName`` by :func:`iclr26_shared.models.resolve_class`: one of ``given`` (same
    path, else same name), else imported from an already imported module or this workspace's packages (any
    module when ``trust``), never from the current directory or the saved folder; a one-line
    ``ValueError`` otherwise."""
    return resolve_class(
        path,
        classes=tuple(given),
        trust=trust,
        base=nn.Module,
        error=ValueError,
        what="extractor class",
        prefix="OpenSetNet.from_pretrained: ",
        refused="the extractor class {path} (config.json) is not imported: import {module}, pass "
        "extractor_classes=[...] or trust_extractor_class=True",
        unsafe=() if folder is None else (folder,),
    )


class FedOpenMatchNet(OpenSetNet, PyTorchModelHubMixin):
    """The built-in :class:`OpenSetNet`: a :class:`SmallCNN` (``cnn``) or :class:`ResNet18` extractor and
    the two heads; saved and loaded with ``save_pretrained`` / ``from_pretrained`` (JSON-able arguments).

    Input ``[B, C, H, W]`` in ``[-1, 1]`` → ``(p [B, K], q [B, K, 2])``.
    """

    def __init__(self, arch: str = "cnn", in_channels: int = 1, num_known: int = 6, width: int = 16) -> None:
        if arch not in ("cnn", "resnet18"):
            raise ValueError(f"unknown architecture {arch!r} (cnn or resnet18)")
        extractor: nn.Module = SmallCNN(in_channels, width) if arch == "cnn" else ResNet18(in_channels, width)
        super().__init__(extractor, num_known)


def build_model(
    arch: Literal["cnn", "resnet18"], in_channels: int, num_known: int, width: int, seed: int
) -> FedOpenMatchNet:
    """A seeded :class:`FedOpenMatchNet` with the ``cnn`` (:class:`SmallCNN`) or ``resnet18`` extractor
    (the global RNG is left as it was)."""
    if arch not in ("cnn", "resnet18"):
        raise ValueError(f"unknown architecture {arch!r} (cnn or resnet18)")
    gen_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        return FedOpenMatchNet(arch, in_channels, num_known, width)
    finally:
        torch.random.set_rng_state(gen_state)
