"""DrQ-v2 agent: actions in range, exploration modes, one update changes the networks."""

from __future__ import annotations

import numpy as np
import torch

from iclr26_rl.agents import DrQV2Agent, DrQV2Hparams
from iclr26_rl.data import EpisodeReplay

HP = DrQV2Hparams(feature_dim=8, hidden_dim=16, repr_dim=32, conv_channels=4, expl_steps=10, babbling_steps=5)


def _replay(size: int = 32) -> EpisodeReplay:
    rng = np.random.default_rng(0)
    buf = EpisodeReplay(1000, frame_stack=2, nstep=3, discount=0.99)
    for _ in range(2):
        buf.add_episode(
            rng.integers(0, 255, (13, 3, size, size), dtype=np.uint8),
            rng.uniform(-1, 1, (12, 2)).astype(np.float32),
            rng.normal(size=12),
            terminated=False,
        )
    return buf


def test_act_modes() -> None:
    torch.manual_seed(0)
    agent = DrQV2Agent((6, 32, 32), 2, HP)
    obs = np.zeros((6, 32, 32), np.uint8)
    babble = np.stack([agent.act(obs, 0, eval_mode=False) for _ in range(200)])
    assert np.mean(np.abs(babble) == 1.0) > 0.6  # U[-4, 4] clipped: mostly bang-bang
    uniform = np.stack([agent.act(obs, 7, eval_mode=False) for _ in range(200)])
    assert np.mean(np.abs(uniform) == 1.0) == 0 and np.abs(uniform).max() <= 1
    a1, a2 = agent.act(obs, 100, eval_mode=True), agent.act(obs, 100, eval_mode=True)
    assert np.array_equal(a1, a2) and a1.shape == (2,) and a1.dtype == np.float32
    noisy = agent.act(obs, 100, eval_mode=False)
    assert np.abs(noisy).max() < 1 and not np.array_equal(noisy, a1)


def test_update_changes_encoder_critic_and_actor() -> None:
    torch.manual_seed(0)
    agent = DrQV2Agent((6, 32, 32), 2, HP)
    before = {
        k: {n: p.clone() for n, p in m.state_dict().items()}
        for k, m in (("encoder", agent.encoder), ("critic", agent.critic), ("actor", agent.actor))
    }
    target_before = [p.clone() for p in agent.critic_target.parameters()]
    metrics = agent.update(_replay().sample(8), step=100)
    assert {"critic_loss", "actor_loss", "q"} <= set(metrics)
    for key, module in (("encoder", agent.encoder), ("critic", agent.critic), ("actor", agent.actor)):
        assert any(not torch.equal(before[key][n], p) for n, p in module.state_dict().items()), key
    moved = [not torch.equal(a, b) for a, b in zip(target_before, agent.critic_target.parameters(), strict=True)]
    assert any(moved)  # soft target update


def test_state_dict_round_trip() -> None:
    torch.manual_seed(0)
    a = DrQV2Agent((6, 32, 32), 2, HP)
    a.update(_replay().sample(4), step=50)
    b = DrQV2Agent((6, 32, 32), 2, HP)
    b.load_state_dict(a.state_dict())
    obs = np.full((6, 32, 32), 100, np.uint8)
    assert np.array_equal(a.act(obs, 50, True), b.act(obs, 50, True))
