"""A model's reply text: how much of it is read, what is taken off before its answer is looked for, what may follow
the answer, and what of it is stored.

The answer itself is read by whoever asked (a juror's verdict, :func:`vtt.juries.ai.read_reply`; a judge's score,
:meth:`vtt.judge.rubric.Prompt.read`); JSON in it is read with :mod:`vtt.protocol.strict_json`. A reply without an
answer the reader can use is :class:`UnreadReply`: stored, never guessed at.
"""

from __future__ import annotations

import json
import re

MAX_READ = 32_000  # characters of a reply read: an answer after a longer ramble is not trusted (nor scanned)
MAX_KEPT = 4000  # characters of a reply stored
# What may follow the answer that ends a reply: spaces, a full stop, a closing code fence.
TAIL = re.compile(r"[\s.`]*")
THINKING = re.compile(r"<think>.*?(</think>|$)", flags=re.S | re.I)


class UnreadReply(ValueError):
    """A reply without an answer the reader can use (no score the prompt allows, no alias of the round, ...); the
    message says what was wrong."""


def said_of(reply: str | None) -> str:
    """The reply without its ``<think>`` block (one left open runs to the end: cut off), stripped; UnreadReply when
    the reply is longer than MAX_READ."""
    reply = reply or ""
    if len(reply) > MAX_READ:
        raise UnreadReply(f"the reply is longer than {MAX_READ:,} characters: not read")
    return THINKING.sub("", reply).strip()


def ends_at(said: str, end: int) -> bool:
    """Whether nothing but punctuation follows position ``end`` of ``said``."""
    return TAIL.fullmatch(said, end) is not None


def shown(said: str) -> str:
    """The reply's start, one line, quoted: for a message."""
    return json.dumps(" ".join(said.split())[:200], ensure_ascii=False)


def kept(reply: str) -> str:
    """The reply as stored: its first MAX_KEPT characters, a NUL or lone surrogate (which a database refuses)
    written as an escape."""
    return reply[:MAX_KEPT].encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")
