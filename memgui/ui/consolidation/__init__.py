"""The Consolidate… dialog: a consolidation plan reviewed, applied as one undoable batch."""
