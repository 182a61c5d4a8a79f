"""Committing an import plan: the accepted records written in one transaction and one batch."""
