"""How learners ask about a fact: the question phrasings reader training uses.

What it is: `question_for(fact, rng)`, a generator of questions about one KB fact (facts.py).
A question is composed, not picked from a short list: a frame (a direct question, the key
first, a gapped sentence, "A or B?", "is this correct?") filled with one of many names for
the relation ("past tense", "2nd form", "v2"), a cue that implies it (a past time word for
the past simple, have/has/had for the participle, "now" for the -ing form), a subject, and
noise (typos, case, stray punctuation). Thousands of phrasings per fact, so a reader cannot
learn a template by heart and has to learn the cue. Also `contracted` ("we've", "she'd") and
`aside`, an off-topic question that borrows a word ("swim near me"), both for the reader only
(the bi-encoder's pseudo-queries use `question_for` alone). What it leaves out: phrasings
written by people; the eval set holds those, and training never reads it (tests/test_reader.py).
"""

from __future__ import annotations

import re

import numpy as np

from minirag.training.facts import Fact, first_alternative, split_cells

SUBJECTS = ["i", "you", "he", "she", "we", "they", "my sister", "the kids", "tom", "our team",
            "my parents", "the teacher", "everyone", "nobody"]
OBJECTS = ["it", "the letter", "a song", "the ball", "that", "the car", "them", "the book",
           "some water", "", "", ""]
PAST_TIMES = ["yesterday", "last night", "last week", "two days ago", "in 2019", "this morning",
              "an hour ago", "when i was ten", "last summer", "on monday", "in the end",
              "once", "last year", "last month", "a year ago", "the other day", "at the weekend",
              "in the holidays"]
HAVE = ["have", "has", "had", "must have", "will have", "would have", "might have", "hasn't",
        "haven't", "had never", "have already", "has just", "had already"]
NOW = ["now", "right now", "at the moment", "today", "these days", "this week"]
LEADS = ["", "", "", "what is the ", "whats the ", "what's the ", "tell me the ", "give me the ",
         "i need the ", "do you know the ", "which word is the ", "how do i form the ",
         "quick question: the ", "pls what is the "]
KEY_FIRST = ["{k} {n}", "{k} in the {n}", "{k} -> {n}", "{k}: {n}", "{k} - {n}", "{k}, {n}",
             "verb {k}, {n}", "{k} to {n}", "{k} ({n})", "'{k}' {n}", "the {n} of the word {k}",
             "{n} of the verb {k}", "{n} for {k}", "{n} of '{k}'"]
