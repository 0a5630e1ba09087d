"""The CogME taxonomy: the one place that names its modules, elements and aliases.

"I understand the CONTENT of the TARGET through a way of THINKING."  Every other module
(importers, scoring, reports, pages) asks this one for canonical names, so a bank that says
``grasping`` or ``BEHAVIOUR`` ends up counted under ``Recognition`` and ``Behavior``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple


class Module(StrEnum):
    TARGET = "target"
    CONTENT = "content"
    THINKING = "thinking"


ELEMENTS: dict[Module, tuple[str, ...]] = {
    Module.TARGET: (
        "Character",
        "Object",
        "Place",
        "Conversation",
        "Behavior",
        "Event",
        "Emotion",
        "Commonsense",
    ),
    Module.CONTENT: (
        "Identity",
        "Feature",
        "Relationship",
        "Means",
        "Context",
        "Sequence",
        "Causality",
        "Motivation",
    ),
    Module.THINKING: ("Recall", "Recognition", "Reasoning"),
}

# Optional TARGET extensions; accepted on input, listed after the core elements in reports.
EXTENSIONS: dict[Module, tuple[str, ...]] = {Module.TARGET: ("Time", "Humor"), Module.CONTENT: (), Module.THINKING: ()}

# Other spellings found in the papers and in the wild -> canonical name.
ALIASES: dict[str, str] = {
    "grasping": "Recognition",
    "recognize": "Recognition",
    "recognise": "Recognition",
    "recognising": "Recognition",
    "recognizing": "Recognition",
    "recognisation": "Recognition",
    "behaviour": "Behavior",
    "common sense": "Commonsense",
    "common-sense": "Commonsense",
    "humour": "Humor",
    "relation": "Relationship",
    "causation": "Causality",
    "motive": "Motivation",
}

# Highest thinking first: a question carries only the highest one it needs.
THINKING_ORDER: tuple[str, ...] = ("Reasoning", "Recognition", "Recall")

MAX_TAGS = 3
KEY_MARK = "*"


def all_elements(module: Module, *, extensions: bool = True) -> tuple[str, ...]:
    """The element names of one module in report order (core first, then extensions)."""
    return ELEMENTS[module] + (EXTENSIONS[module] if extensions else ())


def element_order() -> list[tuple[Module, str]]:
    """Every (module, element) pair in the order reports list them."""
    return [(module, element) for module in Module for element in all_elements(module)]


_LOOKUP: dict[str, tuple[Module, str]] = {name.lower(): (module, name) for module, name in element_order()}
for _alias, _name in ALIASES.items():
    _LOOKUP[_alias] = _LOOKUP[_name.lower()]


class UnknownElement(ValueError):
    """A tag that names no CogME element (or an element of another module)."""


def lookup(name: str) -> tuple[Module, str]:
    """``(module, canonical name)`` for any spelling of an element; raises :class:`UnknownElement`."""
    key = " ".join(name.strip().lower().split())
    try:
        return _LOOKUP[key]
    except KeyError:
        raise UnknownElement(f"unknown CogME element {name.strip()!r}") from None


def canonical(name: str, module: Module) -> str:
    """The canonical name of ``name`` inside ``module``; raises :class:`UnknownElement` otherwise."""
    found_module, element = lookup(name)
    if found_module is not module:
        raise UnknownElement(f"{element!r} is a {found_module.value.upper()} element, not {module.value.upper()}")
    return element


def split_tags(value: str | list | tuple | None) -> list[str]:
    """Split a tag field (``"Character;Object*"``, ``"a|b"``, ``"a, b"`` or a list) into raw items."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        items = [str(v) for v in value]
    else:
        items = re.split(r"[;|,]", str(value))
    return [item.strip() for item in items if item and item.strip()]


