"""Where the MiniBiEncoder's training starts: its token table and an identity MLP.

What it is: two starts for the tower. "lsa": token vectors are the top right singular vectors
of the KB's chunk x token matrix (Deerwester et al., 1990), so the untrained tower is LSA.
"teacher": token vectors are the teacher's (all-MiniLM-L6-v2) embeddings of each vocabulary
item, reduced by PCA to the tower's width: a static table distilled in one pass, as Model2Vec
does (Tulkens and van Dongen, 2024), so the untrained tower is a weighted bag of the teacher's
word vectors. Both leave the MLP an exact identity on the first D coordinates.
What it leaves out: the teacher itself (training/distill.py embeds the vocabulary and caches
it); the "random" start is the model's own initialisation. Measured: theory/01, lab 01.

Shape letters: N texts, V + K the model's ids (BPE tokens + word buckets), C token vector
width, H MLP width, D output width, E the teacher's width (384).
"""

from __future__ import annotations

import numpy as np

from minirag.encoders.biencoder import MiniBiEncoder


def identity_mlp(model: MiniBiEncoder) -> None:
    """Make the MLP exactly the identity on the first D coordinates of the pooled vector,
    because gelu(x) - gelu(-x) = x: W1 = [I, -I] (C x 2C), W2 = [[I_D], [-I_D]] (2C x D)."""
    C, D, H = model.cfg.d_embed, model.cfg.d, model.cfg.d_hidden
    if H < 2 * C or D > C:
        raise ValueError(f"this start needs d_hidden ({H}) >= 2 * d_embed ({C}) >= 2 * d ({D})")
    p = model.params
    p["w1"][...], p["w2"][...], p["b1"][...], p["b2"][...] = 0.0, 0.0, 0.0, 0.0
    p["w1"][:, :C], p["w1"][:, C:2 * C] = np.eye(C), -np.eye(C)  # [C, H]
    p["w2"][:D], p["w2"][C:C + D] = np.eye(D), -np.eye(D)  # [H, D]


def unit_scale(model: MiniBiEncoder, emb: np.ndarray, id_lists: list[list[int]]) -> np.ndarray:
    """emb [V + K, C] scaled so that the pooled vectors of the texts have unit standard
    deviation: the GELU then sees inputs of the scale its curve is shaped for."""
    X = np.zeros((len(id_lists), len(model.idf)))  # [N, V + K]
    for i, ids in enumerate(id_lists):
        np.add.at(X[i], ids, 1.0)  # term counts
    X = np.log1p(X) * model.idf  # [N, V + K] as the pooling weighs them
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)  # (as lsa_table's X)
    pooled = (X @ emb) / np.maximum(X.sum(axis=1, keepdims=True), 1e-12)  # [N, C]
    return emb / max(float(pooled.std()), 1e-12)


def lsa_table(model: MiniBiEncoder, id_lists: list[list[int]], k: int) -> np.ndarray:
    """The top k LSA token vectors [V + K, k]: X[i, t] = log(1 + tf) idf(t) for chunk i, rows
    L2-normalised; X = U S V^T; token vectors = the first k columns of V (an id no chunk uses
    gets the zero vector), so a text's pooled vector is its LSA projection (up to length)."""
    X = np.zeros((len(id_lists), len(model.idf)))  # [N, V + K]
    for i, ids in enumerate(id_lists):
        np.add.at(X[i], ids, 1.0)  # term counts
    X = np.log1p(X) * model.idf  # [N, V + K] sublinear tf * idf, as the pooling weighs them
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    vt = np.linalg.svd(X, full_matrices=False)[2]  # [min(N, V + K), V + K]
    return vt[:k].T  # [V + K, k]


def lsa_init(model: MiniBiEncoder, id_lists: list[list[int]]) -> None:
    """Start the whole tower as LSA: token vectors are lsa_table's, and the MLP passes the
    first D coordinates through unchanged."""
    identity_mlp(model)
    model.params["tok_emb"][...] = unit_scale(model, lsa_table(model, id_lists,
                                                               model.cfg.d_embed), id_lists)


def pca(vectors: np.ndarray, k: int) -> np.ndarray:
    """The rows of vectors [n, E] on their top k principal axes: [n, k] (NumPy's SVD).

    Centre (the mean row is what every item shares: removing it is "all-but-the-top", Mu and
    Viswanath, 2018), X = U S V^T, coordinates = X V_k. subtle: an SVD's signs are arbitrary;
    each axis is flipped so its largest-magnitude loading is positive, for the same table on
    any LAPACK."""
    X = vectors - vectors.mean(axis=0)  # [n, E]
    vt = np.linalg.svd(X, full_matrices=False)[2][:k]  # [k, E]
    big = np.abs(vt).argmax(axis=1)  # [k]
    vt *= np.sign(vt[np.arange(len(vt)), big])[:, None]
    return X @ vt.T  # [n, E] @ [E, k] -> [n, k]


def teacher_init(model: MiniBiEncoder, vectors: np.ndarray, known: np.ndarray,
                 id_lists: list[list[int]], lsa_dims: int = 0) -> np.ndarray:
    """Start the tower from the teacher: token vector of id t = PCA_C(teacher vector of t),
    whitened, 0 for ids the teacher gave nothing (`known` [V + K] False); identity MLP.
    Pooling weights stay the model's IDF (set_idf with `known`: an unseen word still counts).
    With lsa_dims > 0 the first lsa_dims coordinates are LSA's (lsa_table: what tells the
    KB's words apart, "went" from "gone") and the other C - lsa_dims the teacher's (what a
    word means, for words the KB never shows too), each block at unit pooled scale.
    Returns the start table [V + K, C] (a copy), which training keeps unseen rows near.
    Example: vectors = the teacher's embeddings of " cat", " dog", " rain" -> a table whose
    " cat" and " dog" rows are closer to each other than to " rain"."""
    C = model.cfg.d_embed
    if vectors.shape != (len(model.idf), vectors.shape[1]) or vectors.shape[1] < C:
        raise ValueError(f"teacher vectors {vectors.shape}: need ({len(model.idf)}, >= {C})")
    if not 0 <= lsa_dims < C:
        raise ValueError(f"lsa_dims ({lsa_dims}) must be in [0, d_embed = {C})")
    identity_mlp(model)
    emb = np.zeros((len(model.idf), C - lsa_dims))  # [V + K, C - L]
    Z = pca(vectors[known].astype(np.float64), C - lsa_dims)  # [n_known, C - L]
    # whitened: each axis at unit variance, so the top few do not drown the other C - few in
    # every cosine (the static table's dev recall rose with it: EXPERIMENTS.md)
    emb[known] = Z / np.maximum(Z.std(axis=0), 1e-12)  # [n_known, C]
    emb = unit_scale(model, emb, id_lists)  # [V + K, C - L]
    if lsa_dims:
        lsa = unit_scale(model, lsa_table(model, id_lists, lsa_dims), id_lists)  # [V + K, L]
        emb = unit_scale(model, np.concatenate([lsa, emb], axis=1), id_lists)  # [V + K, C]
    model.params["tok_emb"][...] = emb
    return model.params["tok_emb"].copy()