NAMES = {
    "Past simple": ["past", "past tense", "past simple", "simple past", "past form",
                    "preterite", "2nd form", "second form", "past simple form", "v2",
                    "form for yesterday", "past tense form"],
    "Past participle": ["past participle", "participle", "3rd form", "third form", "v3", "pp",
                        "perfect form", "participle form", "form after have",
                        "passive form", "-en form", "past participle form"],
    "ing": ["-ing form", "ing form", "present participle", "gerund", "continuous form",
            "form with -ing", "ing spelling"],
    "ed": ["past", "-ed form", "past tense", "ed form", "past simple", "form with -ed"],
    "s": ["he/she form", "third person singular", "3rd person form", "-s form",
          "form with he", "present simple form for she", "3rd person singular"],
    "plural": ["plural", "plural form", "form for more than one", "plural spelling"],
    "er": ["comparative", "comparative form", "-er form", "form for comparing two"],
    "est": ["superlative", "superlative form", "-est form", "form for the top one"],
    "ly": ["adverb", "adverb form", "-ly form", "adverb made from"],
}
FILL_INS = {
    "Past simple": ["{s} ___ ({k}) {o} {t}", "{t} {s} ___ ({k}) {o}", "{t}, {s} ___ ({k})",
                    "when {s} ___ ({k}) {o} {t}, ...", "{s} ___ {o} {t} ({k})",
                    "did {s} like it? {s} ___ ({k}) {o} {t}"],
    "Past participle": ["{s} {h} ___ ({k}) {o}", "{s} {h} ___ ({k}) {o} before",
                        "{o} was ___ ({k}) {t}", "{o} has been ___ ({k})",
                        "have you ever ___ ({k}) {o}?", "{s} {h} never ___ ({k}) {o}",
                        "by then {s} {h} ___ ({k})"],
    "ing": ["{s} is ___ ({k}) {o} {now}", "{s} are ___ ({k}) {now}",
            "{s} was ___ ({k}) when i called", "i like ___ ({k})", "stop ___ ({k})!"],
    "ed": ["{s} ___ ({k}) {o} {t}", "{t} {s} ___ ({k})", "{s} {h} ___ ({k}) {o}"],
    "s": ["{s3} ___ ({k}) every day", "{s3} ___ ({k}) {o} on sundays", "{s3} often ___ ({k})",
          "does {s3} {k}? yes, {s3} ___ ({k}) {o}"],
    "plural": ["two ___ ({k})", "three {k}, no, three ___", "many ___ ({k})",
               "one {k}, two ___"],
    "er": ["this one is ___ ({k}) than that one", "{s} is ___ ({k}) than me"],
    "est": ["the ___ ({k}) of all", "it's the ___ ({k}) one"],
    "ly": ["{s} did it ___ ({k})", "{s} speaks ___ ({k})"],
}
EITHER = {
    "Past simple": ["is it {a} or {b} {t}", "{a} or {b}: past of {k}?", "{t} i {a} or {b}?",
                    "{k}: {a} or {b} in the past simple", "which is the past, {a} or {b}"],
    "Past participle": ["is it {a} or {b} after {h}", "{a} or {b} after have", "i {h} {a} or "
                        "{b}?", "{k}: {a} or {b} for the participle",
                        "which is the participle, {a} or {b}"],
}
MISTAKES = ["is '{x}' correct?", "'{x}' - right or wrong?", "can i say '{x}'",
            "whats wrong with: {x}", "correct this: {x}", "{x} ok?", "is '{x}' good english",
            "i wrote '{x}', is that right"]
GENERIC = ["what does {k} become", "{k} changes to?", "new form of {k}", "{k} -> ?",
           "how do i spell {k} here", "{k} with the ending", "change {k}"]
TABLE = ["{r} of {k}", "what is the {r} of {k}?", "{k} {r}?", "{r} for {k}", "{k} - {r}",
         "whats the {r} for {k}", "{k}: {r}", "tell me the {r} of '{k}'", "{k}, {r} pls"]
GAP = ["{k}", "{k}", "{k}", "fill in the gap: {k}", "complete: {k}", "right form: {k}",
       "{k} - which form?", "what goes in the blank: {k}", "{k} (correct form)"]
CLOZE = ["{k}", "fill the gap: {k}", "complete: {k}", "{k} ?", "missing word: {k}",
         "what goes in the gap: {k}", "{k} (one word)"]


def normalise_question(q: str) -> str:
    """Lowercase, one space between words, no trailing "?": "Past of GO ??" -> "past of go"."""
    return " ".join(q.lower().split()).rstrip(" ?")


# The faithfulness probes' phrasings (evaluate_reader): never a training question, whatever the
# verb, real or invented (`is_probe`; `reader.training_data` checks after `contracted`).
EVAL_PHRASINGS = {
    "Past simple": ["what's the simple past form of the verb {k}?", "{k} — which form for "
                    "finished past actions?", "last year we ___ ({k}) a lot", "tell me {k} in "
                    "the past"],
    "Past participle": ["what's the participle of the verb {k} (3rd column)?", "we've already "
                        "___ ({k})", "{k} + have: which form?", "the form of {k} after had"],
}
_PROBE = re.compile("|".join(
    re.escape(normalise_question(t)).replace(re.escape("{k}"), r"\S+")
    for ts in EVAL_PHRASINGS.values() for t in ts))


def is_probe(q: str) -> bool:
    """Whether `q` is a probe phrasing (normalised) with any word for its verb."""
    return _PROBE.fullmatch(normalise_question(q)) is not None


CONTRACTIONS = ((re.compile(r"\b(i|you|we|they) have\b", re.I), r"\1've"),
                (re.compile(r"\b(i|you|he|she|we|they) had\b", re.I), r"\1'd"))


