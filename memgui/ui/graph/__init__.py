"""The graph view: memories, their links and the knowledge graph, around what is selected."""
