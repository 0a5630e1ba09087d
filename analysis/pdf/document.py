"""A report's PDF: A4 pages (portrait, landscape on request), a footer with the page number and the title, and the
section headings as bookmarks."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from reportlab.lib.pagesizes import landscape
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import BaseDocTemplate, Flowable, Frame, PageTemplate, Paragraph

from .. import charts
from ..fonts import REGULAR
from ..words import t
from .layout import MARGIN, PAGE

FOOTER_SIZE = 7.5


class _FooterCanvas(Canvas):
    """Draws the footer (page n of N, title) on every page.

    N is unknown until the end, so each page draws a form XObject that :meth:`save` fills in; pages
    are still emitted one by one, which keeps the bookmarks pointing at the right pages.
    """

    _TOTAL_FORM = "page-total"

    def __init__(self, *args, footer_title: str, **kwargs):
        super().__init__(*args, **kwargs)
        self._footer_title = footer_title

    def showPage(self):
        self._draw_footer()
        super().showPage()

    def save(self):
        self.beginForm(self._TOTAL_FORM)
        self.setFont(REGULAR, FOOTER_SIZE)
        self.setFillColor(charts.GREY)
        self.drawString(0, 0, str(self.getPageNumber() - 1))
        self.endForm()
        super().save()

    def _draw_footer(self) -> None:
        page_width, y = self._pagesize[0], MARGIN - 20
        number = t("page {number} of ", number=self.getPageNumber())
        self.saveState()
        self.setFont(REGULAR, FOOTER_SIZE)
        self.setFillColor(charts.GREY)
        self.setStrokeColor(charts.GRID)
        self.line(MARGIN, MARGIN - 10, page_width - MARGIN, MARGIN - 10)
        self.drawRightString(
            page_width - MARGIN, y, charts.fit_text(self._footer_title, page_width - 2 * MARGIN - 80, FOOTER_SIZE)
        )
        self.drawString(MARGIN, y, number)
        self.translate(MARGIN + self.stringWidth(number, REGULAR, FOOTER_SIZE), y)
        self.doForm(self._TOTAL_FORM)
        self.restoreState()


class _ReportDocument(BaseDocTemplate):
    """A4 portrait pages, landscape ones on request; section headings become PDF bookmarks."""

    def __init__(self, path: Path, title: str):
        super().__init__(
            str(path),
            pagesize=PAGE,
            leftMargin=MARGIN,
            rightMargin=MARGIN,
            topMargin=MARGIN,
            bottomMargin=MARGIN,
            title=title,
            author="vtt",
            creator="vtt analysis.report",  # what every report PDF has carried: a new name would change its bytes
            invariant=True,
            initialFontName=REGULAR,
        )
        self.addPageTemplates([self._template("portrait", PAGE), self._template("landscape", landscape(PAGE))])
        self._bookmarks = 0

    @staticmethod
    def _template(name: str, size: tuple[float, float]) -> PageTemplate:
        frame = Frame(
            MARGIN,
            MARGIN,
            size[0] - 2 * MARGIN,
            size[1] - 2 * MARGIN,
            id=name,
            leftPadding=0,
            rightPadding=0,
            topPadding=0,
            bottomPadding=0,
        )
        return PageTemplate(id=name, frames=[frame], pagesize=size)

    def afterFlowable(self, flowable: Flowable) -> None:
        if isinstance(flowable, Paragraph) and flowable.style.name in ("h1", "h2"):
            self._bookmarks += 1
            key = f"section-{self._bookmarks}"
            self.canv.bookmarkPage(key)
            self.canv.addOutlineEntry(flowable.getPlainText(), key, level=int(flowable.style.name[1]) - 1)


def build_pdf(path: Path, story: list[Flowable], title: str) -> None:
    document = _ReportDocument(path, title)
    document.build(story, canvasmaker=partial(_FooterCanvas, footer_title=title))
