"""``vtt``, the command line: one module per command group (:mod:`vtt.cli.main` registers them)."""

from .main import main

__all__ = ["main"]
