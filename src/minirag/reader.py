"""The reader: a MiniGPT with a span head that answers from the prompt or abstains.

What it is: `Reader`: a Prompt in, the best span of one chunk's window with its [#n] marker
out (never struck-out text, never a form the question does not ask for: `banned_forms`), or
"I don't know" when no span beats the null position by NULL_MARGIN (by 0 for a table cell
the question's words single out of its row: `narrowed_cell`); a LoRA adapter's `Skill`
reads the questions of its task (`ROUTES`), the base the rest. A question that quotes a
mistake the prompt strikes out and asks if it is right gets the KB's correction, whole, with no
model; one that makes the same mistake in its own words gets what the correction changes, where
the model would abstain (mistakes.py). A question that asks what a term means gets the words a
window defines it with, with no model (definitions.py), and the model's answer to one that
says "mean" only from a line that names the term; one that asks for an example, the first
of the list a window introduces for it, where the model would abstain (examples.py); one that
offers two options ("A or B?", a fill-in's "(A / B)"), the option a window supports, where the
model abstains or answers with neither (choices.py); a fill-in with a one-word cue, the cue's
verb group a window writes ("were playing"), where the model abstains or answers a part of it,
and a wrong verb form after an auxiliary ("has became"), the cell of its row the auxiliary asks
for (verb_groups.py); the form its sentence asks of the cue ("___ (hot) than": the comparative;
the past simple in a sentence set in the past), where the model abstains or answers another
form (gap_forms.py); a misspelt word of a verdict question, as a window spells it, where the
model abstains (spellings.py); one that names a table's first column and describes a row by
another cell, the row's first cell, where the model abstains (table_keys.py). Its inputs
(windows, table columns, question-match flags) are computed as training computes them
(reader_inputs.py).
What it leaves out: free-form generation (a pointer cannot invent), the model
(minimodel.SpanReader) and training (training/reader_train.py).
Why: theory/07; the margin: theory/05 §4.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minimodel.lora import LoRA, adapted_model
from minimodel.span_reader import SpanReader
from minirag.bm25 import tokenize
from minirag.choices import chosen_option, names_either
from minirag.definitions import defining_window, meaning_term, off_its_line
from minirag.examples import listed_example
from minirag.files.artifacts import MODELS_DIR, load_tokenizer
from minirag.forms import (
    GENERIC_NAMES,
    HAVE,
    asked_kinds,
    entries,
    foreign_forms,
    other_columns,
    other_forms,
    stem,
)
from minirag.gap_forms import asked_form, misformed
from minirag.mistakes import VERDICT_WORDS, analogous_fix, correcting_cell, correction_core
from minirag.prompt import IDK_TEXT, STOPWORDS, Prompt
from minirag.reader_inputs import (
    AUXILIARIES,
    WORD,
    choice_sides,
    has_gap,
    holds_run,
    inside_word,
    offers_choice,
    pieces_of,
    question_of,
    struck_out,
    token_types,
    windows,
)
from minirag.spellings import respelt, unregular
from minirag.table_keys import described_key, given_key
from minirag.tables import cue_words, whole_row
from minirag.verb_groups import MID_ADVERBS, cue_of, filled_gap, mended_group, part_of

READER_PATH = MODELS_DIR / "reader.npz"
ADAPTER_PATH = MODELS_DIR / "choice_adapter.npz"  # LoRA, "A or B?" (training/adapter_train.py)
SEPARATORS = frozenset("|,;→\n")  # an answer never crosses one (see Reader._cells)
# A span is answered only when its start + end score beats the null position's (<|a|>) by this
# margin; 0 would trust the reader's own calibration. Chosen once on dev for the shipped weights
# from the curve of right, wrong and abstained answers (theory/05 §4; the sweep: EXPERIMENTS.md).
NULL_MARGIN = 5.0
# a gap right after a form of *have*, an adverb between or not: "she has (just) ___ (go)"
GAP_AFTER_HAVE = re.compile(rf"\b{HAVE}\s+(?:(?:{'|'.join(sorted(MID_ADVERBS))})\s+)?_{{2,}}",
                            re.IGNORECASE)


def banned_forms(shown: str, question: str, headers: dict[str, str] | None = None) -> set[str]:
    """The entry forms in `shown` (a prompt's windows) that cannot answer `question`: to a
    question that names a form, an arrow's form of another kind (forms.other_forms: not
    "lying" for "past of lie"); to one that names a form or has a gap to fill, the entry of a
    word it does not ask about, its word and forms (forms.foreign_forms: not "drunk" from "|
    drink | drank | drunk |" for "past participle of behold", a verb the KB does not list).
    The words asked about are a gap's cue ("we ___ (behold) it"), or else all of the question's.
    With `headers` (a shown row -> its header row, Prompt.headers), also a row's cells under
    a column the question names less than another, or of another kind of form than it names
    (forms.other_columns: not "was" from "| be | was / were | been |" for "past participle of
    be", not "flown" for "he/she form of fly"). A gap right after a form of *have* names the
    participle ("she has ___ (go) home" reads as asking for the past participle).
    Example: banned_forms("| drink | drank | drunk |", "past of behold") ->
        {"drink", "drank", "drunk"}
    """
    if has_gap(question) and GAP_AFTER_HAVE.search(question):
        question += " (past participle)"
    cue = set(cue_words(question)) if has_gap(question) else set()
    kinds = set() if cue else asked_kinds(question)  # a gap's scenery ("one person") names none
    columns = other_columns(shown, question, headers or {}, kinds)
    if not cue and not kinds:
        return columns
    return columns | other_forms(shown, question) | \
        foreign_forms(shown, cue or set(WORD.findall(question.lower())))


def narrowed_cell(shown: str, answer: str, ruled_out: tuple[str, ...]) -> bool:
    """Is `answer` a whole cell of a table row in `shown` whose other cells `banned_forms` ruled
    out? Then the question's words picked the cell, and the reader need only prefer it to "I
    don't know" (margin 0, not NULL_MARGIN): to "reflexive pronoun for we" beside "| we | us |
    our | ours | ourselves |", the column rule leaves "ourselves" alone in its row. An arrow
    inside a cell ("| -ie: change ie to y | lie → lying |") is no cell: its word is the one asked
    about ("past of lie"), not an answer.
    Example: narrowed_cell("| we | us | ourselves |", "ourselves", ("us", "we")) -> True"""
    if not ruled_out:  # nothing ruled out, nothing singled out: most readings stop here
        return False
    rows = "\n".join(line for line in shown.splitlines() if whole_row(line))
    return any(answer.lower() in keys | forms and set(ruled_out) & (keys | forms)
               for keys, forms in entries(rows, arrows=False))


def only_echoes(answer: str, question: str) -> bool:
    """Is `answer` made only of the question's own words, to a question that asks for no form
    (names none, has no gap, never says "form") and no verdict on its own words
    (VERDICT_WORDS)? Such an answer tells the learner nothing they did not type: the reader
    found no answer and pointed at the question's word in a window. Where a form is asked, the
    question's word may be the answer ("cut + have: which form?" -> "cut"). To a question that
    offers a choice, an echo of words both sides share must be a run of one side only: to "on
    the train or in the train", "on the train" chooses and "train" does not; to "a red small car
    or a small red car", "a small red" chooses by its order.
    Example: only_echoes("descale", "how can i descale my kettle") -> True;
        only_echoes("cut", "cut + have: which form?") -> False"""
    asked, said = WORD.findall(question.lower()), WORD.findall(answer.lower())
    if not set(said) <= set(asked):
        return False
    left, right = (WORD.findall(side) for side in choice_sides(question.lower()))
    if right and not has_gap(question):  # a choice offered
        return set(said) <= set(left) & set(right) and \
            holds_run(left, said) == holds_run(right, said)
    return not (asked_kinds(question) or has_gap(question)
                or set(asked) & (GENERIC_NAMES | VERDICT_WORDS))


# words a form may be asked "of" that name no word of the KB: "the plural of something"
VAGUE = re.compile(r"(?:any|every|no|some)(?:one|thing|body)")


def of_unseen_word(question: str, shown: str) -> bool:
    """Does a question that names a form ask it of words (a fill-in's cue, the word right after
    "of": no stopword, none VAGUE) that `shown`, the prompt's windows, never writes, not even by
    their stem? Then no span of the prompt can be their form: what a model points at is another
    word's ("past of strive" beside the past of drive), and the near-miss questions show it.
    ("for" looks a word up too, `prompt.looked_up`, but says as often what a form is for:
    "which form for finished actions".)
    Example: of_unseen_word("past of strive", "| drive | drove | driven |") -> True;
        of_unseen_word("past of drive", "| drive | drove | driven |") -> False"""
    words = tokenize(question)
    asked = {w for w in [cue_of(question), *(b for a, b in zip(words, words[1:]) if a == "of")]
             if w and w not in STOPWORDS and not VAGUE.fullmatch(w)}
    if not asked or not asked_kinds(question):
        return False
    written = set(WORD.findall(shown.lower()))
    if asked & written:
        return False
    stems = {stem(w) for w in written}  # only now: most questions' words are written as asked
    return not {stem(w) for w in asked} & stems


# An adapter's task (saved in its file, minimodel.lora) -> the questions it reads; the base the rest
ROUTES: dict[str, Callable[[str], bool]] = {"choice": offers_choice}


@dataclass(frozen=True)
class Skill:
    """A model with an adapter applied and the questions it is for (`accepts(question)`)."""
    model: SpanReader
    accepts: Callable[[str], bool]


@dataclass(frozen=True)
class Reading:
    text: str  # "went [#1]" or the abstention sentence
    answer: str | None  # the span's text, None when abstaining
    marker: str | None  # "[#1]" .. "[#4]" of the chunk the span is in
    abstained: bool
    span_score: float  # best start + end score of a span (nan when no model read it)
    null_score: float  # start + end score of the null position (<|a|>), or nan as above
    by_skill: bool = False  # read by a Skill's model (a routed adapter), not the base
    ruled_out: tuple[str, ...] = ()  # entry forms in the prompt that `banned_forms` kept out
    corrects: str | None = None  # the struck-out mistake whose correction is the answer
    defines: str | None = None  # the term whose definition in the KB is the answer
    listed: str | None = None  # the lead of the KB's list whose first example is the answer
    chosen_over: str | None = None  # the option offered that a window's support ruled out
    fills: str | None = None  # the fill-in's cue whose verb group, as a window writes it, answers
    mends: str | None = None  # the question's wrong verb form that a window's verb row put right
    respells: str | None = None  # the question's misspelt (or regularised) word a window corrects
    keyed_by: str | None = None  # the words a table row shares with the question; its key answers
    formed: str | None = None  # the fill-in's cue whose form of the kind its sentence asks answers


class Reader:
    """Example: Reader.load().read(build_prompt("past of go", chunks)).text -> "went [#1]".
    With a `skill`, the questions it accepts are read by its model instead of `model`."""

    def __init__(self, model: SpanReader, tokenizer, max_answer_tokens: int = 8,
                 null_margin: float = NULL_MARGIN, skill: Skill | None = None):
        self.model, self.tokenizer, self.max_len = model, tokenizer, max_answer_tokens
        self.null_margin, self.skill = null_margin, skill

    def model_for(self, ids: list[int]) -> SpanReader:
        """The model that reads this prompt: the skill's if it accepts the question."""
        return self._route(question_of(ids, self.tokenizer))

    def _route(self, question: str) -> SpanReader:
        if self.skill is not None and self.skill.accepts(question):
            return self.skill.model
        return self.model

    def scores(self, ids: list[int], model: SpanReader | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """Start and end scores [T], [T] of a compact prompt's tokens, with its token types,
        from `model` (by default the one `model_for` picks)."""
        model = self.model_for(ids) if model is None else model
        n_cols = model.config.n_segments // 2  # token_types: columns x in_question
        types = (np.array([token_types(ids, self.tokenizer, n_cols, stems=True)])  # [1, T]
                 if n_cols else None)
        start, end, _ = model.scores(np.array([ids]), types)  # [1, T], [1, T]
        return start[0], end[0]

    def read(self, prompt: Prompt) -> Reading:
        return self.read_ids(prompt.token_ids, prompt.headers, prompt.question or None)

    def read_ids(self, ids: list[int], headers: dict[str, str] | None = None,
                 question: str | None = None) -> Reading:
        """`read` of a compact prompt's token ids (a training example's, say); `headers`: its
        rows' header rows (Prompt.headers), for `banned_forms` and the rules that read columns;
        `question`: the question as asked (Prompt.question), which the rules and the routing
        read whole while the model reads the ids (by default, the question the ids hold, cut
        to MAX_QUESTION tokens)."""
        question = question or question_of(ids, self.tokenizer)
        segs = windows(ids, self.tokenizer)
        cells = [c for lo, hi in segs for c in self._cells(ids, lo, hi, offers_choice(question))]
        seen = [self.tokenizer.decode(ids[lo:hi]) for lo, hi in segs]  # each window's text
        fix = correcting_cell([self.tokenizer.decode(ids[a:b]) for a, b in cells], seen, question)
        if fix is not None:  # the KB's own correction of the mistake quoted: no model needed
            (a, b), wrong = cells[fix[0]], fix[1]
            answer = correction_core(self.tokenizer.decode(ids[a:b]))
            marker = self._marker(segs, a)
            return Reading(f"{answer} {marker}", answer, marker, False, math.nan, math.nan,
                           corrects=wrong)
        meant = defining_window(seen, question, headers)
        if meant is not None:  # the KB's own definition of the term asked about
            window, answer, term = meant
            marker = f"[#{window + 1}]"
            return Reading(f"{answer} {marker}", answer, marker, False, math.nan, math.nan,
                           defines=term)
        model = self._route(question)
        start, end = self.scores(ids, model)  # [T], [T]
        shown = "\n".join(seen)
        banned, ruled_out = banned_forms(shown, question, headers), ()
        if banned:  # a cell is banned by the longest entry form it starts with
            forms = banned.union(*(fs for _, fs in entries(shown)))
            at = [self._form_at(ids, c, forms) for c in cells]
            ruled_out = tuple(sorted({f for f in at if f in banned}))
            cells = [c for c, f in zip(cells, at) if f not in banned]
        s, e, span, null = model.best_span(start, end, cells, len(ids) - 1, self.max_len)
        if s >= 0:
            s, e = self._widen(ids, s, e, next(w for w in cells if w[0] <= s < w[1]),
                               has_gap(question))
        answer = self.tokenizer.decode(ids[s:e + 1]).strip() if s >= 0 else ""
        by_skill = model is not self.model
        margin = min(self.null_margin, 0.0) if narrowed_cell(shown, answer, ruled_out) \
            else self.null_margin
        meant = meaning_term(question)  # a meaning asked: read only on the term's own line
        silent = s < 0 or null + margin >= span or not answer or \
            only_echoes(answer, question) or of_unseen_word(question, shown) or \
            (meant is not None and off_its_line(self._line(ids, segs, s, e), meant))
        said = WORD.findall(answer.lower())  # the model's answer, word by word

        def by_rule(window: int, text: str, **why) -> Reading:  # a reading rule's answer
            marker = f"[#{window + 1}]"
            return Reading(f"{text} {marker}", text, marker, False, span, null, by_skill,
                           ruled_out, **why)

        choice = chosen_option(seen, question)  # the option a window supports
        if choice is not None and (silent or not (names_either(answer, choice)
                                                  or asked_kinds(question))):
            return by_rule(*choice[:2], chosen_over=choice[2])
        cue, gap = cue_of(question), filled_gap(seen, question)  # the cue's verb group
        if gap is not None and (silent or part_of(answer, gap[1], cue)):
            return by_rule(*gap, fills=cue)
        formed = asked_form(seen, headers or {}, question)  # "___ (hot) than": the comparative
        if formed is not None and (silent or misformed(answer, seen, headers or {}, formed)):
            return by_rule(*formed[:2], formed=formed[2])
        mend = mended_group(seen, question)  # a wrong form after an auxiliary, put right
        if mend is not None and (silent or mend[1].split()[-1] not in said):
            return by_rule(*mend[:2], mends=mend[2])
        spelt = respelt(seen, question) if silent else None  # a misspelt word, as shown
        unreg = unregular(seen, question)  # an irregular word given a regular ending
        if spelt is None and unreg is not None and (silent or unreg[1].lower() not in said):
            spelt = unreg
        if spelt is not None:
            return by_rule(*spelt[:2], respells=spelt[2])
        given = given_key(seen, question)  # "sought is the past of which verb?": the row's key
        if given is not None and (silent or set(said) <= set(WORD.findall(question.lower()))):
            return by_rule(*given[:2], keyed_by=given[2])
        if silent:  # a row the question describes, the same mistake in other words, or an
            key = described_key(seen, headers or {}, question)  # example the KB lists?
            if key is not None:
                return by_rule(*key[:2], keyed_by=key[2])
            like = analogous_fix(seen, question)
            if like is not None:
                return by_rule(*like[:2], corrects=like[2])
            listed = listed_example(seen, question)
            if listed is not None:
                return by_rule(*listed[:2], listed=listed[2])
            return Reading(IDK_TEXT, None, None, True, span, null, by_skill, ruled_out)
        marker = self._marker(segs, s)
        return Reading(f"{answer} {marker}", answer, marker, False, span, null, by_skill,
                       ruled_out)

    def _line(self, ids: list[int], segs: list[tuple[int, int]], s: int, e: int) -> str:
        """The line of its window that tokens s..e sit on."""
        lo, hi = next((lo, hi) for lo, hi in segs if lo <= s < hi)
        before, span = self.tokenizer.decode(ids[lo:s]), self.tokenizer.decode(ids[s:e + 1])
        after = self.tokenizer.decode(ids[e + 1:hi])
        return before.rsplit("\n", 1)[-1] + span + after.split("\n", 1)[0]

    @staticmethod
    def _marker(segs: list[tuple[int, int]], at: int) -> str:
        """The [#n] marker of the window that holds token `at`."""
        return f"[#{next(i for i, (lo, hi) in enumerate(segs) if lo <= at < hi) + 1}]"

    def _cells(self, ids: list[int], lo: int, hi: int, choice: bool = False
               ) -> list[tuple[int, int]]:
        """A window cut at its separators ("|", ",", ";", "→", a line break) and around struck
        text: an answer is one table cell or one item of a list, never two ("chase | choosen"
        is two cells), and never a form the KB strikes out as wrong ("~~buyed~~"). For a
        question that offers a `choice`, also at the word "or": the answer to "mice or
        mouses?" is one of them, never "mice or mouses"."""
        pieces = pieces_of(ids[lo:hi], self.tokenizer)
        cuts = [lo + j for j, (piece, struck) in enumerate(zip(pieces, struck_out(pieces)))
                if struck or SEPARATORS & set(piece) or (choice and piece.strip().lower() == "or")]
        bounds = [lo - 1, *cuts, hi]
        return [(a + 1, b) for a, b in zip(bounds, bounds[1:]) if b > a + 1]

    def _form_at(self, ids: list[int], cell: tuple[int, int], forms: set[str]) -> str | None:
        """The longest of `forms` the cell starts with, as the cell after an arrow does ("lying)."
        after "lie →"), or None: "more quickly" starts with "more quickly", not with "more"."""
        text = re.sub(r"^[^a-z]+", "", self.tokenizer.decode(ids[cell[0]:cell[1]]).lower())
        return max((f for f in forms if re.match(re.escape(f) + r"\b", text)), key=len,
                   default=None)

    def _widen(self, ids: list[int], s: int, e: int, cell: tuple[int, int],
               verb_group: bool = False) -> tuple[int, int]:
        """Widen a span to whole words ("stud" + "ies" is one word, and so are "mothers-in-law"
        and "didn't": a reader that points at part of a word still means all of it); with
        `verb_group` (the question has a gap to fill), also to the auxiliaries right before it:
        the gap of "if she ___ (leave) earlier" stands for "had left", not "left". Never leaves
        the span's cell."""
        lo, hi = cell
        pieces = [self.tokenizer.vocab[t] for t in ids[lo:hi]]  # each token's bytes
        text, at = b"".join(pieces), np.cumsum([0, *map(len, pieces)])  # at: [hi - lo + 1]
        starts = [i for i in range(lo, hi) if i == lo or not inside_word(text, int(at[i - lo]))]
        s = max(i for i in starts if i <= s)  # the first token of s's word
        e = next((i for i in starts if i > e), hi) - 1  # the last token of e's word
        before = [i for i in starts if i < s]  # the words before the span, nearest last
        while verb_group and before and \
                self.tokenizer.decode(ids[before[-1]:s]).strip().lower() in AUXILIARIES:
            s = before.pop()
        return s, e

    @classmethod
    def load(cls, path: Path = READER_PATH, tokenizer=None, adapter: Path | None = None,
             routed: bool = True) -> Reader:
        """The shipped reader; with `adapter`, a LoRA adapter file (minimodel.lora) made for
        it (W + s A B; one made for another base is a CheckpointError), applied to the
        questions of its task (ROUTES), or to every question if it names none or `routed` is
        False. A task with no route is a ValueError."""
        tokenizer = tokenizer or load_tokenizer()
        model = SpanReader.load(path, tokenizer.fingerprint)
        if adapter is None:
            return cls(model, tokenizer)
        lora = LoRA.load(adapter, model.params)
        task = lora.config.task
        if not routed or task is None:
            return cls(adapted_model(model, lora), tokenizer)
        if task not in ROUTES:
            raise ValueError(f"{adapter}: no route for its task {task!r} (known: "
                             f"{sorted(ROUTES)}); add one to reader.ROUTES, or load it with "
                             f"routed=False to apply it to every question")
        return cls(model, tokenizer, skill=Skill(adapted_model(model, lora), ROUTES[task]))
