"""Finding memories: by keyword (FTS5, bm25), by meaning (embeddings, sqlite-vec), both fused.

Also the indexes each write keeps in step (`fulltext`, `vectors`) and the embedder (`embed`).
"""
