"""Opt-in readers of the real Causal Triplet data (Liu et al., CLeaR 2023) in their published formats.

Nothing is downloaded: the folder must already hold the data. Both readers return a
:class:`~iclr26_generative_vision.data.causal_triplet.CausalTripletSet` (images ``uint8 [N, 2, S, S, 3]``
resized to ``size``, verb/noun ids and the data set's :class:`Vocabulary`), so the experiment runs on them
unchanged. Formats as ``causaltriplet/main.py`` (``set_loader``) and ``dataset.py`` (``ActionDataset``) read them:

* **ProcTHOR** (``dataset="procthor"``): ``<root>/annotations.csv`` with a header row
  ``scene,idx,figure,noun_class,verb_class,xmin,ymin,xmax,ymax``, or, when it is absent, the generator's
  per-chunk files ``<root>/proc_*/annotations.csv`` without a header (same columns). The before image is
  ``<root>/<scene>/color/<figure up to 'second'>first.png``, the after image ``<root>/<scene>/color/<figure>.png``.
  Rows with ``verb_class`` ``none`` or ``cook`` are dropped (as the code does). Antonyms: the code's
  ``action_symmetry``: (turnon, turnoff), (clean, dirty), (close, open).
* **Epic-Kitchens** (``dataset="epic-kitchens"``): the EPIC-KITCHENS-100 annotation CSVs
  ``<root>/EPIC_100_train.csv`` (and ``EPIC_100_validation.csv`` when present) with the columns
  ``participant_id, video_id, start_frame, stop_frame, verb_class, noun_class`` (and ``verb``, ``noun``);
  class names from ``EPIC_100_verb_classes.csv`` / ``EPIC_100_noun_classes.csv`` (``id, key``) when
  present, else the ``verb``/``noun`` columns. Frames: ``<root>/<participant_id>/rgb_frames/<video_id>/
  frame_<start_frame:010d>.jpg`` (before) and ``frame_<stop_frame:010d>.jpg`` (after). When the rows carry
  the benchmark's hand-object detection scores (``start_score``, ``stop_score``) only rows with both above
  0.5 are kept (``load_preprocess(thres=0.5)``). Antonyms: the same symmetry (open/close occur in EPIC).

Not reproduced: the code's per-verb rebalancing by random subsampling (``balance_stat``) and its OOD
validation split; ``max_pairs`` keeps the first rows in file order.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from iclr26_generative_vision.data.causal_triplet import CausalTripletSet, Vocabulary
from iclr26_shared.errors import DataError

__all__ = ["PROCTHOR_ANTONYMS", "PROCTHOR_COLUMNS", "read_epic_kitchens", "read_procthor", "read_real"]

#: Columns of the ProcTHOR annotation file (``causaltriplet/main.py``).
PROCTHOR_COLUMNS = ("scene", "idx", "figure", "noun_class", "verb_class", "xmin", "ymin", "xmax", "ymax")
#: ``procthor/action.py:action_symmetry``.
PROCTHOR_ANTONYMS: tuple[tuple[str, str], ...] = (("turnon", "turnoff"), ("clean", "dirty"), ("close", "open"))
_EPIC_COLUMNS = ("participant_id", "video_id", "start_frame", "stop_frame", "verb_class", "noun_class")


#: Keys added to every row read by :func:`_read_csv`: the file and the 1-based line the row came from.
_FILE, _LINE = "\x00file", "\x00line"


def _read_csv(path: Path, names: tuple[str, ...] | None = None) -> list[dict[str, str]]:
    try:
        with path.open(newline="") as fh:
            reader = csv.DictReader(fh, fieldnames=list(names) if names else None)
            rows = []
            for r in reader:
                if any(v for v in r.values() if isinstance(v, str)):
                    rows.append({**r, _FILE: str(path), _LINE: str(reader.line_num)})
            header = reader.fieldnames or []
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise DataError(f"{path}: not a readable CSV file ({err})") from err
    return rows if header else []


def _number(row: dict[str, str], column: str, kind: type[int] | type[float] = float) -> float:
    """``row[column]`` as a number; one line naming the file, line and column when it is not one."""
    value = row.get(column)
    try:
        return kind(value) if kind is int else float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        expected = "an integer" if kind is int else "a number"
        raise DataError(
            f"{row.get(_FILE, '?')}, line {row.get(_LINE, '?')}, column {column}: {value!r} is not {expected}"
        ) from None


def _require(path: Path, rows: list[dict[str, str]], columns: Iterable[str]) -> None:
    if not rows:
        raise DataError(f"{path}: no annotation rows")
    missing = [c for c in columns if c not in rows[0] or rows[0][c] is None]
    if missing:
        raise DataError(f"{path}: missing column(s) {', '.join(missing)}")


def _load_image(path: Path, size: int, box: tuple[int, int, int, int] | None) -> np.ndarray:
    import cv2

    if not path.is_file():
        raise DataError(f"{path}: image not found")
    img = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if img is None:
        raise DataError(f"{path}: not a readable image")
    if box is not None:
        x0, y0, x1, y1 = box
        img = img[max(0, y0) : max(y0 + 1, y1), max(0, x0) : max(x0 + 1, x1)]
    img = cv2.resize(img, (size, size), interpolation=cv2.INTER_AREA)
    return np.ascontiguousarray(img[..., ::-1])  # BGR -> RGB


def _assemble(
    pairs: list[tuple[Path, Path, tuple[int, int, int, int] | None]],
    verbs: list[str],
    nouns: list[str],
    antonyms: tuple[tuple[str, str], ...],
    size: int,
) -> CausalTripletSet:
    verb_names = tuple(dict.fromkeys(verbs))  # order of first appearance, as df['verb_class'].unique()
    noun_names = tuple(dict.fromkeys(nouns))
    images = np.zeros((len(pairs), 2, size, size, 3), np.uint8)
    for i, (before, after, box) in enumerate(pairs):
        images[i, 0] = _load_image(before, size, box)
        images[i, 1] = _load_image(after, size, box)
    return CausalTripletSet(
        images,
        np.array([verb_names.index(v) for v in verbs], np.int64),
        np.array([noun_names.index(n) for n in nouns], np.int64),
        Vocabulary(verb_names, noun_names, tuple((a, b) for a, b in antonyms if a in verb_names and b in verb_names)),
    )


def _folder(root: str | Path, what: str) -> Path:
    path = Path(root).expanduser()
    if not path.is_dir():
        raise DataError(f"{what} data not found: {path} is not a folder (put the data there and pass --data-dir)")
    return path


def read_procthor(root: str | Path, *, size: int, max_pairs: int | None = None, bbox: bool = False) -> CausalTripletSet:
    """Causal Triplet's ProcTHOR pairs from ``root`` (see the module docstring), resized to ``size``."""
    path = _folder(root, "ProcTHOR")
    ann = path / "annotations.csv"
    if ann.is_file():
        rows = _read_csv(ann)
        _require(ann, rows, PROCTHOR_COLUMNS)
    else:
        chunks = sorted(path.glob("proc_*/annotations.csv"))
        if not chunks:
            raise DataError(
                f"ProcTHOR data not found: no {ann} and no {path}/proc_*/annotations.csv "
                f"(columns {','.join(PROCTHOR_COLUMNS)})"
            )
        rows = []
        for chunk in chunks:
            part = _read_csv(chunk, PROCTHOR_COLUMNS)
            _require(chunk, part, PROCTHOR_COLUMNS)
            rows += part
    rows = [r for r in rows if r["verb_class"] not in ("none", "cook")][:max_pairs]
    if not rows:
        raise DataError(f"{path}: no ProcTHOR pairs left after dropping verb_class none/cook")
    pairs: list[tuple[Path, Path, tuple[int, int, int, int] | None]] = []
    for r in rows:
        color = path / r["scene"] / "color"
        box = None
        if bbox:
            box = (
                int(_number(r, "xmin")),
                int(_number(r, "ymin")),
                int(_number(r, "xmax")),
                int(_number(r, "ymax")),
            )
        pairs.append((color / (r["figure"].split("second")[0] + "first.png"), color / (r["figure"] + ".png"), box))
    verbs = [r["verb_class"] for r in rows]
    nouns = [r["noun_class"] for r in rows]
    return _assemble(pairs, verbs, nouns, PROCTHOR_ANTONYMS, size)


