"""Helpers the tests share: the fake Ollama server, child processes, paths, query plans."""