class TagProblem(NamedTuple):
    """One thing wrong with a question's tags, and the module it concerns (so a reader can name the field)."""

    module: Module
    message: str

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class TagSet:
    """The CogME annotation of one question, canonical names only."""

    targets: tuple[str, ...] = ()
    key_target: str | None = None
    contents: tuple[str, ...] = ()
    thinking: str | None = None
    problems: tuple[TagProblem, ...] = field(default=(), compare=False)

    @property
    def is_empty(self) -> bool:
        return not (self.targets or self.contents or self.thinking)

    def elements(self) -> list[tuple[Module, str]]:
        pairs = [(Module.TARGET, t) for t in self.targets] + [(Module.CONTENT, c) for c in self.contents]
        if self.thinking:
            pairs.append((Module.THINKING, self.thinking))
        return pairs

    def as_text(self) -> dict[str, str]:
        """The native-CSV spelling: ``{"targets": "Character;Object*", "contents": ..., "thinking": ...}``."""
        return {
            "targets": ";".join(t + (KEY_MARK if t == self.key_target else "") for t in self.targets),
            "contents": ";".join(self.contents),
            "thinking": self.thinking or "",
        }


def parse_tags(targets=None, contents=None, thinking=None, key_target: str | None = None) -> TagSet:
    """Parse and validate one question's tags.

    ``targets`` may mark the key target with a trailing ``*`` (``"Character;Object*"``) or name it in
    ``key_target``.  The returned :class:`TagSet` carries every problem found (empty when valid), each
    with the module it concerns (key-target problems concern TARGET);
    an entirely untagged question is valid here (importers report it as untagged, not as an error).
    """
    problems: list[TagProblem] = []

    def canon(items: list[str], module: Module) -> list[str]:
        names: list[str] = []
        for item in items:
            try:
                name = canonical(item.rstrip(KEY_MARK).strip(), module)
            except UnknownElement as exc:
                problems.append(TagProblem(module, str(exc)))
                continue
            if name in names:
                problems.append(TagProblem(module, f"{name} is tagged twice"))
            else:
                names.append(name)
        return names

    raw_targets = split_tags(targets)
    starred = [t.rstrip(KEY_MARK).strip() for t in raw_targets if t.endswith(KEY_MARK)]
    separate_key = str(key_target).strip() if key_target else ""
    target_names = canon(raw_targets, Module.TARGET)
    content_names = canon(split_tags(contents), Module.CONTENT)
    thinking_names = canon(split_tags(thinking), Module.THINKING)

    key: str | None = None
    key_names = []
    for name in starred:
        try:
            key_names.append(canonical(name, Module.TARGET))
        except UnknownElement:
            pass  # reported with the targets list above
    if separate_key:
        try:
            key_names.append(canonical(separate_key, Module.TARGET))
        except UnknownElement as exc:
            problems.append(TagProblem(Module.TARGET, f"key target: {exc}"))
    key_names = list(dict.fromkeys(key_names))
    if len(key_names) > 1:
        problems.append(
            TagProblem(Module.TARGET, f"more than one key target ({', '.join(key_names)}); mark at most one with '*'")
        )
    elif key_names:
        key = key_names[0]
        if key not in target_names:
            problems.append(TagProblem(Module.TARGET, f"key target {key} is not among the TARGET tags"))

    tagset = TagSet(tuple(target_names), key, tuple(content_names), thinking_names[0] if thinking_names else None)
    if not tagset.is_empty or problems:
        problems.extend(_count_problems(target_names, content_names, thinking_names))
    return TagSet(tagset.targets, tagset.key_target, tagset.contents, tagset.thinking, tuple(problems))


def _count_problems(targets: list[str], contents: list[str], thinking: list[str]) -> list[TagProblem]:
    problems = []
    for module, names in ((Module.TARGET, targets), (Module.CONTENT, contents)):
        if not 1 <= len(names) <= MAX_TAGS:
            problems.append(TagProblem(module, f"needs 1-{MAX_TAGS} {module.value.upper()} tags, has {len(names)}"))
    if len(thinking) != 1:
        hint = f" (keep only the highest: {highest_thinking(thinking)})" if len(thinking) > 1 else ""
        problems.append(TagProblem(Module.THINKING, f"needs exactly one THINKING tag, has {len(thinking)}{hint}"))
    return problems


def highest_thinking(names: list[str]) -> str | None:
    """The highest thinking level among canonical names (Reasoning > Recognition > Recall)."""
    for level in THINKING_ORDER:
        if level in names:
            return level
    return None
