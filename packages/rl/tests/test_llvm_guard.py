"""The segfault of rendering with Mesa (EGL) before a torch optimizer, guarded by ``import iclr26_rl``.

Each case runs in a fresh interpreter: the order in which the two LLVMs are loaded is the whole bug.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

THREE_LINES = """
import gymnasium as gym, torch
env = gym.make("Reacher-v5", render_mode="rgb_array"); env.reset(seed=0); frame = env.render()
torch.optim.Adam(torch.nn.Linear(2, 2).parameters())
print("ok", frame.shape)
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MUJOCO_GL": "egl"}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)


def _triton_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("triton") is not None


def test_rendering_then_an_optimizer_runs_after_import_iclr26_rl() -> None:
    guarded = _run("import iclr26_rl\n" + THREE_LINES)
    assert guarded.returncode == 0, guarded.stderr[-2000:]
    assert "ok (480, 480, 3)" in guarded.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux") or not _triton_installed(), reason="needs Linux + triton")
def test_the_guard_is_what_prevents_the_crash() -> None:
    # without the import the same three lines crash where Mesa's llvmpipe serves EGL (this machine);
    # with a hardware GL driver there is no llvmpipe LLVM and nothing to prevent
    bare = _run(THREE_LINES)
    mesa = _run(
        "import gymnasium as gym\n"
        "e = gym.make('Reacher-v5', render_mode='rgb_array'); e.reset(seed=0); e.render()\n"
        "print(any('/libLLVM' in l for l in open('/proc/self/maps')))"
    )
    if "True" not in mesa.stdout:
        pytest.skip("no llvmpipe LLVM in this process: the crash cannot happen here")
    assert bare.returncode == -11, (bare.returncode, bare.stderr[-500:])  # SIGSEGV
    # too late: a context made before the import gets a one-line warning instead of a silent crash later
    late = _run(
        "import warnings, gymnasium as gym\n"
        "e = gym.make('Reacher-v5', render_mode='rgb_array'); e.reset(seed=0); e.render()\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    import iclr26_rl\n"
        "print([str(x.message) for x in w])"
    )
    assert late.returncode == 0, late.stderr[-500:]
    assert "was loaded (an OpenGL context exists) before triton" in late.stdout


def test_import_iclr26_rl_imports_neither_torch_nor_triton() -> None:
    out = _run("import sys, iclr26_rl; print('torch' in sys.modules, 'triton' in sys.modules)")
    assert out.returncode == 0 and out.stdout.split() == ["False", "False"], out.stderr[-500:]
