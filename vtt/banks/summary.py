"""The CogME balance summary of a set of questions, as text for the terminal."""

from __future__ import annotations

from analysis.composition import Composition
from analysis.taxonomy import Module, all_elements

BAR_WIDTH = 30


def balance_lines(comp: Composition) -> list[str]:
    total = comp.total
    lines = [
        f"{total} questions: "
        + ", ".join(f"{n} {t}" for t, n in comp.types.items())
        + "; clips: "
        + ", ".join(f"{n} {c}" for c, n in comp.clips.items() if n or c != "none")
    ]
    lines.append(f"untagged: {len(comp.untagged)}" + (f" ({_short(comp.untagged)})" if comp.untagged else ""))
    counts = comp.element_counts()
    peak = max(counts.values(), default=0) or 1
    for module in Module:
        lines.append(f"{module.value.upper()}")
        for element in all_elements(module):
            n = counts.get(element, 0)
            share = 100 * n / total if total else 0.0
            lines.append(f"  {element:<13}{n:>6}  {share:5.1f}%  {'#' * round(BAR_WIDTH * n / peak)}")
    return lines


def _short(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", ... (+{len(items) - limit})" if len(items) > limit else "")
