"""Load triton's LLVM before Mesa's, so that frames rendered under EGL and a torch optimizer can coexist.

The crash this prevents (Linux, Mesa's llvmpipe, torch with triton): create any OpenGL context first
(``gym.make("Reacher-v5", render_mode="rgb_array")`` + ``render()`` under ``MUJOCO_GL=egl``, or a
``mujoco.Renderer``), then build any ``torch.optim`` optimizer: SIGSEGV, exit 139, no traceback. Mesa's EGL
loads its driver ``swrast_dri.so``, which brings the system ``libLLVM-15.so.1`` into the process's *global*
symbol scope. The first optimizer imports ``torch._dynamo``, which imports triton, whose extension
``triton/_C/libtriton.so`` links its own LLVM statically but exports it (23,851 dynamic ``llvm::`` symbols in
triton 3.9.0, no ``-Bsymbolic``). The dynamic linker therefore binds libtriton's references to those symbols
to the copies already in the global scope, and libtriton's static initialisers (``cl::opt`` registrations,
``_GLOBAL__sub_I_BitcodeWriter.cpp`` first) call LLVM 15's ``llvm::cl::Option::addArgument()`` on objects of
triton's LLVM: a crash in ``llvm::StringMapImpl::LookupBucketFor``. Loaded in the other order it works:
Python loads extensions ``RTLD_LOCAL``, so libtriton's symbols never enter the global scope, and Debian's
libLLVM binds its own calls to itself.

:func:`preload_triton` dlopens ``libtriton.so`` ``RTLD_LOCAL`` (about 0.1 s, no torch or triton import), so
a later ``import triton`` finds it loaded. ``import iclr26_rl`` calls it; it is a no-op off Linux, without
triton, when triton is already loaded, and, with a warning, when an LLVM is already mapped (too late: a
context was made before ``import iclr26_rl``).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import warnings
from pathlib import Path

__all__ = ["preload_triton"]

_done = False


def _libtriton() -> Path | None:
    try:
        spec = importlib.util.find_spec("triton")  # finds the package without importing it
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        lib = Path(folder) / "_C" / "libtriton.so"
        if lib.is_file():
            return lib
    return None


def _mapped_llvm(maps: str) -> str | None:
    for line in maps.splitlines():
        name = line.rsplit(" ", 1)[-1]
        if "/libLLVM" in name:
            return name
    return None


def preload_triton() -> None:
    """Load triton's ``libtriton.so`` now (``RTLD_LOCAL``), before any OpenGL context loads Mesa's LLVM."""
    global _done
    if _done or not sys.platform.startswith("linux") or "triton" in sys.modules:
        return
    _done = True
    lib = _libtriton()
    if lib is None:
        return
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return
    if str(lib) in maps:
        return
    llvm = _mapped_llvm(maps)
    if llvm is not None:
        warnings.warn(
            f"iclr26_rl: {llvm} was loaded (an OpenGL context exists) before triton; the first torch.optim "
            "optimizer will now segfault: import iclr26_rl before rendering (see the rl README)",
            RuntimeWarning,
            stacklevel=3,
        )
        return
    import ctypes

    try:
        ctypes.CDLL(str(lib), mode=os.RTLD_LOCAL | os.RTLD_NOW)
    except OSError:  # an unusable triton build: torch will report it when it imports triton
        pass
