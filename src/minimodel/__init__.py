"""A tiny GPT in NumPy with hand-written backward passes (theory/07-minigpt-reader.md).

Knows nothing of RAG: it depends on numpy and minitokenizer only.
"""
