"""Tests of search: keyword ranking, the full-text indexes, vectors, embeddings, hybrid."""
