"""Questions about the KB's prose, asked the way a learner asks them: which word, where, what.

What it is: a fact per phrase a rule line is about (a bold form of 1-4 words, a tense's name,
or where a word goes: "goes before the verb"), and a question built from the rest of the line:
its other words, a few dropped, with a lead that names what kind of thing is missing ("which
tense", "which preposition", "where", "what"). Example: the line "complement (go well with) /
compliment (praise)" and its bold "compliment" give "which word praise" or "complement go well
with what praise". The reader learns the skill every such question needs: find the line that
shares the question's words, and copy the phrase of it the question leaves out.
The lines are the rule text: italic examples and struck-out forms are cut out first (a
question about an example sentence asks nothing a learner asks). Table rows are left to the
table facts; a phrase that occurs twice in its line is skipped (which one is meant would be
a guess).
What it leaves out: questions in other words than the line's (paraphrases), which the eval
sets hold; definitions ("what does X mean" for a line "X means ..."), which read no better on
dev (EXPERIMENTS.md). Every question passes the shared eval filter (draw_question).
"""

from __future__ import annotations

import re

import numpy as np

from minirag.chunk import Chunk
from minirag.prompt import STOPWORDS, units
from minirag.training.facts import Fact

_BOLD = re.compile(r"\0([A-Za-z][A-Za-z' -]{0,40}?)\0")  # a bold phrase of words only
_TENSE = re.compile(r"\b(?:present|past|future) (?:perfect(?: simple| continuous)?|simple|"
                    r"continuous)\b", re.IGNORECASE)
_PLACE = re.compile(r"(?<![\w'])(?:before|after|at the (?:end|start|beginning)|in front of)"
                    r"(?: (?!(?:and|but|or|when|if|because|so)\b)[\w'-]+){0,3}",
                    re.IGNORECASE)  # where a word goes: up to three words, to a comma or "and"
_GOES = re.compile(r"\b(?:goes|go|comes?|puts?|placed|stands?|sits?)\b",
                   re.IGNORECASE)  # a place is asked after one: "it goes (before the verb)"
WORDS = re.compile(r"[A-Za-z][A-Za-z'-]*")
MAX_WORDS = 4  # longest phrase asked about
MIN_REST = 3  # fewest content words a question must keep from its line
PREPOSITIONS = frozenset("""about above across after against along among around at before
behind below beneath beside between by during for from in inside into near of off on onto
opposite out outside over past since through till to towards under until up with within
without""".split())
PLACES = ("before", "after", "at the end", "at the start", "at the beginning", "between",
          "in front of", "in the middle")
LEADS = {  # what kind of phrase is missing -> how a learner names it
    "tense": ["which tense", "what tense", "tense for", "the tense to use", "what tense is"],
    "preposition": ["which preposition", "what preposition", "preposition", "which word"],
    "place": ["where", "where does it go", "where do i put it", "position"],
    "word": ["which word", "what word", "what", "which form", "what do we use"],
    "phrase": ["what", "which", "what do you use", "what is", "how"],
}


def prose_facts(chunk: Chunk) -> list[Fact]:
    """A fact per bold phrase (1-MAX_WORDS words), tense name and place ("before the main
    verb") in the rule text of each prose line of `chunk` (the line without its italic
    examples and struck-out forms): key = the rule sentence with the phrase cut out ("___"),
    answer = the phrase. A sentence with too few other words to ask with is read together
    with the sentence before it ("The doer is the agent. Introduce it with ___.")."""
    facts = []
    for raw in chunk.text.splitlines():
        if raw.lstrip().startswith(("|", "#")):
            continue
        rule = re.sub(r"\*[^*]*\*|~~[^~]*~~", " ", raw.replace("**", "\0"))  # examples out
        phrases = {p.strip() for p in _BOLD.findall(rule) if len(p.split()) <= MAX_WORDS}
        sentences = units(rule.replace("\0", ""))
        phrases |= {m.group(0) for s in sentences for m in _TENSE.finditer(s)}
        phrases |= {m.group(0) for s in sentences for m in _PLACE.finditer(s)
                    if _GOES.search(s[:m.start()])}
        for i, sentence in enumerate(sentences):
            for p in sorted(phrases):
                for text in [sentence] + ([sentences[i - 1] + " " + sentence] if i else []):
                    hits = list(_find(text, p))
                    key = hits and text[:hits[0].start()] + "___" + text[hits[0].end():]
                    if len(hits) == 1 and len(_content(key)) >= MIN_REST:
                        facts.append(Fact("prose", key, "prose", hits[0].group(0), text, chunk))
                        break
    return facts


def _content(text: str) -> list[str]:
    return [w for w in WORDS.findall(text) if w.lower() not in STOPWORDS]


def _find(text: str, phrase: str):
    return re.finditer(rf"(?<![\w']){re.escape(phrase)}(?![\w'])", text, re.IGNORECASE)


def category(answer: str) -> str:
    """What kind of phrase `answer` is, for the question's lead: "tense", "preposition",
    "place" (where something goes), "word" (one word) or "phrase"."""
    a = answer.lower()
    if _TENSE.fullmatch(a):
        return "tense"
    if a.startswith(PLACES):
        return "place"
    if a in PREPOSITIONS:
        return "preposition"
    return "word" if " " not in a else "phrase"


def prose_question(f: Fact, rng: np.random.Generator) -> str:
    """A learner's question whose answer is the phrase cut out of `f.key`: the words of the
    clause around the cut, some dropped (stopwords more often), with a lead for the missing
    phrase before them, after them, or in the cut itself ("... with what")."""
    clause = next(c for c in re.split(r"[:;()]|(?<=,) ", f.key) if "___" in c)
    if len(_content(clause)) < MIN_REST:
        clause = f.key
    before, after = (_kept(WORDS.findall(side), rng) for side in clause.split("___", 1))
    leads = [x for x in LEADS[category(f.answer)] if not any(_find(x, f.answer))] or ["what"]
    lead = leads[int(rng.integers(len(leads)))]
    roll = rng.random()
    if roll < 0.55:
        words = [lead] + before + after
    elif roll < 0.8:
        words = before + after + [lead]
    else:
        words = before + [lead.split()[0]] + after
    q = " ".join(words)
    return q.lower() if rng.random() < 0.7 else q


def _kept(words: list[str], rng: np.random.Generator) -> list[str]:
    """The words a learner keeps: stopwords dropped half the time, other words a tenth."""
    keep = [rng.random() >= (0.5 if w.lower() in STOPWORDS else 0.1) for w in words]
    return [w for w, k in zip(words, keep) if k]
