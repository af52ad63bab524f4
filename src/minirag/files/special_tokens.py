"""The special tokens of the project tokenizer: the reader prompt's delimiters and markers.

Only code inserts them (`BPETokenizer.encode_special`); `encode` never produces them, even
for text that spells "<|q|>", so text in a chunk cannot forge a delimiter or a citation
marker. This is the prompt's injection boundary (theory/06, theory/05).
"""

PAD = "<|pad|>"  # fills a batch row after the sequence ends; never scored
EOS = "<|eos|>"  # ends the reader's answer
CTX = "<|ctx|>"  # opens one retrieved chunk in the compact prompt
Q = "<|q|>"  # opens the question
A = "<|a|>"  # opens the answer: the reader generates after it
IDK = "<|idk|>"  # the reader's abstention: "I don't know - not in the rules I have."
MARKERS = ("<|#1|>", "<|#2|>", "<|#3|>", "<|#4|>")  # citation markers [#1]..[#4]

SPECIAL_TOKENS = [PAD, EOS, CTX, Q, A, IDK, *MARKERS]
