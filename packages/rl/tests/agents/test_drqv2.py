"""DrQ-v2 agent: actions in range, exploration modes, one update changes the networks, encoders, aux hook."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from iclr26_rl.agents import DrQV2Agent, DrQV2Hparams, PixelEncoder
from iclr26_rl.data import Batch, EpisodeReplay

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


def test_encoder_kinds_match_drqv2_and_ego_foresight() -> None:
    """plain: DrQ-v2's reference encoder (32 x 35 x 35 flattened at 84 px); pool: EF's AvgPool + Linear(n)."""
    plain = PixelEncoder(9, 84, repr_dim=2048, channels=32, kind="plain")
    pool = PixelEncoder(9, 84, repr_dim=2048, channels=32, kind="pool")
    x = torch.rand(2, 9, 84, 84) * 255
    assert plain.repr_dim == 32 * 35 * 35 and plain(x).shape == (2, 32 * 35 * 35)
    assert pool.repr_dim == 2048 and pool(x).shape == (2, 2048)
    assert not any(isinstance(m, torch.nn.Linear) for m in plain.modules())
    with pytest.raises(ValueError, match="encoder kind"):
        PixelEncoder(9, 84, kind="resnet")  # pyright: ignore[reportArgumentType] - the bad value under test
    agent = DrQV2Agent((6, 32, 32), 2, HP)  # the default is DrQ-v2's plain encoder
    assert agent.encoder.kind == "plain" and agent.critic.trunk[0].in_features == agent.encoder.repr_dim


class _RecordingAux(torch.nn.Module):
    """An auxiliary loss that records the encoding it is given."""

    window = 4

    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(()))
        self.seen: list[torch.Tensor] = []

    def loss(self, h: torch.Tensor, batch: Batch, shifts: torch.Tensor) -> tuple[torch.Tensor, dict[str, float]]:
        self.seen.append(h.detach().clone())
        return (h.sum() * 0 + self.w) ** 2, {}


def test_auxiliary_loss_reads_the_window_context_not_the_critic_batch() -> None:
    torch.manual_seed(0)
    aux = _RecordingAux()
    agent = DrQV2Agent((6, 32, 32), 2, dataclasses.replace(HP, aug_pad=0, encoder="pool"), aux=aux)
    batch = _replay().sample(8, window=aux.window)
    assert batch.window_frames is not None
    context = torch.as_tensor(batch.window_frames[:, :2]).reshape(8, 6, 32, 32).float()
    with torch.no_grad():
        expected = agent.encoder(context)
    agent.update(batch, step=100)
    assert len(aux.seen) == 1 and torch.allclose(aux.seen[0], expected, atol=1e-6)


def test_policy_checks_frames_at_the_boundary_and_acts_without_autograd() -> None:
    from iclr26_rl.agents.drqv2 import DrQV2Policy
    from iclr26_rl.errors import RLInputError

    torch.manual_seed(0)
    hp = dataclasses.asdict(DrQV2Hparams(encoder="pool", repr_dim=64, feature_dim=16, hidden_dim=32))
    policy = DrQV2Policy([9, 64, 64], 2, hp).eval()
    obs = torch.randint(0, 256, (3, 9, 64, 64), dtype=torch.uint8)
    actions = policy(obs)
    assert actions.shape == (3, 2) and not actions.requires_grad and actions.grad_fn is None
    with torch.enable_grad():  # the reference: the same networks with autograd on
        ref = policy.actor(policy.encoder(obs.float()))
    assert ref.requires_grad
    torch.testing.assert_close(actions, ref.detach(), rtol=0, atol=0)
    hwc = obs.permute(0, 2, 3, 1).contiguous()  # gymnasium's layout
    torch.testing.assert_close(policy(hwc), actions, rtol=0, atol=0)
    torch.testing.assert_close(policy(hwc.numpy()), actions, rtol=0, atol=0)
    torch.testing.assert_close(policy(obs[1]), policy(obs[1:2])[0], rtol=0, atol=0)  # one stack, no batch
    with pytest.raises(RLInputError, match=r"obs: this policy takes stacks of 3 RGB 64x64 frames, \[B, 9, 64, 64\]"):
        policy(torch.zeros(1, 9, 84, 84, dtype=torch.uint8))
    with pytest.raises(RLInputError, match=r"got shape \(1, 6, 64, 64\)"):
        policy(torch.zeros(1, 6, 64, 64))