def contracted(q: str, rng: np.random.Generator) -> str:
    """Half the time, "we have" -> "we've" and "she had" -> "she'd", as people type them."""
    if rng.random() < 0.5:
        return q
    for pattern, short in CONTRACTIONS:
        q = pattern.sub(short, q)
    return q


# Questions the KB cannot answer although they use a word the prompt shows ("{w}"): other
# languages, sound and history of a word, and everyday errands that borrow it. Seeing the word
# in a window is not being asked about it; the reader must abstain (reader_data, "offtopic").
ASIDES = {
    "language": ["how do you conjugate {w} in spanish", "what does {w} mean in german",
                 "french for {w}", "{w} in japanese", "translate {w} to korean",
                 "how to say {w} in italian", "{w} meaning in hindi", "is there a {w} in latin",
                 "polish word for {w}", "{w} in sign language"],
    "word": ["pronunciation of {w}", "where does the word {w} come from", "is {w} slang",
             "how old is the word {w}", "who invented {w}", "what rhymes with {w}",
             "is {w} a rude word in australia", "how many letters does {w} have in morse code",
             "{w} in braille", "first recorded use of {w}"],
    "errand": ["how much does a {w} cost", "where can i buy {w}", "{w} near me",
               "how do i fix a broken {w}", "{w} for sale", "is {w} healthy",
               "how many calories in {w}", "{w} stock price today", "weather for {w} this weekend",
               "who sings the song {w}", "{w} movie showtimes", "how to install {w} on windows",
               "recipe with {w}", "how far is {w} from the airport", "{w} opening hours",
               "population of {w}", "how to grow {w} at home", "is {w} safe for dogs",
               "{w} gift ideas", "when was {w} founded", "how to draw {w}",
               "cheap flights to {w}", "score of the {w} game", "how tall is {w}",
               "{w} app keeps crashing", "download {w} for free", "what year did {w} come out",
               "how to clean {w}", "{w} lottery numbers", "symptoms of {w}"],
}
ASIDE_LEADS = ["", "", "", "hey ", "quick question: ", "can you tell me ", "do you know ",
               "pls ", "google says nothing, "]


def aside(word: str, rng: np.random.Generator) -> str:
    """An off-topic question that mentions `word` ("{w} near me"), with a lead and noise."""
    pick = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    return noisy(pick(ASIDE_LEADS) + pick(ASIDES[pick(list(ASIDES))]).format(w=word), rng)


def question_for(f: Fact, rng: np.random.Generator) -> str:
    """A learner's question whose answer is `f.answer`, in a random phrasing with noise."""
    return noisy(compose(f, rng), rng)


def compose(f: Fact, rng: np.random.Generator) -> str:
    """The question before noise: a frame, a name for the relation, cues."""
    pick = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    if f.kind == "verb":
        q = _verb_question(f, rng, pick)
    elif f.kind == "arrow":
        q = _arrow_question(f, rng, pick)
    elif f.kind == "table":
        q = pick(TABLE).format(k=f.key, r=f.relation.lower())
    elif f.kind == "correction":
        q = pick(MISTAKES).format(x=f.key)
    elif f.kind == "gap":
        q = pick(GAP).format(k=_retold(f.key, rng))
    else:
        q = pick(CLOZE).format(k=f.key)
    return " ".join(q.split())


def _verb_question(f: Fact, rng: np.random.Generator, pick) -> str:
    rel, cues = f.relation, _cues(pick)
    forms = [first_alternative(c).lower() for c in split_cells(f.raw)] if f.raw else []
    roll = rng.random()
    if len(forms) == 3 and roll < 0.15:  # "rang or rung after had"
        a, b = (forms[1], forms[2]) if rng.random() < 0.5 else (forms[2], forms[1])
        return pick(EITHER[rel]).format(a=a, b=b, k=f.key, **cues)
    if len(forms) == 3 and roll < 0.27:  # "can i say 'they had rang'"
        return pick(MISTAKES).format(x=_mistake(f.key, forms, rel, cues, rng))
    if roll < 0.6:  # "the bell has ___ (ring)"
        return pick(FILL_INS[rel]).format(k=f.key, **cues)
    return _named(f.key, NAMES[rel], pick)


