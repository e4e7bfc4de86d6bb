"""The README code blocks are tests (pytest-markdown-docs, ``--markdown-docs`` in the root pytest config):
every ```python block in README.md, shared/README.md and packages/*/README.md runs. A block left out is
fenced ```python notest <reason> (a GPU, a large download): this test checks that each gives its reason."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READMES = [ROOT / "README.md", ROOT / "shared" / "README.md", *sorted((ROOT / "packages").glob("*/README.md"))]
_FENCE = re.compile(r"^```(?:python|py)\b(.*)$", re.M)


def _fences() -> list[tuple[str, int, str]]:
    out = []
    for path in READMES:
        text = path.read_text()
        for m in _FENCE.finditer(text):
            out.append((str(path.relative_to(ROOT)), text.count("\n", 0, m.start()) + 1, m.group(1).strip()))
    return out


def test_every_skipped_block_says_why() -> None:
    fences = _fences()
    assert len(fences) >= 10
    bad = [f"{p}:{ln}" for p, ln, info in fences if info.split()[:1] == ["notest"] and len(info.split()) < 3]
    assert not bad, f"```python notest needs a reason after it (e.g. 'notest needs CUDA'): {bad}"


def test_the_readme_blocks_are_collected_by_the_root_config() -> None:
    config = (ROOT / "pyproject.toml").read_text()
    assert '"--markdown-docs"' in config and '"packages/*/README.md"' in config
