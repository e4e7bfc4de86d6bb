"""Seeding, devices, progress bar, plots, benchmarks."""

import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from iclr26_shared.bench import bench_main, compare, measure
from iclr26_shared.device import resolve_device
from iclr26_shared.errors import ConfigError
from iclr26_shared.plotting import image_grid, plot_bars, plot_curves, plot_images
from iclr26_shared.progress import ProgressBar
from iclr26_shared.seeding import get_rng_state, seed_everything, set_rng_state
from iclr26_shared.testing import assert_close


def _draw() -> tuple[float, float, float]:
    return random.random(), float(np.random.rand()), float(torch.rand(()))


def test_seed_everything_is_reproducible_and_validated() -> None:
    seed_everything(7)
    a = _draw()
    seed_everything(7)
    assert _draw() == a
    with pytest.raises(ConfigError, match="seed"):
        seed_everything(-1)


def test_rng_state_survives_a_weights_only_round_trip(tmp_path: Path) -> None:
    seed_everything(3)
    state = get_rng_state()
    expected = _draw()
    torch.save(state, tmp_path / "s.pt")
    set_rng_state(torch.load(tmp_path / "s.pt", weights_only=True))
    assert _draw() == expected


def test_resolve_device() -> None:
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ConfigError, match="'auto', 'cpu', 'cuda'"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(ConfigError, match="is_available"):
            resolve_device("cuda")


def test_quiet_progress_logs_eta_and_metrics(capsys) -> None:
    with ProgressBar(4, "train", quiet=True, log_every_s=0.0) as bar:
        for i in range(4):
            bar.advance(loss=1.0 / (i + 1))
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("[train] 4/4 eta 0s loss=0.25") and len(err) == 4


def test_plots_are_pngs(tmp_path: Path) -> None:
    png = b"\x89PNG"
    p = plot_curves(tmp_path / "c.png", {"a": ([1, 2, 3], [3, 2, 1])}, bands={"a": ([2, 1, 0], [4, 3, 2])}, logy=True)
    assert p.read_bytes().startswith(png)
    assert plot_bars(tmp_path / "b.png", {"x": 1.0, "y": 2.0}, errors={"x": 0.1}).read_bytes().startswith(png)
    assert plot_images(tmp_path / "i.png", np.zeros((3, 8, 8)), titles=["a", "b", "c"]).read_bytes().startswith(png)
    with pytest.raises(ValueError):
        plot_curves(tmp_path / "e.png", {})
    with pytest.raises(ValueError, match="shape"):
        plot_images(tmp_path / "e.png", np.zeros((8, 8)))


def test_image_grid_tiles_row_major_with_white_gaps(tmp_path: Path) -> None:
    imgs = np.arange(5 * 2 * 3, dtype=float).reshape(5, 2, 3) / 100  # 5 images of 2x3, distinct values
    grid = image_grid(imgs, 2)
    assert grid.shape == (3 * 3 - 1, 2 * 4 - 1)
    assert np.array_equal(grid[0:2, 0:3], imgs[0]) and np.array_equal(grid[0:2, 4:7], imgs[1])
    assert np.array_equal(grid[3:5, 4:7], imgs[3]) and np.array_equal(grid[6:8, 0:3], imgs[4])
    assert (grid[2, :] == 1.0).all() and (grid[:, 3] == 1.0).all() and (grid[6:8, 4:7] == 1.0).all()
    rgb = image_grid(np.zeros((3, 4, 4, 3), dtype=np.uint8), 3, pad=2)
    assert rgb.shape == (4, 16, 3) and rgb.dtype == np.uint8 and (rgb[:, 4:6] == 255).all()
    png = plot_images(tmp_path / "g.png", np.random.default_rng(0).random((40, 8, 8)), ncols=8, title="t")
    assert png.read_bytes().startswith(b"\x89PNG")


def test_machine_line_says_when_wall_times_were_loaded() -> None:
    from iclr26_shared.runner import machine_line

    idle = {"cpus": 2, "wall_s": 10.0, "own_cpu_s": 19.5, "foreign_cpu_fraction": 0.01, "loaded": False}
    assert (
        machine_line(idle)
        == "Machine: 2 CPUs; the run took 10.0 s wall, 19.5 CPU-s; other processes used 1% of the CPUs."
    )
    busy = {**idle, "foreign_cpu_fraction": 0.48, "loaded": True}
    assert machine_line(busy).endswith(
        "used 48% of the CPUs (its wall times were measured under load: reported, not judged)."
    )
    assert machine_line(None) == "" and machine_line({"cpus": 2}) == ""


