"""The figures' text says what is drawn: a ± std band only with several seeds (issue 34 §7)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import iclr26_shared.plotting as plotting
from iclr26_federated.methods.fedopenmatch.config import PRESETS
from iclr26_federated.methods.fedopenmatch.train import _figures, summarize


def _jobs(seeds: list[int]) -> list[dict[str, Any]]:
    jobs = []
    for s in seeds:
        for v in ("fedopenmatch", "labeled-only"):
            hist = [{"round": r, "open_bacc": 0.5 + 0.1 * r + 0.01 * s} for r in range(3)]
            final = dict.fromkeys(("open_bacc", "closed_acc", "unknown_recall", "known_recall"), hist[-1]["open_bacc"])
            jobs.append({"variant": v, "seed": s, "history": hist, "final": final})
    return jobs


@pytest.mark.parametrize("seeds", [[0], [0, 1, 2]])
def test_figure_titles_say_what_is_drawn(seeds: list[int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: dict[str, dict[str, Any]] = {}
    monkeypatch.setattr(plotting, "plot_curves", lambda path, curves, **kw: calls.setdefault("curves", kw))
    monkeypatch.setattr(plotting, "plot_bars", lambda path, values, **kw: calls.setdefault("bars", kw))
    cfg = PRESETS["quick"]  # every variant; the jobs have two of them
    jobs = _jobs(seeds)
    summary = summarize(cfg, jobs)
    run = SimpleNamespace(seed=0, figure_path=lambda name: tmp_path / f"{name}.png")
    _figures(run, cfg, jobs, summary)  # pyright: ignore[reportArgumentType]
    curves, bars = calls["curves"], calls["bars"]
    if len(seeds) == 1:
        assert curves["bands"] is None and bars["errors"] is None
        assert "one seed, no spread" in curves["title"] and "one seed, no spread" in bars["title"]
        assert "±" not in curves["title"] + bars["title"]
    else:
        assert "mean ± std over 3 seeds" in curves["title"] and "mean ± std over 3 seeds" in bars["title"]
        # the band is the sample std over seeds (0.01 apart: std 0.01), the bar error the summary's std
        lo, hi = curves["bands"]["fedopenmatch"]
        np.testing.assert_allclose(np.asarray(hi) - np.asarray(lo), 2 * 0.01, atol=1e-9)
        assert bars["errors"]["fedopenmatch"] == pytest.approx(0.01)
