"""Search by meaning in the app: the embedding backfill and the Ollama light."""
