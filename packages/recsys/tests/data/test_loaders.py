"""Loaders: MovieLens-100K from the recbole wheel, the file formats, binarisation, filters, bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from iclr26_recsys.data import InteractionError, binarize, filter_counts, load_interactions, load_ml100k


@pytest.fixture(scope="module")
def ml100k():
    return load_ml100k()


def test_ml100k_ships_offline(ml100k):
    assert len(ml100k) == 100_000
    assert ml100k["user"].nunique() == 943 and ml100k["item"].nunique() == 1682
    counts = ml100k["rating"].value_counts().to_dict()
    assert counts == {4.0: 34174, 3.0: 27145, 5.0: 21201, 2.0: 11370, 1.0: 6110}


def test_binarize_and_filter(ml100k):
    pos = binarize(ml100k, 4.0)
    assert len(pos) == 34174 + 21201 and set(pos["rating"]) == {1.0}
    kept = filter_counts(pos, min_user_count=5)
    assert (kept.groupby("user").size().to_numpy() >= 5).all()
    assert len(binarize(ml100k, None)) == 100_000
    with pytest.raises(InteractionError, match="no interaction has rating"):
        binarize(ml100k, 6.0)
    with pytest.raises(InteractionError, match="no interactions left"):
        filter_counts(pos, min_user_count=10_000)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("fmt", "name", "text"),
    [
        ("ml-1m", "ratings.dat", "1::10::5::978300760\n1::20::3::978302109\n2::10::4::978301968\n"),
        ("ml-20m", "ratings.csv", "userId,movieId,rating,timestamp\n1,10,5.0,1\n1,20,3.0,2\n2,10,4.0,3\n"),
        ("ml-100k-raw", "u.data", "1\t10\t5\t1\n1\t20\t3\t2\n2\t10\t4\t3\n"),
        ("msd", "train_triplets.txt", "1\t10\t5\n1\t20\t3\n2\t10\t4\n"),
        ("csv", "x.csv", "user,item,rating\n1,10,5\n1,20,3\n2,10,4\n"),
        ("netflix", "combined_data_1.txt", "10:\n1,5,2005-09-06\n2,4,2005-05-13\n20:\n1,3,2005-10-19\n"),
    ],
)
def test_formats(tmp_path, fmt, name, text):
    df = load_interactions(_write(tmp_path, name, text), fmt)
    got = sorted(zip(df["user"], df["item"], df["rating"], strict=True))
    assert got == [("1", "10", 5.0), ("1", "20", 3.0), ("2", "10", 4.0)]


def test_netflix_directory(tmp_path):
    _write(tmp_path, "combined_data_1.txt", "10:\n1,5,2005-09-06\n")
    _write(tmp_path, "combined_data_2.txt", "20:\n1,3,2005-10-19\n")
    assert len(load_interactions(tmp_path, "netflix")) == 2


def test_bad_files(tmp_path):
    path = _write(tmp_path, "ratings.dat", "1::10::5::1\n2::20\n")
    with pytest.raises(InteractionError, match=r"ratings.dat: line 2 lacks the 'rating' column"):
        load_interactions(path, "ml-1m")
    path = _write(tmp_path, "ratings.csv", "userId,rating\n1,5\n")
    with pytest.raises(InteractionError, match="lacks the 'movieId' column"):
        load_interactions(path, "ml-20m")
    path = _write(tmp_path, "bad.csv", "user,item,rating\n1,10,5\n2,11,-3\n")
    with pytest.raises(InteractionError, match="bad.csv: line 3: negative rating"):
        load_interactions(path, "csv")
    path = _write(tmp_path, "nan.csv", "user,item,rating\n1,10,abc\n")
    with pytest.raises(InteractionError, match="line 2: rating 'abc' is not a number"):
        load_interactions(path, "csv")
    path = _write(tmp_path, "nf.txt", "1,5,2005-09-06\n")
    with pytest.raises(InteractionError, match="MovieID"):
        load_interactions(path, "netflix")
    with pytest.raises(InteractionError, match="file not found"):
        load_interactions(tmp_path / "missing.dat", "ml-1m")
    with pytest.raises(InteractionError, match="unknown interaction format"):
        load_interactions(path, "yelp")
