"""Numbers as the PDFs print them (markup): one decimal by default, p-values, intervals; "–" for a missing one."""

from __future__ import annotations

import pandas as pd


def number_text(value, digits: int = 1) -> str:
    return "–" if value is None or pd.isna(value) else f"{value:.{digits}f}"


def p_text(value) -> str:
    if value is None or pd.isna(value):
        return "–"
    return "&lt; 0.001" if value < 0.001 else f"{value:.3f}"


def p_equation(value) -> str:
    """``p = 0.031`` or ``p < 0.001`` (markup)."""
    text = p_text(value)
    return f"p {text}" if text.startswith("&lt;") else f"p = {text}"


def interval_text(low, high) -> str:
    return "–" if low is None or pd.isna(low) else f"{low:.1f}–{high:.1f}"