def _class_names(path: Path) -> dict[str, str] | None:
    if not path.is_file():
        return None
    rows = _read_csv(path)
    _require(path, rows, ("id", "key"))
    return {r["id"]: r["key"] for r in rows}


def read_epic_kitchens(root: str | Path, *, size: int, max_pairs: int | None = None) -> CausalTripletSet:
    """Epic-Kitchens before/after frames of each annotated action from ``root`` (see the module docstring)."""
    path = _folder(root, "Epic-Kitchens")
    files = [p for p in (path / "EPIC_100_train.csv", path / "EPIC_100_validation.csv") if p.is_file()]
    if not files:
        raise DataError(
            f"Epic-Kitchens data not found: no {path / 'EPIC_100_train.csv'} (the EPIC-KITCHENS-100 annotations, "
            f"columns {','.join(_EPIC_COLUMNS)})"
        )
    rows: list[dict[str, str]] = []
    for f in files:
        part = _read_csv(f)
        _require(f, part, _EPIC_COLUMNS)
        rows += part
    if "start_score" in rows[0] and "stop_score" in rows[0]:
        rows = [r for r in rows if _number(r, "start_score") > 0.5 and _number(r, "stop_score") > 0.5]
    rows = rows[:max_pairs]
    if not rows:
        raise DataError(f"{path}: no Epic-Kitchens actions left (scores above 0.5)")
    verb_keys = _class_names(path / "EPIC_100_verb_classes.csv")
    noun_keys = _class_names(path / "EPIC_100_noun_classes.csv")

    def name(r: dict[str, str], kind: str, keys: dict[str, str] | None) -> str:
        if keys is not None:
            if r[f"{kind}_class"] not in keys:
                raise DataError(f"{path}: {kind}_class {r[f'{kind}_class']} is not in EPIC_100_{kind}_classes.csv")
            return keys[r[f"{kind}_class"]]
        return r.get(kind) or r[f"{kind}_class"]

    pairs: list[tuple[Path, Path, tuple[int, int, int, int] | None]] = []
    for r in rows:
        frames = path / r["participant_id"] / "rgb_frames" / r["video_id"]
        start, stop = int(_number(r, "start_frame", int)), int(_number(r, "stop_frame", int))
        pairs.append((frames / f"frame_{start:010d}.jpg", frames / f"frame_{stop:010d}.jpg", None))
    verbs = [name(r, "verb", verb_keys) for r in rows]
    nouns = [name(r, "noun", noun_keys) for r in rows]
    return _assemble(pairs, verbs, nouns, PROCTHOR_ANTONYMS, size)


def read_real(
    dataset: str, root: str | Path, *, size: int, max_pairs: int | None = None, bbox: bool = False
) -> CausalTripletSet:
    """Dispatch on the data set's name (``procthor`` or ``epic-kitchens``)."""
    if dataset == "procthor":
        return read_procthor(root, size=size, max_pairs=max_pairs, bbox=bbox)
    if dataset == "epic-kitchens":
        return read_epic_kitchens(root, size=size, max_pairs=max_pairs)
    raise DataError(f"unknown causal triplet data set {dataset!r}: expected procthor or epic-kitchens")
