"""The words learners ask with: the vocabulary `questions.py` composes questions from.

What it is: lists, not logic: subjects, objects and time cues that imply a tense; the many
names of each relation ("past tense", "2nd form", "v2"); the frames of a question (the key
first, a gapped sentence, "A or B?", "is this correct?"); and the off-topic asides that borrow
a word. Written from how learners type, never from the eval questions: every question composed
from them passes the shared eval filter (eval_filter.py) before training sees it.
"""

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
