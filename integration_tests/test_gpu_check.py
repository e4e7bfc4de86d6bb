"""scripts/gpu_check.py (issue 42 part B) runs its CPU twin here: the script a GPU session runs as it is."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load():
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "scripts" / "gpu_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gpu_check_cpu_twin_writes_one_json(tmp_path: Path) -> None:
    gpu_check = _load()
    out = tmp_path / "gpu_check.json"
    code = gpu_check.main(["--out", str(out), "--device", "cpu", "--stages", "dryrun", "--only", "deql"])
    report = json.loads(out.read_text())
    entry = report["methods"]["deql"]["dryrun"]
    assert code == 0 and entry["ok"] and entry["parameters"] > 10**6 and entry["peak_rss_bytes"] > 0
    assert gpu_check.main(["--out", str(out), "--only", "no-such-method"]) == 2
