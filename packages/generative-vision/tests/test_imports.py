"""The package, its CLI's --help and the method spec import no torch (``iclr26 list`` stays fast)."""

from __future__ import annotations

import subprocess
import sys


def test_cli_help_imports_no_torch() -> None:
    code = (
        "import sys, contextlib, io\n"
        "import iclr26_generative_vision, iclr26_generative_vision.cli as c\n"
        "from iclr26_generative_vision.methods.s2_guidance import SPEC\n"
        "from iclr26_generative_vision.methods.dupa import SPEC as DUPA_SPEC\n"
        "from iclr26_generative_vision.methods.elvis import SPEC as ELVIS_SPEC\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        c.main(['s2-guidance', '--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "    for name in ('dupa', 'elvis'):\n"
        "        try:\n"
        "            c.main([name, '--help'])\n"
        "        except SystemExit:\n"
        "            pass\n"
        "assert DUPA_SPEC.name == 'dupa' and not DUPA_SPEC.resources.exclusive\n"
        "assert ELVIS_SPEC.name == 'elvis' and ELVIS_SPEC.resources.exclusive\n"
        "assert SPEC.name == 's2-guidance' and not SPEC.resources.exclusive\n"
        "print(sorted(m for m in ('torch', 'diffusers', 'numpy', 'cv2', 'skimage') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "torch" not in out and "diffusers" not in out and "cv2" not in out, out
