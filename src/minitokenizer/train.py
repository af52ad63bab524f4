"""Learning BPE merges: the naive loop a learner reads first, then an incremental one.

What it is: two functions that take the pre-tokens of a training text (the pieces the split
regex cut it into) and return the list of merges, `[(left_id, right_id), ...]`, where merge k
mints token id 256 + k. Both give IDENTICAL merges (tests/test_bpe.py checks it on random
corpora); the incremental one is what `BPETokenizer.train` uses by default.
What it leaves out: the regex split and special tokens (bpe.py), any parallelism.
Follows Sennrich et al. 2016 (BPE for words) and GPT-2 (bytes, not characters); the merge loop
is explained in theory/06-bpe-tokenizer.md.

The rule both trainers share: count every pair of adjacent tokens inside each pre-token
(overlapping pairs count: "aaa" holds (a, a) twice), pick the most frequent pair, break ties by
the lowest pair of ids, and replace it left to right, without overlap, everywhere.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict

Pair = tuple[int, int]


def pair_counts(seqs: list[list[int]], weights: list[int] | None = None) -> Counter[Pair]:
    """How often each adjacent pair occurs, summed over the sequences (times their weight).

    Example: pair_counts([[1, 2, 3, 1, 2]]) -> Counter({(1, 2): 2, (2, 3): 1, (3, 1): 1})
    """
    counts: Counter[Pair] = Counter()
    for i, seq in enumerate(seqs):
        w = 1 if weights is None else weights[i]
        for pair in zip(seq, seq[1:]):
            counts[pair] += w
    return counts


def merge(ids: list[int], pair: Pair, new_id: int) -> list[int]:
    """Replace every occurrence of `pair` in `ids` by `new_id`, scanning left to right.

    Example: merge([97, 97, 97, 98], (97, 97), 256) -> [256, 97, 98]
    """
    out = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(new_id)  # the pair becomes one token ...
            i += 2  # ... and its right half cannot start another pair (no overlap)
        else:
            out.append(ids[i])
            i += 1
    return out


def best_pair(counts: Counter[Pair]) -> Pair:
    """The most frequent pair; among equals, the lowest pair of ids (a deterministic tie-break)."""
    return min(counts, key=lambda p: (-counts[p], p))


def train_naive(pretokens: list[str], n_merges: int) -> list[Pair]:
    """The textbook loop: recount every pair of the whole corpus before every merge.

    O(n_merges x corpus length): read this one first, use the incremental one.
    Stops early when no pair is left (every pre-token is a single token).
    """
    seqs = [list(p.encode("utf-8")) for p in pretokens]  # one byte list per pre-token
    merges: list[Pair] = []
    for k in range(n_merges):
        counts = pair_counts(seqs)  # count every adjacent pair, in every pre-token
        if not counts:
            break  # nothing left to merge
        pair = best_pair(counts)  # the most frequent pair wins
        new_id = 256 + k  # mint a new token for it
        seqs = [merge(seq, pair, new_id) for seq in seqs]  # and replace it everywhere
        merges.append(pair)
    return merges


def train_incremental(pretokens: list[str], n_merges: int) -> list[Pair]:
    """The same merges as `train_naive`, without recounting the corpus at every step.

    Two observations make it fast. (1) The same pre-token (" the") occurs thousands of times:
    merge each DISTINCT pre-token once and weight its pairs by how often it occurs. (2) A merge
    changes only the pre-tokens that contain its pair: remember, for each pair, which
    pre-tokens hold it, and update only their pair counts. A heap keeps the best pair at hand;
    entries whose count has since changed are stale and skipped when popped.

    Example: train_incremental(["aaab", "daaab", "ac"], 3) == train_naive(same, 3)
    """
    freq = Counter(pretokens)  # distinct pre-token -> how many times it occurs
    seqs = [list(p.encode("utf-8")) for p in freq]  # [W] byte lists, one per distinct pre-token
    weights = list(freq.values())  # [W]
    counts = pair_counts(seqs, weights)  # pair -> weighted count over the corpus
    where: defaultdict[Pair, set[int]] = defaultdict(set)  # pair -> indices of seqs holding it
    for i, seq in enumerate(seqs):
        for pair in zip(seq, seq[1:]):
            where[pair].add(i)
    # A min-heap on (-count, pair) pops the highest count, then the lowest pair: best_pair's order.
    heap = [(-c, p) for p, c in counts.items()]
    heapq.heapify(heap)

    merges: list[Pair] = []
    for k in range(n_merges):
        # Pop until the top entry still holds its pair's current count (others are stale).
        while heap and counts.get(heap[0][1], 0) != -heap[0][0]:
            heapq.heappop(heap)
        if not heap:
            break  # nothing left to merge
        _, pair = heapq.heappop(heap)
        new_id = 256 + k
        changed = set()  # pairs whose count this merge changes
        for i in where.pop(pair):
            seq, w = seqs[i], weights[i]
            new_seq = merge(seq, pair, new_id)
            if len(new_seq) == len(seq):
                continue  # subtle: a stale index (the pair left this seq in an earlier merge)
            # Take this pre-token's old pairs out of the counts, put its new pairs in.
            for p in zip(seq, seq[1:]):
                counts[p] -= w
                changed.add(p)
            for p in zip(new_seq, new_seq[1:]):
                counts[p] += w
                changed.add(p)
                where[p].add(i)
            seqs[i] = new_seq
        for p in changed:  # push the fresh counts; drop the pairs that vanished
            if counts[p] > 0:
                heapq.heappush(heap, (-counts[p], p))
            else:
                del counts[p]
        merges.append(pair)
    return merges
