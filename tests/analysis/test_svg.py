"""A report figure as inline SVG for a web page: styled by presentation attributes, which the app's
Content-Security-Policy (``style-src 'self'``) lets through, where a ``style`` attribute is refused."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from analysis import charts
from analysis.cogme import profiles
from analysis.svg import inline_svg
from tests.support.cogme_cases import worked_answers, worked_questions

SVG = "{http://www.w3.org/2000/svg}"
VERMILLION = "#d55e00"  # charts.VERMILLION
BLUE = "#0072b2"


def radar_svg(players: list[str] | None = None) -> ET.Element:
    """The TARGET radar of the worked CogME examples (A human, B the AI), as the results page draws it."""
    profile = profiles(worked_questions(), worked_answers(), "frontiers2022")
    styles = charts.player_styles([("A", "human"), ("B", "ai")])
    drawing = charts.module_radar(profile.elements, "target", styles, players=players, width=260, height=210)
    return ET.fromstring(inline_svg(drawing, "TARGET profile"))


def outlines(svg: ET.Element, colour: str) -> list[ET.Element]:
    return [shape for shape in svg.iter(f"{SVG}polygon") if shape.get("stroke") == colour]


def test_a_radar_carries_no_inline_style_and_keeps_its_colours_dashes_and_fonts():
    svg = radar_svg()
    assert [element.tag for element in svg.iter() if "style" in element.attrib] == []
    # the AI's outline: vermillion, dashed, heavier; the human's: blue, solid, thinner; neither filled
    (ai,) = outlines(svg, VERMILLION)
    (human,) = outlines(svg, BLUE)
    assert (ai.get("stroke-dasharray"), ai.get("stroke-width"), ai.get("fill")) == ("5, 2", "2.0", "none")
    assert (ai.get("stroke-linejoin"), ai.get("stroke-linecap")) == ("round", "butt")  # butt caps keep the dash gaps
    assert (human.get("stroke-dasharray"), human.get("stroke-width"), human.get("fill")) == (None, "1.2", "none")
    # the rings are grey outlines, not the black shapes an unstyled polygon is
    assert all(ring.get("fill") == "none" for ring in outlines(svg, "#c8c8c8"))
    # every text has the report font's size and family, the title in bold
    texts = list(svg.iter(f"{SVG}text"))
    assert texts and all(t.get("font-size", "").endswith("px") and "NanumGothic" in t.get("font-family") for t in texts)
    title = next(t for t in texts if t.text == "TARGET")
    assert (title.get("font-weight"), title.get("font-size"), title.get("fill")) == ("bold", "9.5px", "#000000")


def test_a_single_players_radar_is_filled_translucent_as_in_the_pdf():
    svg = radar_svg(players=["B"])
    (ai,) = outlines(svg, VERMILLION)
    assert (ai.get("fill"), ai.get("fill-opacity")) == (VERMILLION, "0.18")
    assert ai.get("stroke-opacity") is None  # the outline stays solid
