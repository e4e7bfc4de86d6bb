"""`iclr26 reproduce --preset NAME` beyond smoke/quick/full: a preset only some methods define (issue 53's
``long`` of selective-rope) runs when every selected method defines it, and is one line otherwise."""

import dataclasses
import json
from pathlib import Path

import pytest

from iclr26_shared.errors import UsageError
from iclr26_shared.reproduce import reproduce
from iclr26_shared.testing import TOY_SPEC

# "long" here is the smoke config under another name: only the name matters to the umbrella
LONG_TOY = dataclasses.replace(TOY_SPEC, presets={**TOY_SPEC.presets, "long": TOY_SPEC.presets["smoke"]})
PLAIN = dataclasses.replace(TOY_SPEC, name="toy-plain")
SPECS = {"toy-ridge": LONG_TOY, "toy-plain": PLAIN}


def test_method_preset_runs_and_resumes(tmp_path: Path) -> None:
    report, outcomes = reproduce(SPECS, preset="long", only=["toy-ridge"], out_dir=tmp_path, device="cpu")
    assert [(o.method, o.ok) for o in outcomes] == [("toy-ridge", True)]
    stored = json.loads((report.parent / "report.json").read_text())
    assert stored["preset"] == "long" and stored["methods"] == ["toy-ridge"]
    assert "Preset `long`" in report.read_text()
    _, again = reproduce(SPECS, resume=report.parent)  # the stored non-standard preset resumes
    assert [(o.method, o.ok) for o in again] == [("toy-ridge", True)]


@pytest.mark.parametrize(
    ("preset", "only", "message"),
    [
        ("long", None, "preset 'long' is defined only by toy-ridge, not by toy-plain: select with --only toy-ridge"),
        ("long", ["toy-plain"], "not by toy-plain"),
        ("paper", None, "unknown preset 'paper' (choose from smoke, quick, full, or one a method defines)"),
    ],
)
def test_preset_missing_from_a_selected_method_is_one_line(
    tmp_path: Path, preset: str, only: list[str] | None, message: str
) -> None:
    with pytest.raises(UsageError) as err:
        reproduce(SPECS, preset=preset, only=only, out_dir=tmp_path, device="cpu")
    assert message in str(err.value) and "\n" not in str(err.value)
    assert not list(tmp_path.iterdir())  # refused before any folder is made
