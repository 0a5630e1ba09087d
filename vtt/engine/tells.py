"""Identity tells: phrases that give a player away as a program (the one list of them).

Before the jury sees a question's answers, the host is warned of any answer containing one of
these, so it can be redacted or edited.  Matching ignores case and collapses whitespace.
"""

from __future__ import annotations

import re

TELL_PHRASES = (
    # English
    "as an ai",
    "as an a.i.",
    "i am an ai",
    "i'm an ai",
    "an ai model",
    "ai language model",
    "language model",
    "as a model",
    "i cannot watch",
    "i can't watch",
    "i cannot view",
    "i can't view",
    "i cannot see the video",
    "i can't see the video",
    "i don't have access to the video",
    "i do not have access to the video",
    "i am not able to watch",
    "i'm not able to watch",
    "provided frames",
    "based on the provided",
    "the given frames",
    "chatgpt",
    "openai",
    "gpt-4",
    "as an assistant",
    "i'm sorry, but i",
    # Korean
    "ai로서",
    "ai 로서",
    "인공지능으로서",
    "인공지능",
    "언어 모델",
    "언어모델",
    "ai 모델",
    "저는 ai",
    "챗gpt",
    "영상을 볼 수 없",
    "영상을 시청할 수 없",
    "동영상을 볼 수 없",
    "시청할 수 없",
    "제공된 프레임",
    "제공된 정보에 따르면",
    "죄송하지만",
)

_SPACES = re.compile(r"\s+")


def identity_tells(text: str) -> list[str]:
    """The tell phrases found in ``text``, in list order (empty when it reads like anyone's answer)."""
    folded = _SPACES.sub(" ", text.casefold()).replace("\u2019", "'")
    return [phrase for phrase in TELL_PHRASES if phrase in folded]
