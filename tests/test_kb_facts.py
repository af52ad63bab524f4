"""Facts of the KB that a grammar audit corrected, held where a test can hold them: the rules
of its tables (-ed and -s sounds, prefixes and suffixes, -o spellings), the order of the
modal-strength table, and the wording of each corrected statement (so a later edit cannot
quietly bring the error back). The irregular verb forms are tests/test_kb.py's (lemminflect).
"""

import re

import pytest

from minirag.files.kb import DEFAULT_KB, read_kb

DOCS = {d.doc_id: d for d in read_kb(DEFAULT_KB)}


def section(doc_id: str, heading: str) -> str:
    return DOCS[doc_id].section_text(heading)


def flat(text: str) -> str:
    """Markdown emphasis dropped, one space between words, lower case."""
    return " ".join(text.replace("*", "").lower().split())


def table_rows(text: str) -> list[list[str]]:
    """The body rows of every markdown table in `text` (the lines after a header and its rule),
    as lists of stripped cells."""
    lines = text.splitlines()
    rows = []
    for i in range(2, len(lines)):
        rule_above = any(set(lines[j].strip()) <= set("|-: ") and lines[j].startswith("|")
                         for j in range(1, i))
        in_table = all(lines[j].startswith("|") for j in range(i - 2, i + 1))
        if in_table and rule_above and not set(lines[i].strip()) <= set("|-: "):
            rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
    return rows


def words_of(cell: str) -> list[str]:
    return re.findall(r"[a-z]+", cell.lower().split("(")[0])


# ------------------------------------------------------------------ rules in tables

VOICELESS_ENDINGS = ("p", "k", "f", "gh", "s", "ss", "sh", "ch", "x", "th")  # spelled


def test_ed_sound_table_follows_its_own_rule():
    rows = {r[0]: words_of(r[2]) for r in table_rows(DOCS["pronunciation-of-endings.md"].text)
            if r[0] in ("/ɪd/", "/t/", "/d/")}
    assert set(rows) == {"/ɪd/", "/t/", "/d/"}
    for form in rows["/ɪd/"]:  # an extra syllable after t and d only
        assert form.endswith("ed") and re.sub(r"e?d$", "", form)[-1:] in "td", form
    for form in rows["/t/"]:  # after a voiceless sound
        assert form.endswith("ed") and form[:-2].endswith(VOICELESS_ENDINGS), form
    for form in rows["/d/"]:  # never after t or d
        assert form.endswith("ed") and form[-3] not in "td", form


def test_s_sound_table_puts_the_extra_syllable_after_hissing_sounds():
    rows = {r[0]: r for r in table_rows(DOCS["pronunciation-of-endings.md"].text)
            if r[0] in ("/s/", "/z/", "/ɪz/")}
    hissing = ("s", "x", "z", "sh", "ch", "ge")
    for form in words_of(rows["/ɪz/"][2]) + words_of(rows["/ɪz/"][3]):
        assert form.endswith("es") and form[:-2].endswith(hissing) or form[:-1].endswith("ge"), form
    for form in words_of(rows["/s/"][2]) + words_of(rows["/s/"][3]):
        assert form[:-1].endswith(VOICELESS_ENDINGS + ("t",)), form


def test_prefix_and_suffix_examples_carry_their_affix():
    rows = table_rows(DOCS["word-formation.md"].text)
    checked = 0
    for row in rows:
        affix, examples = row[0], row[-1]
        if not re.fullmatch(r"-?[a-z]+-?( / -?[a-z]+-?)*", affix):
            continue
        forms = [a.strip("-") for a in affix.split(" / ")]
        for word in re.split(r"[,;]", examples.split("(")[0]):
            word = word.strip().strip("*").lower()
            if not word:
                continue
            if affix.endswith("-"):  # a prefix: the word starts with it
                assert any(word.startswith(f) for f in forms), (affix, word)
            else:  # a suffix: the word ends with it, or with its -ise / -ible twin
                assert any(word.endswith(f) or word.endswith(f.replace("z", "s"))
                           for f in forms), (affix, word)
            checked += 1
    assert checked > 40


