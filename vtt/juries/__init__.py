"""Juries beside the live one, judging a finished session: a displaced jury (``displaced``: people online, each
through a link of their own) and AI jurors (``ai``: a model judges each round as a juror).

No Flask here: the CLI (``vtt jury``), the views and the worker processes run it.
"""
