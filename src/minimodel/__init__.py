"""A tiny GPT in NumPy with hand-written backward passes (see theory/07-minigpt-reader.md). Knows nothing of RAG."""
