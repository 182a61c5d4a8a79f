"""Tests of the memory core: the facade, traces, links, the graph, scopes, the journal."""
