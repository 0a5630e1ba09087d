"""``vtt``, the command line: one module per command group."""
