"""An example the KB gives, read off the list it introduces with a colon.

What it is: the KB lists its examples after a colon whose lead says what they are examples of
("Common inseparable verbs: look after (take care of), look for ...", "Verbs ending in -c add
k: panic → panicked"). For a question that asks for an example (`asks_example`),
`listed_example` finds the colon whose lead shares the most of the question's content words
(two at least, compared by stem) and answers with the first item of its list ("look after"),
as the window writes it. The reader uses it only where its model would abstain (reader.py).
What it leaves out: an example given in a sentence of its own, with no lead and colon ("Sheep
is the same in the plural."): the span reader's to find; a lead that shares two words with the
question but not the one that matters (the -c verbs asked for, the -z verbs listed); which item
of a list fits a question best (the first is the KB's own first choice).
Why: theory/07 §9, "Some answers need no model".
"""

from __future__ import annotations

import re

from minirag.forms import stem
from minirag.reader_inputs import content_stems

# "example(s)", or a request for one ("give a verb which ...", "name a noun ...")
ASKS = re.compile(r"\bexamples?\b|^(?:pls |please )?(?:give|name|tell)(?: me)? (?:a|an|one|some)\b")
# words of a request for an example that say nothing of what it is an example of
REQUEST_STEMS = frozenset(stem(w) for w in "example examples give name tell one some please pls"
                          .split())
MIN_SHARED = 2  # content words a lead must share with the question
# a colon, the text before it back to its clause's start, and its list to the line's end
LIST = re.compile(r"(?:^|(?<=[.!?;])\s)[ \t\-*]*(?P<lead>[^.!?;:\n]+):[ \t]*(?P<items>[^\n]+)",
                  re.MULTILINE)
ITEM_END = re.compile(r"\s*(?:[,;(→]|\.(?:\s|$)|\s/\s)")


def asks_example(question: str) -> bool:
    """Does the question ask for an example ("example of ...", "give a verb which ...")?"""
    return bool(ASKS.search(question.lower()))


def listed_example(windows: list[str], question: str) -> tuple[int, str, str] | None:
    """(window index, the first item of a list, its lead) for a question that asks for an
    example: the list whose lead shares the most content words with the question, MIN_SHARED
    at least (the first of equals); None if no lead shares enough.
    Example: listed_example(["Verbs ending in -c add k: panic → panicked, picnic → picnicked"],
        "name one verb which adds k before -ed") -> (0, "panic", "Verbs ending in -c add k")"""
    if not asks_example(question):
        return None
    asked, best, most = content_stems(question) - REQUEST_STEMS, None, MIN_SHARED - 1
    for n, window in enumerate(windows):
        for found in LIST.finditer(window):
            shared = len(asked & content_stems(found.group("lead")))
            first = ITEM_END.split(found.group("items").strip(), maxsplit=1)[0].strip()
            if shared > most and first:
                best, most = (n, first, found.group("lead").strip()), shared
    return best
