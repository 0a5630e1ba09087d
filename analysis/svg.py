"""A report figure as SVG to put inline in a web page: the PDF's own drawing, not a second chart.

ReportLab renders the :mod:`analysis.charts` drawings to SVG; this trims what does not belong inside
an HTML page (XML prolog, doctype, a placeholder title, a fixed element id that several figures on
one page would share) and names the figure for screen readers.  Text keeps the report font's name
first, then the page's own sans-serif fonts (browsers do not get the 4 MB TrueType file).

ReportLab styles each shape with a ``style="..."`` attribute, which the app's Content-Security-Policy
(``style-src 'self'``) refuses: the browser would draw every shape filled black and every label at its
default size.  Each of those declarations becomes the SVG presentation attribute of the same name
(``fill=``, ``stroke-dasharray=``, ``font-size=``...), which the policy lets through, so every figure a
page shows is styled by attributes alone.  Where ReportLab's SVG differs from its PDF, the SVG follows the PDF:
a fill's ``fillOpacity``, a line join (which ReportLab writes as the line cap: round caps close the AI line's dash
gaps) and colours to the byte (ReportLab rounds them down to whole percents).
"""

from __future__ import annotations

import re
from io import StringIO
from xml.sax.saxutils import escape, unescape

from reportlab.graphics import renderSVG
from reportlab.graphics.shapes import Drawing, Group
from reportlab.lib import colors

from .fonts import register_fonts

FALLBACK_FONTS = '"Noto Sans KR", system-ui, sans-serif'
# The properties ReportLab's renderSVG writes into style attributes; each is a presentation attribute too.
PRESENTATION_ATTRIBUTES = frozenset(
    {
        "fill",
        "fill-opacity",
        "fill-rule",
        "stroke",
        "stroke-opacity",
        "stroke-width",
        "stroke-linecap",
        "stroke-linejoin",
        "stroke-dasharray",
        "stroke-dashoffset",
        "font-family",
        "font-size",
        "font-weight",
        "font-style",
        "font-variant",
    }
)
LINE_JOINS = {0: "miter", 1: "round", 2: "bevel"}  # ReportLab's codes, as the PDF's
_STYLE_ATTRIBUTE = re.compile(r' style="([^"]*)"')


def inline_svg(drawing: Drawing, label: str) -> str:
    """``<svg role="img" ...>`` markup of ``drawing``, scalable (viewBox), titled ``label``, without inline style."""
    regular, bold = register_fonts()
    family = f"{regular}, {FALLBACK_FONTS}"
    drawing = _opacity_in_colours(drawing)
    canvas = _PageCanvas(
        (drawing.width, drawing.height),
        useClip=True,  # a clip rectangle instead of a clipPath with a page-wide id
        fontHacks={regular: {"family": family}, bold: {"family": family, "weight": "bold"}},
        svgAttrs={"role": "img", "aria-label": label, "class": "chart"},
    )
    renderSVG.draw(drawing, canvas)
    written = StringIO()
    canvas.save(written)
    markup = written.getvalue()
    markup = markup[markup.index("<svg") :]
    markup = re.sub(r"<title>\.\.\.</title>\s*<desc>\.\.\.</desc>", f"<title>{escape(label)}</title>", markup, count=1)
    return _STYLE_ATTRIBUTE.sub(_presentation_attributes, markup.replace(' id="group"', "", 1))


class _PageCanvas(renderSVG.SVGCanvas):
    """ReportLab's SVG canvas, drawing joins and colours as its PDF canvas does."""

    def setLineJoin(self, v) -> None:
        if self._lineJoin != v:
            self._lineJoin = v
            self.style["stroke-linejoin"] = LINE_JOINS[v]

    def _formatStyle(self, include=(), exclude="", **kwds) -> str:
        if "stroke-width" in include:  # a stroked shape: with its join, which ReportLab's lists of styles leave out
            include = [*include, "stroke-linejoin"]
        return super()._formatStyle(include, exclude, **kwds)

    def setStrokeColor(self, color) -> None:
        super().setStrokeColor(color)
        if color is not None:
            self.style["stroke"] = color.hexval().replace("0x", "#")

    def setFillColor(self, color) -> None:
        super().setFillColor(color)
        if color is not None:
            self.style["fill"] = color.hexval().replace("0x", "#")


def _presentation_attributes(style: re.Match) -> str:
    """`` fill="..." stroke="..."`` for `` style="fill: ...; stroke: ..."``."""
    attributes: dict[str, str] = {}
    for declaration in unescape(style.group(1), {"&quot;": '"'}).split(";"):
        if not declaration.strip():
            continue
        name, colon, value = (part.strip() for part in declaration.partition(":"))
        if not colon or name not in PRESENTATION_ATTRIBUTES:
            raise ValueError(f"no SVG presentation attribute for the style {declaration.strip()!r}")
        attributes[name] = value
    return "".join(f' {name}="{escape(value, {chr(34): "&quot;"})}"' for name, value in attributes.items())


def _opacity_in_colours(node):
    """``node`` with each translucent fill's opacity in its colour (a copy where one is): ReportLab's SVG renderer
    reads a fill's opacity from the colour's alpha only, where the PDF renderer also reads ``fillOpacity`` (the
    single player's radar is filled at 18 %)."""
    if isinstance(node, Group):
        copy = node.copy()
        copy.contents = [_opacity_in_colours(child) for child in node.contents]
        return copy
    opacity, colour = getattr(node, "fillOpacity", None), getattr(node, "fillColor", None)
    if opacity is None or colour is None:
        return node
    copy = node.copy()
    copy.fillColor = colors.Color(colour.red, colour.green, colour.blue, alpha=colour.alpha * opacity)
    return copy
