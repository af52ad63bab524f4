"""The second stage of retrieval: a cross-encoder re-scores the first stage's top N."""