def test_bench_measures_ratios_in_one_process(tmp_path: Path, monkeypatch) -> None:
    clock = [0.0]
    monkeypatch.setattr("iclr26_shared.bench._clock", lambda: clock[0])

    def work(seconds: float):
        return lambda: clock.__setitem__(0, clock[0] + seconds)

    r = compare(work(0.5), work(2.0), repeats=3, warmup=1)
    assert r["fast"]["median_s"] == 0.5 and r["baseline"]["median_s"] == 2.0 and r["speedup"] == 4.0
    assert measure(work(1.0), repeats=2)["times_s"] == [1.0, 1.0]
    out = tmp_path / "b.json"
    code = bench_main("demo", lambda quick: {"r": compare(work(1.0), work(3.0), repeats=2)}, ["--out", str(out)])
    assert code == 0
    written = json.loads(out.read_text())
    assert written["results"]["r"]["speedup"] == 3.0
    # the JSON says whether other processes shared the CPUs during the benchmark
    assert {"cpus", "foreign_cpu_fraction", "loaded"} <= set(written["machine"])
    with pytest.raises(ValueError):
        measure(work(1.0), repeats=0)


def test_measure_times_each_call_on_the_real_clock() -> None:
    import time

    calls = [0]

    def nap() -> None:
        calls[0] += 1
        time.sleep(0.02)

    m = measure(nap, repeats=3, warmup=1)
    assert calls[0] == 4 and len(m["times_s"]) == 3 and all(0.02 <= t < 0.2 for t in m["times_s"])


def test_measure_keeps_the_torch_thread_count() -> None:
    seen = []
    before = torch.get_num_threads()
    measure(lambda: seen.append(torch.get_num_threads()), repeats=2, warmup=0)
    assert seen == [before, before]


def test_assert_close_uses_dtype_tolerances() -> None:
    a = torch.ones(3, dtype=torch.float32)
    assert_close(a + 1e-6, a)
    with pytest.raises(AssertionError):
        assert_close(a + 1e-3, a)
    with pytest.raises(AssertionError, match="shape"):
        assert_close(a, torch.ones(4))
    assert_close(torch.ones(2, dtype=torch.float16) + 1e-3, torch.ones(2, dtype=torch.float64))


def test_peak_memory_sees_a_large_allocation() -> None:
    import numpy as np

    from iclr26_shared.bench import peak_memory

    def alloc() -> float:
        a = np.ones(64 * 2**20 // 8)  # 64 MiB, touched
        return float(a.sum())

    big = peak_memory(alloc)
    small = peak_memory(lambda: sum(range(10)))
    assert big.result == 64 * 2**20 // 8 and big.cuda_peak_bytes is None
    assert big.cpu_peak_bytes > 32 * 2**20 > small.cpu_peak_bytes
    assert set(big.to_dict()) == {"seconds", "cpu_peak_mib", "cuda_peak_mib"}


def test_markdown_table_formats_numbers_and_escapes_pipes() -> None:
    from iclr26_shared.tables import markdown_table

    text = markdown_table(["method", "acc", "note"], [["ours", 0.912345, "a|b"], ["base", None, 3]])
    lines = text.splitlines()
    assert [c.strip() for c in lines[0].strip("|").split("|")] == ["method", "acc", "note"]
    assert set(lines[1]) <= {"|", "-"}
    assert lines[2].split("|")[2].strip() == "0.9123" and "a\\|b" in lines[2]
    assert lines[3].split("|")[2].strip() == "—" and lines[3].split("|")[3].strip() == "3"
    assert markdown_table(["x"], [[0.5]], floatfmt=".2f").splitlines()[2] == "| 0.50 |"
    import pytest

    with pytest.raises(ValueError, match="row 0 has 1 cells, the header 2"):
        markdown_table(["a", "b"], [["only"]])


def test_progress_bar_fits_80_columns() -> None:
    import io

    from rich.console import Console

    from iclr26_shared.progress import _FIXED_COLUMNS, ProgressBar, fit

    assert fit("abcdef", 4) == "abc…" and fit("abc", 4) == "abc" and fit("abc", 0) == ""
    buf = io.StringIO()
    console = Console(file=buf, width=80, force_terminal=True, color_system=None)
    with ProgressBar(10, "ogmm", console=console) as bar:
        assert bar._metrics_width == 80 - _FIXED_COLUMNS - len("ogmm")
        for i in range(10):
            bar.advance(loss=1.0 / (i + 1), accuracy=0.5, label="a long label " * 4)
    import re

    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buf.getvalue())
    lines = [ln for ln in text.replace("\r", "\n").splitlines() if "ogmm" in ln]
    assert lines and all(len(ln.rstrip()) <= 80 for ln in lines), max(lines, key=len)
    assert "loss=0.1" in lines[-1] and lines[-1].rstrip().endswith("…")  # cut on its own line, not wrapped
