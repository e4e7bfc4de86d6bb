"""Tasks with automatic checkers.

:class:`ArithmeticTask` draws ``chain_sum`` problems (``a ± b ± c``, GSM-style templated arithmetic) with
reasoning-gym's seeded generator and grades answers as the data set's own ``score_answer`` does (both
re-derived here and pinned to reasoning-gym 0.1.25's output: :func:`chain_sum_entry`, which says why it is
not a dependency). Prompts
come in two styles: ``"compact"`` (``"3+4-2="``, for the character-level tiny model) and ``"chat"`` (the
reasoning-gym question plus an instruction to end with ``Answer: <number>``, for instruct LMs). Three
splits are disjoint in their expressions: ``pretrain`` (labelled: only used to pre-train the tiny base
model to partial competence), ``train`` (its labels are never read by the label-free methods) and ``test``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "ArithmeticTask",
    "NumberWordsTask",
    "Problem",
    "SceneItem",
    "SceneTask",
    "TextItem",
    "WordsItem",
    "best_chrf",
    "chrf",
    "extract_answer",
    "number_to_words",
    "scene_sentences",
]

PromptStyle = Literal["compact", "chat"]
CHAT_INSTRUCTION = "Reply with the number only, as 'Answer: <number>'."
_INT = re.compile(r"-?\d+")
_TAGGED = re.compile(r"(?:answer\s*(?:is)?\s*[:=]?|\\boxed\{)\s*(-?\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class Problem:
    """One prompt with its reasoning-gym entry (the entry's answer is read only by graders)."""

    prompt: str
    entry: dict[str, Any]

    @property
    def answer(self) -> str:
        """The gold answer (for supervised pre-training, gold-reward GRPO and evaluation only)."""
        return str(self.entry["answer"])


def extract_answer(text: str, style: PromptStyle) -> str | None:
    """The final answer of a completion, canonicalised (``"07"`` → ``"7"``), or None when none parses.

    ``compact``: the whole completion must be an integer. ``chat``: the last ``Answer: n`` / ``answer is n``
    / ``\\boxed{n}``, else the last integer in the text.
    """
    text = text.strip()
    if style == "compact":
        return str(int(text)) if _INT.fullmatch(text) else None
    tagged = _TAGGED.findall(text)
    if tagged:
        return str(int(tagged[-1]))
    nums = _INT.findall(text)
    return str(int(nums[-1])) if nums else None


CHAIN_SUM_QUESTION = "State the final answer to the following arithmetic problem: {expression} ="


def chain_sum_entry(
    seed: int, idx: int, *, min_terms: int, max_terms: int, min_digits: int, max_digits: int
) -> dict[str, Any]:
    """Problem ``idx`` of reasoning-gym's ``chain_sum`` data set (0.1.25) with base ``seed``, re-derived.

    reasoning-gym itself cannot be a dependency: it requires ``pycosat`` (a C extension published only as
    a source distribution) and two other sdist-only packages, so installing it needs a compiler. Its
    generator is reproduced call for call (pinned against problems reasoning-gym 0.1.25 drew, in the
    tests): ``rng = random.Random(seed + idx)``; ``n = rng.randint(min_terms, max_terms)``;
    ``d = rng.randint(min_digits, max_digits)``; ``n`` constants ``rng.randint(lo, 10**d - 1)`` with
    ``lo = 0`` for ``d = 1`` else ``10**(d-1)``; ``n - 1`` operators ``rng.choice(["+", "-"])``; the
    expression is evaluated left to right. Returns ``{"question", "answer", "metadata": {"expression",
    "num_terms", "num_digits", "source_index"}}`` as reasoning-gym does.
    """
    import random

    rng = random.Random(seed + idx)
    num_terms = rng.randint(min_terms, max_terms)
    num_digits = rng.randint(min_digits, max_digits)
    lo = 0 if num_digits == 1 else 10 ** (num_digits - 1)
    constants = [rng.randint(lo, 10**num_digits - 1) for _ in range(num_terms)]
    operators = [rng.choice(["+", "-"]) for _ in range(num_terms - 1)]
    result, parts = constants[0], [str(constants[0])]
    for op, c in zip(operators, constants[1:], strict=True):
        parts += [op, str(c)]
        result = result + c if op == "+" else result - c
    expression = " ".join(parts)
    return {
        "question": CHAIN_SUM_QUESTION.format(expression=expression),
        "answer": str(result),
        "metadata": {
            "source_dataset": "chain_sum",
            "source_index": idx,
            "num_terms": num_terms,
            "num_digits": num_digits,
            "expression": expression,
        },
    }


def exact_decimal_match(answer: str | None, gold: str) -> bool:
    """reasoning-gym's ``compute_decimal_reward`` == 1: ``Decimal`` equality after removing commas (so sign,
    leading zeros and trailing decimals are tolerated: ``"+01,000.00"`` equals ``"1000"``)."""
    from decimal import Decimal, InvalidOperation

    if not answer:
        return False
    try:
        return Decimal(answer.replace(",", "")) == Decimal(gold.replace(",", ""))
    except InvalidOperation:
        return False


class ArithmeticTask:
    """``chain_sum`` problems with ``terms`` terms of ``digits`` digits, split three ways by expression."""

    ALPHABET = "0123456789+-="

    def __init__(
        self,
        *,
        terms: int,
        digits: int,
        sizes: dict[str, int],
        seed: int,
        style: PromptStyle = "compact",
    ) -> None:
        self.style: PromptStyle = style
        self.terms, self.digits = terms, digits
        total = sum(sizes.values())
        space = (10**digits) ** terms * 2 ** (terms - 1)
        if total > space // 2:
            raise ValueError(f"ArithmeticTask: {total} problems requested but only ~{space} distinct ones exist")
        seen: set[str] = set()
        entries: list[dict[str, Any]] = []
        for idx in range(4 * total):
            e = chain_sum_entry(seed, idx, min_terms=terms, max_terms=terms, min_digits=digits, max_digits=digits)
            expr = e["metadata"]["expression"]
            if expr not in seen:
                seen.add(expr)
                entries.append(e)
            if len(entries) == total:
                break
        if len(entries) < total:
            raise ValueError(f"ArithmeticTask: only {len(entries)} distinct problems found, {total} requested")
        self.splits: dict[str, list[Problem]] = {}
        start = 0
        for name, size in sizes.items():
            self.splits[name] = [Problem(self._prompt(e), e) for e in entries[start : start + size]]
            start += size
        lo, hi = self.answer_range
        self.chance = 1.0 / (hi - lo + 1)

    @property
    def answer_range(self) -> tuple[int, int]:
        """Smallest and largest possible answer (1-digit terms: the first term is non-negative)."""
        top = 10**self.digits - 1
        return -(self.terms - 1) * top, self.terms * top

    def _prompt(self, entry: dict[str, Any]) -> str:
        expr = str(entry["metadata"]["expression"])
        if self.style == "compact":
            return expr.replace(" ", "") + "="
        return f"{entry['question']}\n{CHAT_INSTRUCTION}"

    def extract(self, text: str) -> str | None:
        """:func:`extract_answer` in this task's prompt style."""
        return extract_answer(text, self.style)

    def score(self, answer: str | None, problem: Problem) -> float:
        """Exact-match grade: 1.0 when reasoning-gym's ``score_answer`` would call the answer numerically equal
        to the gold one (:func:`exact_decimal_match`), else 0.0 (wrong or missing).

        reasoning-gym's ``chain_sum`` grader also gives *partial credit* ``len(gold) / len(answer)`` to a wrong
        answer that contains the gold digits (gold ``3``: ``13``, ``-3`` and ``30`` each score 0.5). That is
        not the exact-answer accuracy the papers report (pass@1 on verifiable answers), and as an RL reward
        it pays wrong answers, so it is dropped here."""
        return 1.0 if exact_decimal_match(answer, problem.answer) else 0.0

    def target(self, problem: Problem) -> str:
        """The supervised completion of a pre-training example."""
        return problem.answer if self.style == "compact" else f"Answer: {problem.answer}"


_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split()
)
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def number_to_words(n: int) -> str:
    """English words of ``0 <= n < 10**6`` without "and" or hyphens (``347`` → ``three hundred forty seven``)."""
    if not 0 <= n < 10**6:
        raise ValueError(f"number_to_words: {n} is outside [0, 1000000)")
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    if n < 1000:
        return _ONES[n // 100] + " hundred" + ("" if n % 100 == 0 else " " + number_to_words(n % 100))
    return number_to_words(n // 1000) + " thousand" + ("" if n % 1000 == 0 else " " + number_to_words(n % 1000))


def chrf(hypothesis: str, reference: str, *, max_n: int = 6, beta: float = 2.0) -> float:
    """chrF (Popović 2015, sacrebleu's default ``chrF2``): character n-gram F_β, n = 1..6, whitespace removed,
    precision and recall averaged over the n-gram orders that the texts have; in [0, 1]."""
    from collections import Counter

    hyp, ref = hypothesis.replace(" ", ""), reference.replace(" ", "")
    precisions, recalls = [], []
    for n in range(1, max_n + 1):
        h = Counter(hyp[i : i + n] for i in range(len(hyp) - n + 1))
        r = Counter(ref[i : i + n] for i in range(len(ref) - n + 1))
        if not r:
            continue
        match = sum((h & r).values())
        precisions.append(match / sum(h.values()) if h else 0.0)
        recalls.append(match / sum(r.values()))
    if not recalls:
        return 1.0 if not hyp else 0.0
    p, rc = sum(precisions) / len(precisions), sum(recalls) / len(recalls)
    if p + rc == 0:
        return 0.0
    return (1 + beta**2) * p * rc / (beta**2 * p + rc)


@dataclass(frozen=True)
class WordsItem:
    """One verbalisation prompt (``"347>"``) and its reference (never seen by label-free training)."""

    prompt: str
    reference: str

    @property
    def references(self) -> tuple[str, ...]:
        """The one correct rendering (the same interface as :class:`SceneItem`)."""
        return (self.reference,)


class NumberWordsTask:
    """Digits → English words, an open-ended generation task with a reference metric (chrF, exact match).

    Numbers are drawn uniformly from ``[0, 10**digits)`` with a seeded NumPy generator, split three ways
    without repeats: ``pretrain`` (labelled: only for pre-training the tiny base model to partial competence),
    ``train`` (prompts only for self-improvement) and ``test``.
    """

    ALPHABET = "0123456789>? abcdefghijklmnopqrstuvwxyz"

    def __init__(self, *, digits: int, sizes: dict[str, int], seed: int) -> None:
        import numpy as np

        total = sum(sizes.values())
        if total > 10**digits:
            raise ValueError(f"NumberWordsTask: {total} items requested but only {10**digits} numbers exist")
        numbers = np.random.default_rng(seed).permutation(10**digits)[:total].tolist()
        self.description = f"numbers < 10^{digits} to English words"
        self.splits: dict[str, list[WordsItem]] = {}
        start = 0
        for name, size in sizes.items():
            self.splits[name] = [WordsItem(f"{n}>", number_to_words(n)) for n in numbers[start : start + size]]
            start += size
        self.max_words_len = max(len(number_to_words(n)) for n in numbers)

    def pretrain_pairs(self) -> list[tuple[str, str]]:
        """The labelled (prompt, reference) pairs of the ``pretrain`` split."""
        return [(it.prompt, it.reference) for it in self.splits.get("pretrain", [])]


def best_chrf(hypothesis: str, references: Sequence[str]) -> float:
    """Multi-reference chrF: the highest :func:`chrf` of ``hypothesis`` against any of ``references``
    (a correct answer worded like any valid rendering scores 1). A plain string is one reference."""
    if isinstance(references, str):
        references = (references,)
    if not references:
        raise ValueError("best_chrf: no references")
    return max(chrf(hypothesis, r) for r in references)


_ANIMALS = "cat dog fox owl hen cow pig bat rat yak ant bee elk emu ram frog".split()
_COLOURS = "red blue green black white brown grey pink".split()
_PLACES = "box bag cup pot hat boat car tent cart nest bed tub".split()
#: each relation of a scene and its interchangeable wordings
_RELATIONS: dict[str, tuple[str, ...]] = {
    "in": ("in", "inside"),
    "on": ("on", "on top of"),
    "under": ("under", "below", "beneath"),
}
#: sentence templates over colour {c}, animal {a}, relation wording {r}, place {p} (and verb {v} where marked)
_SCENE_TEMPLATES = (
    "the {c} {a} is {r} the {p}",
    "a {c} {a} {v} {r} the {p}",
    "there is a {c} {a} {r} the {p}",
    "{r} the {p} is a {c} {a}",
    "the {a} {r} the {p} is {c}",
)
_VERBS = ("sits", "rests", "waits")


@dataclass(frozen=True)
class SceneItem:
    """One scene (``"cat red under box>"``) and every valid sentence describing it (``references``; never seen
    by label-free training). ``reference`` is the first, canonical one."""

    prompt: str
    references: tuple[str, ...]

    @property
    def reference(self) -> str:
        """The canonical rendering (first template, first wording)."""
        return self.references[0]


def scene_sentences(animal: str, colour: str, relation: str, place: str) -> tuple[str, ...]:
    """All renderings of one scene: 5 templates × the relation's wordings (× 3 verbs in the second
    template), 14-21 distinct sentences of the same meaning, canonical one first."""
    out: list[str] = []
    for template in _SCENE_TEMPLATES:
        for r in _RELATIONS[relation]:
            for v in _VERBS if "{v}" in template else ("",):
                out.append(template.format(c=colour, a=animal, r=r, p=place, v=v))
    return tuple(dict.fromkeys(out))


class SceneTask:
    """Scene description: a scene given as slots (``"cat red under box>"``: animal, colour, relation, place)
    → one English sentence describing it. An open-ended generation task whose correct answers are worded in
    many ways (5 templates, relation synonyms such as under / below / beneath, verb synonyms; 14-21 correct
    sentences per scene), so that a policy pre-trained on all of them samples distinct correct strings.
    Metrics against the full set of correct sentences (which training never reads): multi-reference chrF
    (:func:`best_chrf`) and exact match (the sentence is one of them).

    Scenes (16 animals × 8 colours × 3 relations × 12 places = 4608) are drawn without repeats with a seeded
    NumPy generator and split three ways: ``pretrain`` (labelled: only for pre-training the tiny base model,
    with ``renderings`` random correct sentences per scene), ``train`` (prompts only) and ``test``.
    """

    ALPHABET = "0123456789>? abcdefghijklmnopqrstuvwxyz"
    SCENES = len(_ANIMALS) * len(_COLOURS) * len(_RELATIONS) * len(_PLACES)

    def __init__(self, *, sizes: dict[str, int], seed: int, renderings: int = 4) -> None:
        import numpy as np

        total = sum(sizes.values())
        if total > self.SCENES:
            raise ValueError(f"SceneTask: {total} items requested but only {self.SCENES} scenes exist")
        rng = np.random.default_rng(seed)
        rels = list(_RELATIONS)
        combos = [(a, c, r, p) for a in _ANIMALS for c in _COLOURS for r in rels for p in _PLACES]
        chosen = rng.permutation(len(combos))[:total].tolist()
        self.splits: dict[str, list[SceneItem]] = {}
        start = 0
        for name, size in sizes.items():
            self.splits[name] = [
                SceneItem(f"{a} {c} {r} {p}>", scene_sentences(a, c, r, p))
                for a, c, r, p in (combos[i] for i in chosen[start : start + size])
            ]
            start += size
        self.renderings = renderings
        self._rng = rng
        self.description = "scene description (14-21 correct wordings per scene)"
        self.max_words_len = max(len(s) for items in self.splits.values() for it in items for s in it.references)

    def pretrain_pairs(self) -> list[tuple[str, str]]:
        """``renderings`` (prompt, sentence) pairs per pretrain scene, sentences drawn without repeats
        (seeded), so the base model learns the spread of wordings."""
        out = []
        for it in self.splits.get("pretrain", []):
            k = min(self.renderings, len(it.references))
            for j in self._rng.choice(len(it.references), size=k, replace=False).tolist():
                out.append((it.prompt, it.references[int(j)]))
        return out


#: An item of an open-ended task: ``prompt`` and the tuple of its correct ``references``.
TextItem = WordsItem | SceneItem
