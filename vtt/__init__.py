"""vtt: run a live Video Turing Test and report on it.

The app factory is ``vtt.app.create_app``.  This module imports nothing, so ``vtt serve`` and
``run.py`` can monkey-patch for gevent before Flask, SQLAlchemy or Redis are imported.
"""
