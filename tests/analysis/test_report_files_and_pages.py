"""The PDF reports and their CSVs: the files written, the fonts, and the pages laid out.

The PDFs are read back with poppler (pdftotext, pdfinfo, pdffonts), which ``make test`` installs.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import analysis
from analysis import charts
from analysis.fonts import FONT_DIR
from analysis.session_report import write_reports
from analysis.session_report.csv_tables import CSV_FILES
from tests.support.reports import (
    JUDGE_CSVS,
    JURY_CSVS,
    PDFS,
    SHEET_CSVS,
    VOTE_CSVS,
    page_count,
    page_size,
    pdf_text,
)

pytestmark = pytest.mark.usefixtures("poppler")


# ------------------------------------------------------------------------------------------ files


def test_every_pdf_and_csv_is_written(written):
    # exposure.csv only with a judgment sheet, the judge's files only with a judge's suggestions
    assert set(written) == PDFS | (set(CSV_FILES) - SHEET_CSVS - JUDGE_CSVS - JURY_CSVS)
    for name, path in written.items():
        assert path.name == name and path.stat().st_size > 0
    for name in PDFS:
        assert written[name].read_bytes().startswith(b"%PDF-")
        assert page_count(written[name]) >= 1  # pdfinfo parses it


def test_without_vote_statistics_there_is_no_tally_report(session, results, tmp_path):
    questions, answers, _ = session
    written = write_reports(tmp_path, questions=questions, answers=answers, profiles=results[0])
    assert set(written) == {"profiles.pdf", "report.pdf"} | (
        set(CSV_FILES) - VOTE_CSVS - SHEET_CSVS - JUDGE_CSVS - JURY_CSVS
    )
    assert not (tmp_path / "tallies.pdf").exists()
    assert "Jury votes" not in pdf_text(written["report.pdf"])


def test_vendored_fonts_and_licence_ship_with_the_package():
    for name in ("NanumGothic.ttf", "NanumGothicBold.ttf"):
        size = (FONT_DIR / name).stat().st_size
        assert 1_000_000 < size < 10_000_000
    assert "SIL Open Font License" in (FONT_DIR / "OFL.txt").read_text()
    assert FONT_DIR.parent == Path(analysis.__file__).parent


# ------------------------------------------------------------------------------------------ pages


def test_page_counts_follow_the_layout(written, results):
    profile, _ = results
    players = len(profile.players)
    assert page_count(written["profiles.pdf"]) == 1 + players  # overview, then one page per player
    tallies = page_count(written["tallies.pdf"])
    # report = profiles + tallies + question set + one landscape Q&A page
    assert page_count(written["report.pdf"]) == 1 + players + tallies + 2
    last = page_count(written["report.pdf"])
    width, height = page_size(written["report.pdf"], last)
    assert width > height  # the Q&A sheet is landscape
    width, height = page_size(written["report.pdf"], 1)
    assert width < height
    text = pdf_text(written["report.pdf"])
    assert f"page 1 of {last}" in text and f"page {last} of {last} Case study <2021> & co" in text  # footer


def radars_per_page(monkeypatch, session, results, tmp_path, session_info) -> dict[int, list[str]]:
    """Write profiles.pdf; {page: titles of the radars drawn on it ("overlay TARGET", "민준 TARGET", ...)}."""
    from reportlab.graphics.shapes import Drawing

    questions, answers, _ = session
    drawn: dict[int, list[str]] = {}
    tags: dict[int, tuple[Drawing, str]] = {}  # id -> (the drawing, kept alive so ids stay unique; its title)
    radar = charts.module_radar

    def tagged(elements, module, styles, **options):
        drawing = radar(elements, module, styles, **options)
        who = options.get("players")
        tags[id(drawing)] = (drawing, f"{who[0] if who else 'overlay'} {module.value.upper()}")
        return drawing

    def draw_on(self, canvas, x, y, *args, **kwargs):
        if id(self) in tags:
            if str(getattr(canvas, "_filename", "")).endswith("profiles.pdf"):
                drawn.setdefault(canvas.getPageNumber(), []).append(tags[id(self)][1])
        return original(self, canvas, x, y, *args, **kwargs)

    original = Drawing.drawOn
    monkeypatch.setattr(charts, "module_radar", tagged)
    monkeypatch.setattr(Drawing, "drawOn", draw_on)
    write_reports(tmp_path, questions=questions, answers=answers, profiles=results[0], session_info=session_info)
    return drawn


@pytest.mark.parametrize("cover_rows, overview_page", [(1, 1), (12, 1), (40, 2)])
def test_radars_share_pages_and_the_overview_is_never_split(
    monkeypatch, session, results, tmp_path, cover_rows, overview_page
):
    """A long cover (a live session's) once pushed the overview's third radar alone onto page 2."""
    info = {f"key {n}": f"value {n} " + "words " * (4 if cover_rows < 40 else 12) for n in range(cover_rows)}
    drawn = radars_per_page(monkeypatch, session, results, tmp_path, info)
    overview = [page for page, titles in drawn.items() if any(title.startswith("overlay") for title in titles)]
    assert len(overview) == 1  # the three overlaid radars (and their legend) on one page
    assert sorted(drawn[overview[0]]) == ["overlay CONTENT", "overlay TARGET", "overlay THINKING"]
    # on the first page beside the players' table, drawn smaller if need be; a cover too long for that: page 2
    assert overview == [overview_page]
    players = list(results[0].players["player"])
    assert len(drawn) == 1 + len(players)
    for player in players:  # a page per player, its radars two by two
        pages = [page for page, titles in drawn.items() if any(title.startswith(f"{player} ") for title in titles)]
        assert len(pages) == 1 and len(drawn[pages[0]]) >= 2
    assert all(len(titles) >= 2 for titles in drawn.values())  # never one radar alone on a page


def test_headings_are_bookmarks_to_their_own_pages(written, results):
    raw = written["profiles.pdf"].read_bytes()  # outline entries are plain (uncompressed) objects
    titles = re.findall(rb"/Title \((CogME profiles|Player: [^)]*)", raw)
    targets = re.findall(rb"/Dest \[ (\d+) 0 R", raw)
    players = len(results[0].players)
    assert len(targets) == 1 + players and len(set(targets)) == 1 + players  # overview + a page per player
    assert titles[0] == b"CogME profiles"


def test_every_font_is_embedded_nanum(written):
    for name in PDFS:
        listing = subprocess.run(
            ["pdffonts", str(written[name])], capture_output=True, text=True, check=True
        ).stdout.splitlines()[2:]
        assert listing, name
        fonts = {line.split()[0].split("+")[-1]: line.split() for line in listing}
        assert set(fonts) == {"NanumGothic", "NanumGothicBold"}, f"{name}: {sorted(fonts)}"  # no Helvetica
        for columns in fonts.values():
            assert columns[-5] == "yes"  # emb
