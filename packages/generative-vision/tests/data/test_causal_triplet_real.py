"""Opt-in readers of the real Causal Triplet data in their published formats, on tiny fixture folders the
tests write (ProcTHOR: annotations.csv + <scene>/color/*first.png, *second.png; Epic-Kitchens: the
EPIC_100 CSVs + <participant>/rgb_frames/<video>/frame_*.jpg): images, labels, vocabulary, box crops,
the experiment end to end, and one clear error line when the folder or a file is absent."""

from __future__ import annotations

import csv
from pathlib import Path

import cv2
import numpy as np
import pytest

from iclr26_generative_vision import cli
from iclr26_generative_vision.data.causal_triplet import make_split
from iclr26_generative_vision.data.causal_triplet_real import (
    PROCTHOR_COLUMNS,
    read_epic_kitchens,
    read_procthor,
    read_real,
)
from iclr26_shared.errors import DataError
from iclr26_shared.testing import assert_valid_run_dir, run_cli

_PROCTHOR_PAIRS = [  # (verb, noun) as ProcTHOR's generator names them; antonyms on every noun they apply to
    *[(v, n) for n in ("Fridge", "Cabinet", "Microwave", "Drawer") for v in ("open", "close")],
    *[(v, n) for n in ("Laptop", "Television", "Microwave", "Toaster") for v in ("turnon", "turnoff")],
    *[(v, n) for n in ("Mug", "Bowl", "Pan") for v in ("clean", "dirty")],
    ("cook", "Egg"),  # dropped by the reader, as the code does
]


def _read(path: Path) -> np.ndarray:
    img = cv2.imread(str(path))
    assert img is not None, path
    return img[..., ::-1]


def _image(rng: np.random.Generator, h: int = 40, w: int = 48) -> np.ndarray:
    return (rng.random((h, w, 3)) * 255).astype(np.uint8)


def _procthor(root: Path, repeats: int = 3, header: bool = True) -> list[tuple[str, str]]:
    rng = np.random.default_rng(0)
    rows, labels = [], []
    for k in range(repeats):
        for i, (verb, noun) in enumerate(_PROCTHOR_PAIRS):
            scene, fig = f"train_{k}", f"{noun}_{i}_second"
            color = root / scene / "color"
            color.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(color / f"{noun}_{i}_first.png"), _image(rng))
            cv2.imwrite(str(color / f"{fig}.png"), _image(rng))
            rows.append([scene, i, fig, noun, verb, 4, 6, 36, 30])
            if verb != "cook":
                labels.append((verb, noun))
    if header:
        with (root / "annotations.csv").open("w", newline="") as fh:
            csv.writer(fh).writerows([list(PROCTHOR_COLUMNS), *rows])
    else:  # the generator's per-chunk files, no header
        (root / "proc_0").mkdir()
        with (root / "proc_0" / "annotations.csv").open("w", newline="") as fh:
            csv.writer(fh).writerows(rows)
    return labels


def test_procthor_reader_reads_pairs_labels_and_boxes(tmp_path: Path) -> None:
    labels = _procthor(tmp_path)
    data = read_procthor(tmp_path, size=16)
    assert data.images.shape == (len(labels), 2, 16, 16, 3) and data.images.dtype == np.uint8
    names = [(data.vocab.verbs[v], data.vocab.nouns[n]) for v, n in zip(data.verbs, data.nouns, strict=True)]
    assert names == labels and "cook" not in data.vocab.verbs
    assert data.vocab.verbs[:2] == ("open", "close")  # order of first appearance
    assert data.vocab.antonym(data.vocab.verbs.index("turnon")) == data.vocab.verbs.index("turnoff")
    # the after image of the first row is <scene>/color/<figure>.png, resized, RGB
    after = _read(tmp_path / "train_0" / "color" / "Fridge_0_second.png")
    np.testing.assert_array_equal(data.images[0, 1], cv2.resize(after, (16, 16), interpolation=cv2.INTER_AREA))
    boxed = read_procthor(tmp_path, size=16, bbox=True, max_pairs=5)  # crop to xmin..xmax, ymin..ymax first
    crop = np.ascontiguousarray(after[6:30, 4:36])
    np.testing.assert_array_equal(boxed.images[0, 1], cv2.resize(crop, (16, 16), interpolation=cv2.INTER_AREA))
    assert len(boxed) == 5


def test_procthor_chunk_files_without_header_and_the_splits(tmp_path: Path) -> None:
    _procthor(tmp_path, header=False)
    data = read_procthor(tmp_path, size=8)
    assert len(data) == 3 * (len(_PROCTHOR_PAIRS) - 1)
    comp = make_split("comp", data.verbs, data.nouns, ood_fraction=0.3, iid_test_fraction=0.2, seed=0, vocab=data.vocab)
    held = [(int(v), int(n)) for v, n in comp.held_out]  # pyright: ignore[reportGeneralTypeIssues]
    assert held
    for v, n in held:  # every held-out pair's antonym on the same noun stays IID (the code's rule)
        ant = data.vocab.antonym(v)
        assert ant is not None
        iid = set(zip(data.verbs[comp.train].tolist(), data.nouns[comp.train].tolist(), strict=True))
        assert (ant, n) in iid and (v, n) not in iid
    assert all("-" in h for h in comp.describe()["held_out"])


