"""iclr26-shared: the contracts every iclr26 domain package builds on (docs/architecture.md §2–8).

* :class:`MethodSpec`, :class:`Claim`, presets (``smoke``/``quick``/``full``) — the method contract;
* :mod:`~iclr26_shared.config` — typed dataclass configs, ``validate()``, checked JSON round trip;
* :mod:`~iclr26_shared.verdicts` — claims over seeds: paired t-intervals and holds/fails/inconclusive;
* :mod:`~iclr26_shared.cli` — ``run_methods(METHODS, argv)`` for the domain CLIs (the only tyro user);
* :class:`RunDir` — run directories with atomic checkpoints and ``--resume``;
* :mod:`~iclr26_shared.models` — trained models saved under ``<run>/models/<name>/``, :func:`load_model`;
* :mod:`~iclr26_shared.data` — named data sets and the shared real image sets;
* :mod:`~iclr26_shared.seeding`, :mod:`~iclr26_shared.device`, :mod:`~iclr26_shared.progress`,
  :mod:`~iclr26_shared.plotting`, :mod:`~iclr26_shared.bench`, :mod:`~iclr26_shared.testing`.
"""

from typing import TYPE_CHECKING

from iclr26_shared.config import (
    NonNegFloat,
    NonNegInt,
    PosFloat,
    PosInt,
    UnitFloat,
    config_from_dict,
    config_hash,
    config_to_dict,
    load_config,
    save_config,
    validate,
)
from iclr26_shared.errors import CheckpointError, ConfigError, DataError, Iclr26Error, UsageError
from iclr26_shared.lazy import lazy_exports
from iclr26_shared.runner import CommonFlags, execute
from iclr26_shared.spec import PRESET_NAMES, Claim, MethodSpec, Resources

if TYPE_CHECKING:
    from iclr26_shared.device import resolve_device
    from iclr26_shared.models import list_models, load_model, save_model
    from iclr26_shared.progress import ProgressBar
    from iclr26_shared.runs import RunDir
    from iclr26_shared.seeding import get_rng_state, make_generator, seed_everything, set_rng_state

# Names whose modules import torch or rich: loaded on first use, so `import iclr26_shared` stays light
# (`iclr26 list` and every `--help` import no torch).
_LAZY = {
    "resolve_device": "iclr26_shared.device",
    "ProgressBar": "iclr26_shared.progress",
    "RunDir": "iclr26_shared.runs",
    "list_models": "iclr26_shared.models",
    "load_model": "iclr26_shared.models",
    "save_model": "iclr26_shared.models",
    "get_rng_state": "iclr26_shared.seeding",
    "make_generator": "iclr26_shared.seeding",
    "seed_everything": "iclr26_shared.seeding",
    "set_rng_state": "iclr26_shared.seeding",
}


__version__ = "0.1.0"

__all__ = [
    "PRESET_NAMES",
    "CheckpointError",
    "Claim",
    "CommonFlags",
    "ConfigError",
    "DataError",
    "Iclr26Error",
    "MethodSpec",
    "ProgressBar",
    "RunDir",
    "UsageError",
    "NonNegFloat",
    "NonNegInt",
    "PosFloat",
    "PosInt",
    "Resources",
    "UnitFloat",
    "config_from_dict",
    "config_hash",
    "config_to_dict",
    "execute",
    "get_rng_state",
    "list_models",
    "load_model",
    "load_config",
    "make_generator",
    "resolve_device",
    "save_config",
    "save_model",
    "seed_everything",
    "set_rng_state",
    "validate",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
