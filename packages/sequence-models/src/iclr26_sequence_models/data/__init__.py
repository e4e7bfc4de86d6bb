"""Seeded synthetic tasks (MQAR, copying, group word problems) and the King James Bible byte corpus."""

from iclr26_sequence_models.data.bible import BibleCorpus, load_bible
from iclr26_sequence_models.data.copying import CopyTokens, copy_eval_batch, copy_train_batch
from iclr26_sequence_models.data.mqar import multiquery_ar
from iclr26_sequence_models.data.state_tracking import GROUPS, Group, make_group, word_problem

__all__ = [
    "GROUPS",
    "BibleCorpus",
    "CopyTokens",
    "Group",
    "copy_eval_batch",
    "copy_train_batch",
    "load_bible",
    "make_group",
    "multiquery_ar",
    "word_problem",
]
