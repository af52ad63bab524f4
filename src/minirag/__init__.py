"""RAG by hand: chunking, embeddings, vector store, BM25, fusion, prompt, reader, evaluation."""
