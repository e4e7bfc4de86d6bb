"""Claims: computed from results.json-shaped dicts, holding and failing where they should."""

from __future__ import annotations

from iclr26_sequence_models.methods.selective_rope.claims import claims, report


def _task(metrics: dict[str, float], **extra: object) -> dict:
    settings = {
        "group": "S2",
        "seq_len": 128,
        "eval_len": 512,
        "copy_max_len": 16,
        "layer": "gla",
        "num_layers": 1,
        "hidden_size": 64,
        "steps": 10,
        "lr": 1e-3,
    }
    runs = {
        p: {"metric": m, "params": 100, "train_seconds": 1.0, "final": {"metric": m, "chance": 0.5, **extra}}
        for p, m in metrics.items()
    }
    return {"settings": settings, "runs": runs}


def test_claims_hold_and_fail() -> None:
    good = {
        "tasks": {
            "state": _task({"nope": 0.5, "rope": 0.52, "selective": 0.99}),
            "copy": _task({"nope": 0.0, "rope": 0.1, "selective": 0.6}),
            "mqar": _task({"nope": 0.3, "rope": 0.5, "selective": 0.4}),
            "lm": _task({"nope": 2.5, "rope": 2.4, "selective": 2.3}),
        }
    }
    out = claims(good)
    assert [c.holds for c in out] == [True, True, True, True]
    assert out[0].baseline == 0.52 and out[3].ours == 2.3
    bad = {
        "tasks": {
            "state": _task({"nope": 0.5, "rope": 0.8, "selective": 0.99}),  # RoPE not near chance
            "copy": _task({"nope": 0.0, "rope": 0.6, "selective": 0.6}),
            "mqar": _task({"nope": 0.5, "rope": 0.5, "selective": 0.4}),
            "lm": _task({"nope": 2.5, "rope": 2.2, "selective": 2.3}),
        }
    }
    assert [c.holds for c in claims(bad)] == [False, False, False, False]
    assert "| selective | 0.9900 |" in report(good)


def test_claims_only_for_tasks_that_ran() -> None:
    only_lm = {"tasks": {"lm": _task({"rope": 2.4, "selective": 2.3})}}
    assert len(claims(only_lm)) == 1
    assert claims({"tasks": {"state": _task({"selective": 0.9})}}) == []
