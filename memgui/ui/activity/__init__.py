"""The Agent activity view: what agents and other programs wrote, for a person to review."""