@pytest.mark.parametrize("doc_id", ["spelling-third-person-s.md", "present-simple.md",
                                    "plural-nouns.md"])
def test_an_o_takes_es_only_after_a_consonant(doc_id):
    arrows = re.findall(r"\b([a-z]+o) → ([a-z]+)\b", flat(DOCS[doc_id].text))
    assert arrows, doc_id
    for base, form in arrows:
        if base[-2] in "aeiou":  # zoo, radio, video, boo: just -s
            assert form == base + "s", (base, form)


def test_prohibition_is_as_strong_as_must_in_the_strength_table():
    rows = [r[0].split(" / ")[0].strip("*").lower() for r in table_rows(
        section("modal-verbs-obligation-and-advice.md", "Strength of obligation and advice"))]
    # strongest first: must, then prohibition beside it, lack of obligation last
    assert rows[0] == "must" and rows[1] == "mustn't" and rows[-1] == "don't have to"


# --------------------------------------------------- corrected statements stay corrected

FIXED = [
    # (file, what it must say, what it must not say)
    ("mixed-conditionals.md", r"i hope you had a good trip", r"not a past one"),
    ("modal-verbs-obligation-and-advice.md", r"american english", r"only british"),
    ("modal-verbs-obligation-and-advice.md", r"must leave early tomorrow", None),
    ("spelling-third-person-s.md", r"radio → radios", None),
    ("past-simple.md", r"single vowel", None),
    ("present-continuous.md", r"single vowel", None),
    ("past-continuous.md", r"single vowel", None),
    ("irregular-verbs-variants.md", r"knelt, leapt and dwelt are common", None),
    ("irregular-verbs-variants.md", r"throve is old-fashioned everywhere", None),
    ("irregular-verbs-abb.md", r"sped up / speeded up", None),
    ("irregular-verbs-aaa.md", r"bursting, costing, hurting", None),
    ("irregular-verbs-aba.md", r"i'm beat", None),
    ("prepositions-of-place.md", r"in hospital \(british english\) / she's in the hospital", None),
    ("irregular-plurals.md", r"artists' materials", None),
    ("irregular-plurals.md", r"the singular stair exists", None),
    ("irregular-plurals.md", r"not ~~a pair of news~~", None),
    ("reported-speech.md", r"tell the truth", None),
    ("comparatives-and-superlatives.md", r"unhappier", None),
    ("irregular-comparatives.md", r"elder statesman", r"only for people in the same family"),
    ("adverbs.md", r"very likely", None),
]


@pytest.mark.parametrize("doc_id, must, must_not", FIXED, ids=lambda x: str(x)[:30])
def test_a_corrected_statement_stays_corrected(doc_id, must, must_not):
    text = flat(DOCS[doc_id].text)
    assert re.search(must, text), f"{doc_id} no longer says {must!r}"
    if must_not:
        assert not re.search(must_not, text), f"{doc_id} says {must_not!r} again"


def test_the_aba_note_calls_beat_an_adjective():
    text = flat(section("irregular-verbs-aba.md", "Past same as the base: beat, beat, beaten"))
    assert "adjective" in text and "i'm beat" in text


CAUSATIVE = re.compile(r"\b(?:have|has|had|having|get|gets|got|getting) "
                       r"(?:my|your|his|her|its|our|their|the|that|this) \w+ (\w+)\b")


@pytest.mark.parametrize("heading", ["Form: have + object + past participle",
                                     "Have something done in different tenses",
                                     "Get something done",
                                     "Things that happen to you: have something stolen"])
def test_have_something_done_takes_a_past_participle(heading):
    """Every "have/get + the object + verb" of these sections uses the participle (lemminflect
    says so), struck-through wrong forms aside."""
    lemminflect = pytest.importorskip("lemminflect")
    text = re.sub(r"~~[^~]*~~", " ", section("causative-have-and-get.md", heading))
    forms = CAUSATIVE.findall(flat(text))
    assert forms, heading
    not_participles = [w for w in forms if not any(
        w in lemminflect.getInflection(lemma, "VBN")
        for lemma in lemminflect.getLemma(w, upos="VERB"))]
    assert not_participles == []