def _epic(root: Path, with_classes: bool = True) -> list[tuple[str, str]]:
    rng = np.random.default_rng(1)
    verbs, nouns = ["open", "close", "take", "put"], ["fridge", "drawer", "cup"]
    header = ["narration_id", "participant_id", "video_id", "start_frame", "stop_frame", "verb", "verb_class"]
    header += ["noun", "noun_class", "start_score", "stop_score"]
    rows, labels = [], []
    for i in range(12):
        v, n = i % 4, i % 3
        frames = root / "P01" / "rgb_frames" / "P01_01"
        frames.mkdir(parents=True, exist_ok=True)
        start, stop = 100 * i + 1, 100 * i + 50
        cv2.imwrite(str(frames / f"frame_{start:010d}.jpg"), _image(rng))
        cv2.imwrite(str(frames / f"frame_{stop:010d}.jpg"), _image(rng))
        score = 0.2 if i == 11 else 0.9  # the last action's hands are not detected: dropped
        rows.append(
            [f"P01_01_{i}", "P01", "P01_01", start, stop, f"{verbs[v]}-ing", v, f"the {nouns[n]}", n, score, score]
        )
        if i != 11:
            labels.append((verbs[v], nouns[n]) if with_classes else (f"{verbs[v]}-ing", f"the {nouns[n]}"))
    with (root / "EPIC_100_train.csv").open("w", newline="") as fh:
        csv.writer(fh).writerows([header, *rows])
    if with_classes:
        for kind, names in (("verb", verbs), ("noun", nouns)):
            with (root / f"EPIC_100_{kind}_classes.csv").open("w", newline="") as fh:
                csv.writer(fh).writerows(
                    [["id", "key", "instances", "category"], *[[i, k, "[]", "x"] for i, k in enumerate(names)]]
                )
    return labels


@pytest.mark.parametrize("with_classes", [True, False])
def test_epic_kitchens_reader(tmp_path: Path, with_classes: bool) -> None:
    labels = _epic(tmp_path, with_classes)
    data = read_epic_kitchens(tmp_path, size=12)
    assert data.images.shape == (11, 2, 12, 12, 3)
    assert [(data.vocab.verbs[v], data.vocab.nouns[n]) for v, n in zip(data.verbs, data.nouns, strict=True)] == labels
    first = _read(tmp_path / "P01" / "rgb_frames" / "P01_01" / "frame_0000000001.jpg")
    np.testing.assert_array_equal(data.images[0, 0], cv2.resize(first, (12, 12), interpolation=cv2.INTER_AREA))
    assert data.vocab.antonym_ids() == ([(1, 0)] if with_classes else [])  # (close, open) when named as keys


def test_missing_data_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="ProcTHOR data not found: .* is not a folder"):
        read_real("procthor", tmp_path / "nope", size=8)
    with pytest.raises(DataError, match="no .*annotations.csv"):
        read_procthor(tmp_path, size=8)
    with pytest.raises(DataError, match="Epic-Kitchens data not found: no .*EPIC_100_train.csv"):
        read_epic_kitchens(tmp_path, size=8)
    _procthor(tmp_path)
    (tmp_path / "train_0" / "color" / "Fridge_0_first.png").unlink()
    with pytest.raises(DataError, match="Fridge_0_first.png: image not found"):
        read_procthor(tmp_path, size=8)
    (tmp_path / "annotations.csv").write_text("scene,figure\nx,y\n")
    with pytest.raises(DataError, match="missing column"):
        read_procthor(tmp_path, size=8)


def test_experiment_runs_on_procthor_data_and_a_missing_folder_exits_2(tmp_path: Path) -> None:
    _procthor(tmp_path / "thor", repeats=4)
    argv = ["causal-delta", "--preset", "smoke", "--device", "cpu", "--out-dir", str(tmp_path / "runs"), "--quiet"]
    argv += ["--dataset", "procthor", "--num-pairs", "40", "--variants", "vanilla", "cde", "sms"]
    res = run_cli(cli.main, [*argv, "--data-dir", str(tmp_path / "thor")])
    assert res.code == 0, res.err
    (run_dir,) = (tmp_path / "runs" / "causal-delta").iterdir()
    results = assert_valid_run_dir(run_dir)
    assert results["dataset"] == "procthor" and results["pool"]["pairs"] == 40
    assert "turnon" in results["verbs"] and set(results["accuracy"]) == {"comp", "noun"}
    bad = run_cli(cli.main, [*argv, "--data-dir", str(tmp_path / "absent")])
    assert bad.code == 2 and "ProcTHOR data not found" in bad.err and "Traceback" not in bad.err
    assert len(bad.err.strip().splitlines()) == 1


def _corrupt(path: Path, line: int, column: str, value: str) -> None:
    """Set ``column`` of the data row on 1-based file line ``line`` (line 1: the header) to ``value``."""
    rows = list(csv.reader(path.open(newline="")))
    rows[line - 1][rows[0].index(column)] = value
    with path.open("w", newline="") as fh:
        csv.writer(fh).writerows(rows)


def test_an_unparsable_number_names_the_file_line_and_column(tmp_path: Path) -> None:
    _procthor(tmp_path / "thor")
    ann = tmp_path / "thor" / "annotations.csv"
    _corrupt(ann, 3, "xmax", "3O")
    with pytest.raises(DataError) as err:
        read_procthor(tmp_path / "thor", size=8, bbox=True)
    assert str(err.value) == f"{ann}, line 3, column xmax: '3O' is not a number"
    _epic(tmp_path / "epic")
    train = tmp_path / "epic" / "EPIC_100_train.csv"
    _corrupt(train, 5, "start_frame", "12.5")
    with pytest.raises(DataError, match=r"EPIC_100_train\.csv, line 5, column start_frame: '12\.5' is not an integer$"):
        read_epic_kitchens(tmp_path / "epic", size=8)
    _corrupt(train, 5, "start_frame", "401")
    _corrupt(train, 2, "stop_score", "high")
    with pytest.raises(DataError, match=r"line 2, column stop_score: 'high' is not a number$"):
        read_epic_kitchens(tmp_path / "epic", size=8)
