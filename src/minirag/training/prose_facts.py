"""Questions about the KB's prose, asked the way a learner asks them: which word, where, what.

What it is: a fact per phrase a prose line is about (a bold form of 1-4 words, or a tense's
name), and a question built from the rest of the line: its other words, a few dropped, with a
lead that names what kind of thing is missing ("which tense", "which preposition", "where",
"what"). Example: the line "complement (go well with) / compliment (praise)" and its bold
"compliment" give "which word praise" or "complement go well with what praise". The reader
learns the skill
every such question needs: find the line that shares the question's words, and copy the
phrase of it the question leaves out. Table rows are left to the table facts; a phrase that
occurs twice in its line is skipped (which one is meant would be a guess).
What it leaves out: questions in other words than the line's (paraphrases); the eval sets
hold those, and every question passes the shared eval filter (reader_data.draw_question).
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
WORDS = re.compile(r"[A-Za-z][A-Za-z'-]*")
_DEFINITION = re.compile(r"^(?:- )?(?:an? |the )?(?P<term>[A-Za-z][\w' -]{1,30}?) (?:(?:is|are)"
                         r"(?= (?:an?|the) )|means?|describes?|refers? to|=) (?P<says>[^,.;:(]+)",
                         re.IGNORECASE)  # "A gerund is the ...", "- their = belonging to them"
MAX_WORDS = 4  # longest phrase asked about
DEFINITION_WORDS = 5  # most words of a definition taken as its answer
MIN_REST = 3  # fewest content words a question must keep from its line
PREPOSITIONS = frozenset("""about above across after against along among around at before
behind below beneath beside between by during for from in inside into near of off on onto
opposite out outside over past since through till to towards under until up with within
without""".split())
PLACES = ("before", "after", "at the end", "at the start", "at the beginning", "between",
          "in front of", "in the middle")
LEADS = {  # what kind of phrase is missing -> how a learner names it
    "tense": ["which tense", "what tense", "tense for", "which tense do i use", "what tense is"],
    "preposition": ["which preposition", "what preposition", "preposition", "which word"],
    "place": ["where", "where does it go", "where do i put it", "position"],
    "word": ["which word", "what word", "what", "which form", "what do we use"],
    "phrase": ["what", "which", "what do you use", "what is", "how"],
}
DEFINES = ["what is {x}", "what does {x} mean", "{x} meaning", "meaning of {x}", "define {x}",
           "what is meant by {x}", "{x} means what", "what are {x}", "{x}?", "explain {x}"]


def prose_facts(chunk: Chunk) -> list[Fact]:
    """The facts of the rule text of each prose line of `chunk` (the line without its italic
    examples and struck-out forms). Relation "cut": a bold phrase (1-MAX_WORDS words) or tense
    name, key = the rule sentence with it cut out ("___"). Relation "definition": a sentence
    "X is / means / describes Y", key = X, answer = Y's first DEFINITION_WORDS words."""
    facts = []
    for raw in chunk.text.splitlines():
        if raw.lstrip().startswith(("|", "#")):
            continue
        rule = re.sub(r"\*[^*]*\*|~~[^~]*~~", " ", raw.replace("**", "\0"))  # examples out
        phrases = {p.strip() for p in _BOLD.findall(rule)} | {m.group(0) for m in
                                                            _TENSE.finditer(rule)}
        for line in units(rule.replace("\0", "")):
            for p in sorted(phrases):
                hits = list(_find(line, p))
                if len(hits) == 1 and len(p.split()) <= MAX_WORDS \
                        and len(_content(line)) - len(p.split()) >= MIN_REST:
                    key = line[:hits[0].start()] + "___" + line[hits[0].end():]
                    facts.append(Fact("prose", key, "cut", hits[0].group(0), line, chunk))
            defined = _DEFINITION.match(line)
            if defined and defined["term"].split()[0].lower() not in STOPWORDS:
                answer = " ".join(defined["says"].split()[:DEFINITION_WORDS])
                facts.append(Fact("prose", defined["term"], "definition", answer, line, chunk))
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
    phrase before them, after them, or in the cut itself ("... with what"). A definition's
    question asks what its term means."""
    if f.relation == "definition":
        asks = DEFINES[int(rng.integers(len(DEFINES)))].format(x=f.key)
        return asks.lower() if rng.random() < 0.7 else asks
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