def _arrow_question(f: Fact, rng: np.random.Generator, pick) -> str:
    kind = arrow_kind(f)
    if kind is None:
        return pick(GENERIC).format(k=f.key)
    if rng.random() < 0.5:
        return pick(FILL_INS[kind]).format(k=f.key, **_cues(pick))
    return _named(f.key, NAMES[kind], pick)


def arrow_kind(f: Fact) -> str | None:
    """What an arrow does to its word, from the shape of the change: "stop → stopping" is
    the -ing form, "baby → babies" a plural (in a file about nouns) or else a he/she form."""
    k, a = f.key.lower(), f.answer.lower()
    if " " in k or k == a:
        return None
    for suffix in ("ing", "ed", "est", "er", "ly"):
        if a.endswith(suffix) and not k.endswith(suffix):
            return suffix
    if a.startswith("more "):
        return "er"
    if a.startswith("most "):
        return "est"
    if a.endswith("s") and not k.endswith("s"):
        return "plural" if "plural" in f.chunk.doc_id or "noun" in f.chunk.doc_id else "s"
    return None


def _retold(sentence: str, rng: np.random.Generator) -> str:
    """A KB sentence as a learner types it into a gap exercise: often only the clause with the
    gap, often lowercase and without its full stop."""
    clauses = re.split(r"(?<=[,;]) ", sentence)
    if len(clauses) > 1 and rng.random() < 0.4:
        sentence = next(c for c in clauses if "___" in c).rstrip(",;")
    if rng.random() < 0.5:
        sentence = sentence.lower()
    return sentence.rstrip(".!") if rng.random() < 0.5 else sentence


def _named(key: str, names: list[str], pick) -> str:
    if pick([True, False]):
        return f"{pick(LEADS)}{pick(names)} of {key}"
    return pick(KEY_FIRST).format(k=key, n=pick(names))


def _cues(pick) -> dict[str, str]:
    subject = pick(SUBJECTS)
    third = subject if subject not in ("i", "you", "we", "they", "my parents", "the kids") \
        else pick(["he", "she", "tom", "my sister", "the teacher"])
    return {"s": subject, "s3": third, "o": pick(OBJECTS), "t": pick(PAST_TIMES),
            "h": pick(HAVE), "now": pick(NOW)}


def _mistake(key: str, forms: list[str], rel: str, cues: dict, rng: np.random.Generator) -> str:
    """A sentence with the wrong form where the fact's form belongs."""
    past, part = forms[1], forms[2]
    regular = key + ("d" if key.endswith("e") else "ed")
    if rel == "Past simple":
        wrong = [w for w in (regular, part) if w != past] or [regular]
        return f"{cues['s']} {wrong[int(rng.integers(len(wrong)))]} {cues['o']} {cues['t']}"
    wrong = [w for w in (past, regular) if w != part] or [regular]
    return f"{cues['s']} {cues['h']} {wrong[int(rng.integers(len(wrong)))]} {cues['o']}"


def noisy(q: str, rng: np.random.Generator) -> str:
    """A learner's typing: sometimes a swapped or dropped letter, random case, extra ?."""
    words = q.split()
    if rng.random() < 0.2 and words:
        i = int(rng.integers(len(words)))
        w = words[i]
        if len(w) > 3 and w.isalpha():
            j = int(rng.integers(1, len(w) - 1))
            swapped = w[:j - 1] + w[j] + w[j - 1] + w[j + 1:]
            words[i] = w[:j] + w[j + 1:] if rng.random() < 0.5 else swapped
    q = " ".join(words)
    if rng.random() < 0.2:
        q = q.capitalize()
    if rng.random() < 0.1:
        q = re.sub(r"'", "", q)  # "whats", "dont": apostrophes are optional when typing
    return q + ("?" * int(rng.integers(0, 3)) if not q.endswith("?") else "")
