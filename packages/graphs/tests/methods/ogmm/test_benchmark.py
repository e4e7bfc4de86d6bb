"""The OGMM benchmark script runs in its --quick mode and writes its JSON (timings are not checked)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from iclr26_shared.bench import bench_main

SCRIPT = Path(__file__).parents[3] / "benchmarks" / "ogmm.py"


def test_benchmark_quick_writes_generation_and_merging_rows(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("graphs_bench_ogmm", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("graphs_bench_ogmm", module)
    spec.loader.exec_module(module)
    out = tmp_path / "ogmm.json"
    assert bench_main("graphs-ogmm", module.run, ["--quick", "--out", str(out)]) == 0
    res = json.loads(out.read_text())["results"]
    assert [r["arch"] for r in res["generation"]] == ["gcn", "gat", "gin"]
    assert all(r["seconds_per_graph"] > 0 and r["graphs"] == 16 for r in res["generation"])
    assert [r["experts"] for r in res["merging"]] == [2, 4]
    assert all(r["median_s"] > 0 for r in res["merging"])
