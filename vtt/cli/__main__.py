"""``python -m vtt.cli``: the ``vtt`` command."""

from . import main

main()
