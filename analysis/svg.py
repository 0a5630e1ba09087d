"""A report figure as SVG to put inline in a web page: the PDF's own drawing, not a second chart.

ReportLab renders the :mod:`analysis.charts` drawings to SVG; this trims what does not belong inside
an HTML page (XML prolog, doctype, a placeholder title, a fixed element id that several figures on
one page would share) and names the figure for screen readers.  Text keeps the report font's name
first, then the page's own sans-serif fonts (browsers do not get the 4 MB TrueType file).
"""

from __future__ import annotations

import re
from xml.sax.saxutils import escape

from reportlab.graphics import renderSVG
from reportlab.graphics.shapes import Drawing

from .fonts import register_fonts

FALLBACK_FONTS = '"Noto Sans KR", system-ui, sans-serif'


def inline_svg(drawing: Drawing, label: str) -> str:
    """``<svg role="img" ...>`` markup of ``drawing``, scalable (viewBox), titled ``label``."""
    regular, bold = register_fonts()
    family = f"{regular}, {FALLBACK_FONTS}"
    markup = renderSVG.drawToString(
        drawing,
        useClip=True,  # a clip rectangle instead of a clipPath with a page-wide id
        fontHacks={regular: {"family": family}, bold: {"family": family, "weight": "bold"}},
        svgAttrs={"role": "img", "aria-label": label, "class": "chart"},
    )
    markup = markup[markup.index("<svg") :]
    markup = re.sub(r"<title>\.\.\.</title>\s*<desc>\.\.\.</desc>", f"<title>{escape(label)}</title>", markup, count=1)
    return markup.replace(' id="group"', "", 1)
