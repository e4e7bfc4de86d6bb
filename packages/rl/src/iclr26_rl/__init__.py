"""iclr26 rl: Ego-Foresight (agent-aware representations for pixel RL) on gymnasium MuJoCo tasks.

Public API (heavy modules load on first access, so ``import iclr26_rl`` stays light)::

    make_pixel_env, make_vector_env, agent_geom_flags        pixel wrappers (gymnasium + mujoco)
    EpisodeReplay, Batch                                     replay with n-step returns and windows
    DrQV2Agent, DrQV2Hparams, PixelEncoder                   DrQ-v2
    EgoForesightHead, FrameDecoder                           the Ego-Foresight head
    EgoForesightConfig, PRESETS, SPEC                        the ``ego-foresight`` method
    efficiency_normalised_score, mean_ci                     learning-curve statistics

Importing the package loads triton's LLVM ahead of any OpenGL context (``_llvm_guard``): Mesa's llvmpipe
loaded first makes the first ``torch.optim`` optimizer segfault (see the README, "Rendering and torch").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iclr26_rl._llvm_guard import preload_triton
from iclr26_shared.lazy import lazy_exports

preload_triton()  # every user path passes here: before gymnasium or mujoco can make a GL context

if TYPE_CHECKING:
    from iclr26_rl.agents.drqv2 import DrQV2Agent, DrQV2Hparams, PixelEncoder
    from iclr26_rl.data.replay import Batch, EpisodeReplay
    from iclr26_rl.envs.pixels import agent_geom_flags, make_pixel_env, make_vector_env
    from iclr26_rl.methods.ego_foresight.config import PRESETS, EgoForesightConfig
    from iclr26_rl.methods.ego_foresight.metrics import efficiency_normalised_score, mean_ci
    from iclr26_rl.methods.ego_foresight.model import EgoForesightHead, FrameDecoder
    from iclr26_rl.methods.ego_foresight.spec import SPEC

_WHERE = {
    "make_pixel_env": "iclr26_rl.envs.pixels",
    "make_vector_env": "iclr26_rl.envs.pixels",
    "agent_geom_flags": "iclr26_rl.envs.pixels",
    "EpisodeReplay": "iclr26_rl.data.replay",
    "Batch": "iclr26_rl.data.replay",
    "DrQV2Agent": "iclr26_rl.agents.drqv2",
    "DrQV2Hparams": "iclr26_rl.agents.drqv2",
    "PixelEncoder": "iclr26_rl.agents.drqv2",
    "EgoForesightHead": "iclr26_rl.methods.ego_foresight.model",
    "FrameDecoder": "iclr26_rl.methods.ego_foresight.model",
    "EgoForesightConfig": "iclr26_rl.methods.ego_foresight.config",
    "PRESETS": "iclr26_rl.methods.ego_foresight.config",
    "SPEC": "iclr26_rl.methods.ego_foresight.spec",
    "efficiency_normalised_score": "iclr26_rl.methods.ego_foresight.metrics",
    "mean_ci": "iclr26_rl.methods.ego_foresight.metrics",
}

__all__ = [
    "Batch",
    "DrQV2Agent",
    "DrQV2Hparams",
    "EgoForesightConfig",
    "EgoForesightHead",
    "EpisodeReplay",
    "FrameDecoder",
    "PRESETS",
    "PixelEncoder",
    "SPEC",
    "agent_geom_flags",
    "efficiency_normalised_score",
    "make_pixel_env",
    "make_vector_env",
    "mean_ci",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
