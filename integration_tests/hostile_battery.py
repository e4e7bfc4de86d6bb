"""Hostile-input battery (issue 52): every domain CLI and method, the umbrella, corrupted model folders and
the library loaders. Not a test (pytest does not collect it): run it by hand, one part or all,
``uv run python integration_tests/hostile_battery.py [loaders umbrella models cli issue maxseed]``
(``cli``: 152 quick refusals; ``maxseed``: 19 smoke runs). Each case is classified:

clean      exit 2 (or a raised iclr26 error in-process) with one non-empty line, no traceback
traceback  a Python traceback (or an exception that is not the package's own one-line error)
silent     exit 0 / no error where a refusal was expected
other      anything else (exit 1 without traceback, several lines, ...)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import typing
from collections import Counter
from dataclasses import fields
from pathlib import Path

BIN = Path(sys.executable).parent
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": "", "MUJOCO_GL": "egl"}
results: list[tuple[str, str, str]] = []


def classify_proc(name: str, cmd: list[str], cwd: str | None = None, expect_rc: int = 2) -> None:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=ENV, cwd=cwd, check=False)
    except subprocess.TimeoutExpired:
        results.append((name, "other", "timeout"))
        return
    err = [ln for ln in p.stderr.splitlines() if ln.strip()]
    if "Traceback" in p.stderr:
        kind = "traceback"
    elif p.returncode == 0:
        kind = "clean" if expect_rc == 0 else "silent"
    elif p.returncode == expect_rc and len(err) == 1:
        kind = "clean"
    else:
        kind = "other"
    detail = f"rc={p.returncode} " + (err[-1][:200] if err else "")
    results.append((name, kind, detail))
    print(f"{kind:9s} {name}: {detail}", flush=True)


def classify_call(name: str, fn: typing.Callable[[], object], own: tuple[type[BaseException], ...]) -> None:
    try:
        fn()
    except own as err:
        msg = str(err)
        kind = "clean" if msg.strip() and "\n" not in msg.strip() else "other"
        detail = f"{type(err).__name__}: {msg[:200]}"
    except Exception as err:  # noqa: BLE001
        kind, detail = "traceback", f"{type(err).__name__}: {str(err)[:200]}"
    else:
        kind, detail = "silent", "no error"
    results.append((name, kind, detail))
    print(f"{kind:9s} {name}: {detail}", flush=True)


def first_field(cfg_cls: type, want: type) -> str | None:
    hints = typing.get_type_hints(cfg_cls, include_extras=True)
    for f in fields(cfg_cls):
        t = hints[f.name]
        base = typing.get_args(t)[0] if typing.get_origin(t) is typing.Annotated else t
        if base is want and "allow" not in repr(t).lower():
            return f.name.replace("_", "-")
    return None


def domain_cli_cases(tmp: Path) -> None:
    from iclr26_shared import umbrella

    specs, _ = umbrella.discover_methods()
    for m, spec in sorted(specs.items()):
        exe = [str(BIN / f"iclr26-{spec.domain}"), m, "--preset", "smoke", "--out-dir", str(tmp / "runs")]
        cases = {
            "seed int64 max": ["--seed", "9223372036854775807", "--dry-run"],
            "seed -1": ["--seed", "-1", "--dry-run"],
            "device cuda (none here)": ["--device", "cuda", "--dry-run"],
            "out-dir ''": ["--out-dir="],
            "out-dir 300 chars": ["--out-dir", str(tmp / ("x" * 300))],
            "preset nope": ["--preset", "nope"],
        }
        ff, fi = first_field(spec.config, float), first_field(spec.config, int)
        if ff:
            cases[f"--{ff} inf"] = [f"--{ff}", "inf", "--dry-run"]
        if fi:
            cases[f"--{fi} 1e20"] = [f"--{fi}", "100000000000000000000", "--dry-run"]
        for case, extra in cases.items():
            classify_proc(f"{m} {case}", [*exe, *extra])


def umbrella_cases(tmp: Path) -> None:
    i = [str(BIN / "iclr26")]
    classify_proc("reproduce --only=,", [*i, "reproduce", "--only=,", "--out-dir", str(tmp / "rep")])
    classify_proc("reproduce --only zzz", [*i, "reproduce", "--only", "zzz", "--out-dir", str(tmp / "rep")])
    for label, plan in {
        "seeds ['x']": {"preset": "smoke", "methods": ["ogmm"], "seeds": ["x"], "device": "cpu"},
        "methods 5": {"preset": "smoke", "methods": 5, "seeds": [0], "device": "cpu"},
        "stored cuda": {"preset": "smoke", "methods": ["ogmm"], "seeds": [0], "device": "cuda"},
        "not json": None,
    }.items():
        d = tmp / f"rep-{label.replace(' ', '_').replace('[', '').replace(']', '').replace(chr(39), '')}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "report.json").write_text("{nope" if plan is None else json.dumps({"plan": plan, **plan}))
        classify_proc(f"reproduce --resume report.json {label}", [*i, "reproduce", "--resume", str(d)])
    good = tmp / "rep-good"
    good.mkdir(exist_ok=True)
    plan = {"preset": "smoke", "methods": ["deql"], "seeds": [0], "device": "cpu"}
    (good / "report.json").write_text(json.dumps({"plan": plan, **plan}))
    classify_proc(
        "reproduce --resume + contradicting --preset full --seeds 3 --only ogmm",
        [*i, "reproduce", "--resume", str(good), "--preset", "full", "--seeds", "3", "--only", "ogmm"],
    )
    empty = tmp / "empty"
    empty.mkdir(exist_ok=True)
    junk = tmp / "junk"
    junk.mkdir(exist_ok=True)
    (junk / "results.json").write_text("garbage")
    classify_proc("models on an empty folder", [*i, "models", str(empty)])
    classify_proc("models on junk", [*i, "models", str(junk)])
    classify_proc("models on a missing folder", [*i, "models", str(tmp / "nope")])
    classify_proc("bench --root /nope", [*i, "bench", "--root", "/nope"])
    classify_proc("bench --only zzz", [*i, "bench", "--only", "zzz"])
    classify_proc("run unknown method", [*i, "run", "zzz"])
    classify_proc("run deql --seed 2**63-1", [*i, "run", "deql", "--seed", "9223372036854775807", "--dry-run"])
    classify_proc("run deql --l2 5 (sweep on)", [*i, "run", "deql", "--preset", "smoke", "--l2", "5", "--dry-run"])


def model_folder_cases(tmp: Path) -> None:
    """A saved deql model from a smoke run, then corrupted copies loaded through load_model in a fresh
    process started inside the folder (so the folder's own evilmod.py would be importable from the cwd)."""
    import shutil

    base = tmp / "model-runs"
    p = subprocess.run(
        [str(BIN / "iclr26-recsys"), "deql", "--preset", "smoke", "--device", "cpu", "--quiet", "--out-dir", str(base)],
        capture_output=True,
        text=True,
        env=ENV,
        check=False,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    run = next((base / "deql").iterdir())
    marker = tmp / "PAYLOAD_RAN"

    def variant(label: str, mutate: typing.Callable[[Path], object]) -> None:
        d = tmp / f"mf-{len(results)}"
        shutil.copytree(run, d)
        mutate(d / "models" / "deql")
        code = "import sys; from iclr26_shared.models import load_model; load_model('.')"
        wrapper = (
            "import sys\nfrom iclr26_shared.errors import Iclr26Error\n"
            f"try:\n    exec({code!r})\nexcept Iclr26Error as e:\n    print(e, file=sys.stderr); sys.exit(2)\n"
        )
        classify_proc(f"load_model: {label}", [sys.executable, "-c", wrapper], cwd=str(d))
        classify_proc(f"iclr26 models: {label}", [str(BIN / "iclr26"), "models", str(d)], expect_rc=2)
        if marker.exists():
            results.append((f"payload: {label}", "silent", "PAYLOAD RAN"))
            marker.unlink()

    def meta(cls: str) -> typing.Callable[[Path], None]:
        def f(m: Path) -> None:
            j = json.loads((m / "iclr26_model.json").read_text())
            j["class"] = cls
            (m / "iclr26_model.json").write_text(json.dumps(j))
            (m.parents[2] / "evilmod.py").write_text(
                f"open({str(marker)!r}, 'w').write('x')\n"
                "class Net:\n    from_pretrained = classmethod(lambda c, p: c())\n"
            )

        return f

    def weights(blob: bytes | None) -> typing.Callable[[Path], None]:
        def f(m: Path) -> None:
            for w in m.glob("*.safetensors"):
                if blob is None:
                    w.unlink()
                elif blob == b"TRUNC":
                    w.write_bytes(w.read_bytes()[: w.stat().st_size // 2])
                else:
                    w.write_bytes(blob)

        return f

    import pickle

    variant("evilmod:Net with evilmod.py in the folder", meta("evilmod:Net"))
    variant("class os:system", meta("os:system"))
    variant("class not a path", meta("garbage"))
    variant("truncated safetensors", weights(b"TRUNC"))
    variant("pickle named model.safetensors", weights(pickle.dumps({"a": 1})))
    variant("missing weights", weights(None))
    variant("config.json not JSON", lambda m: (m / "config.json").write_text("{nope"))
    variant("iclr26_model.json not JSON", lambda m: (m / "iclr26_model.json").write_text("{nope"))


def loader_cases(tmp: Path) -> None:
    import gzip

    from iclr26_shared.errors import Iclr26Error

    junk = tmp / "junk.bin"
    junk.write_bytes(b"not a file of any format\x00\x01")
    from iclr26_shared.data import read_idx

    bad_gz = tmp / "x-idx1-ubyte.gz"
    good = gzip.compress(b"\x00\x00\x08\x01" + (3).to_bytes(4, "big") + b"abc")
    bad_gz.write_bytes(good[:12] + b"\xff\xff\xff\xff" + good[16:])
    classify_call("read_idx corrupt gzip", lambda: read_idx(bad_gz), (Iclr26Error,))
    classify_call("read_idx junk", lambda: read_idx(junk), (Iclr26Error,))
    from iclr26_science.fmri.networks import read_network_map

    npz = tmp / "junk.npz"
    npz.write_bytes(b"junk")
    npy = tmp / "arr.npy"
    import numpy as np

    np.save(npy, np.zeros(3))
    classify_call("read_network_map junk .npz", lambda: read_network_map(npz), (Iclr26Error, ValueError))
    classify_call("read_network_map .npy", lambda: read_network_map(npy), (Iclr26Error, ValueError))
    from iclr26_science.cryoem.structures import load_structure

    pdb = tmp / "empty.pdb"
    pdb.write_text("")
    classify_call("load_structure empty .pdb", lambda: load_structure(pdb), (Iclr26Error, ValueError))
    from iclr26_science.crystals.structures import cif_to_input

    cif = tmp / "neg.cif"
    cif.write_text(
        "data_x\n_cell_length_a -4.0\n_cell_length_b 4.0\n_cell_length_c 4.0\n_cell_angle_alpha 90\n"
        "_cell_angle_beta 90\n_cell_angle_gamma 90\n_symmetry_space_group_name_H-M 'P 1'\nloop_\n"
        "_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\n"
        "Na1 Na 0 0 0\n"
    )
    classify_call("cif_to_input negative cell length", lambda: cif_to_input(cif), (Iclr26Error, ValueError))
    classify_call("cif_to_input junk", lambda: cif_to_input(junk), (Iclr26Error, ValueError))


def issue_cases(tmp: Path) -> None:
    """The exact cases issue 52 lists."""
    i = [str(BIN / "iclr26"), "run"]
    out = ["--out-dir", str(tmp / "issue"), "--device", "cpu", "--quiet"]
    for m, extra in [
        ("dupa", ["--lr", "inf"]),
        ("ego-foresight", ["--lr", "inf"]),
        ("selective-rope", ["--grad-clip", "inf"]),
        ("selective-rope", ["--mqar.lr", "inf"]),
        ("deql", ["--l2", "inf", "--no-sweep"]),
        ("deql", ["--l2", "inf"]),
        ("fedopenmatch", ["--lr", "inf"]),
        ("cryolvm", ["--pretrain-lr", "inf"]),
        ("fgl", ["--hidden", str(10**20)]),
        ("richness", ["--out-dir="]),
    ]:
        classify_proc(f"{m} {' '.join(extra)}", [*i, m, "--preset", "smoke", *out, *extra])
    for m in ("s2-guidance", "fedopenmatch", "ego-foresight"):  # the largest allowed seed runs (exit 0 expected)
        classify_proc(
            f"{m} --seed 4294967295 (allowed: must run)",
            [*i, m, "--preset", "smoke", *out, "--seed", "4294967295"],
            expect_rc=0,
        )


def maxseed_cases(tmp: Path) -> None:
    """The largest seed --help allows, 2**32 - 1, runs every method's smoke preset (exit 0 expected)."""
    from iclr26_shared import umbrella

    specs, _ = umbrella.discover_methods()
    for m in sorted(specs):
        cmd = [str(BIN / "iclr26"), "run", m, "--preset", "smoke", "--device", "cpu", "--quiet"]
        classify_proc(
            f"{m} --seed 4294967295 runs", [*cmd, "--out-dir", str(tmp / "max"), "--seed", "4294967295"], expect_rc=0
        )


if __name__ == "__main__":
    parts = sys.argv[1:] or ["loaders", "umbrella", "models", "cli"]
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        for part in parts:
            {
                "cli": domain_cli_cases,
                "umbrella": umbrella_cases,
                "models": model_folder_cases,
                "loaders": loader_cases,
                "issue": issue_cases,
                "maxseed": maxseed_cases,
            }[part](tmp)
    print("COUNTS", dict(Counter(k for _, k, _ in results)), "of", len(results))
