"""Printouts of a session (PDF, A4): join cards and paper judgment sheets.

* :func:`join_cards_pdf`: one card per player, per juror, for the stage screen and (open join) for the jury's
  join link, eight to a page with cut marks.  A card carries a QR code of the person's link, the link, the
  code at its end, the person's name or label and the session's name.  The host hands the cards out.
* :func:`paper_sheets_pdf`: a paper juror's judgment sheet for every round: per question and alias a note,
  1-5 human-likeness and "looks like the AI", then the round's vote.  The juror's label, QR code and code
  are on top, and on every page's foot, so the host knows whose sheet a loose page is.

Text is set in the embedded NanumGothic (Korean names and labels render) in the language asked for; links
are from :func:`vtt.sessions.links.person_links`.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape

from flask import current_app
from flask_babel import force_locale
from flask_babel import gettext as _
from reportlab.graphics import renderPDF
from reportlab.graphics.barcode.qr import QrCodeWidget
from reportlab.graphics.shapes import Drawing
from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import (
    BaseDocTemplate,
    Flowable,
    Frame,
    KeepTogether,
    PageBreak,
    PageTemplate,
    Paragraph,
    Spacer,
    Table,
    TableStyle,
)

from analysis.charts import fit_text
from analysis.fonts import BOLD, REGULAR, register_fonts

from ..models import Juror, VttSession
from ..on_behalf.paper_jurors import SheetQuestion, SheetRound
from ..sessions.links import agent_command, person_links

CODE_FONT = "Courier-Bold"  # codes are ASCII; a typewriter face tells l, 1 and I apart
GREY = colors.HexColor("#5A5A5A")
LIGHT = colors.HexColor("#BDBDBD")
PAGE_W, PAGE_H = A4


# --- join cards -----------------------------------------------------------------------------------

CARD_W, CARD_H = 90 * mm, 64 * mm
COLUMNS, ROWS = 2, 4
CARD_PAD = 5 * mm
QR_SIZE = 36 * mm
CUT_MARK = 6 * mm  # the ticks' length in the margin
CUT_GAP = 2 * mm  # between the cards' edge and a tick


@dataclass(frozen=True)
class Card:
    role: str  # what the card is for ("Juror", "Player", ...)
    name: str  # the person's name or label, in large type
    url: str  # what the QR code holds (an AI player's: the `vtt agent` command line)
    code: str  # what someone types instead: the last part of the link
    hint: str  # one line on what to do with it


def join_cards(vtt_session: VttSession, base: str) -> list[Card]:
    """The session's cards in handing-out order: players, jurors, the stage screen, the open join link."""
    links = person_links(vtt_session, base, current_app.config["SECRET_KEY"])
    cards = [
        _ai_card(p, base, vtt_session.join_code)
        if p["kind"] == "ai"
        else Card(_("Player"), p["label"], p["url"], p["token"], _("Open this link on your laptop or tablet to play."))
        for p in links["players"]
    ]
    cards += [
        Card(
            _("Juror"),
            j["label"],
            j["url"],
            j["token"],
            _("Scan with your phone's camera: this is your own judgment sheet."),
        )
        for j in links["jurors"]
    ]
    cards.append(
        Card(
            _("Projector"),
            _("Stage screen"),
            links["stage_url"],
            vtt_session.join_code,
            _("Open on the computer that drives the projector."),
        )
    )
    if links["join_url"]:
        cards.append(
            Card(
                _("Open join"),
                _("Join the jury"),
                links["join_url"],
                vtt_session.join_code,
                _("Scan, choose a nickname and join the jury."),
            )
        )
    return cards


def _ai_card(player: dict, base: str, code: str) -> Card:
    """An AI player plays through `vtt agent`, not a page: its card (and QR code) give the command line."""
    return Card(
        _("AI player"),
        player["label"],
        agent_command(base, player["token"], code),
        player["token"],
        _(
            "Not a page to open: run the agent with the command below. SPEC: replay:FILE, http:URL or "
            "python:MODULE:FUNCTION."
        ),
    )


def join_cards_pdf(vtt_session: VttSession, base: str, language: str) -> bytes:
    """Every card of the session, ``COLUMNS`` x ``ROWS`` to an A4 page, in ``language``."""
    register_fonts()
    with force_locale(language):
        cards = join_cards(vtt_session, base)
        out = io.BytesIO()
        canvas = Canvas(out, pagesize=A4, pageCompression=1)
        canvas.setTitle(_("Join cards: %(session)s", session=vtt_session.name))
        per_page = COLUMNS * ROWS
        left, bottom = (PAGE_W - COLUMNS * CARD_W) / 2, (PAGE_H - ROWS * CARD_H) / 2
        for start in range(0, len(cards), per_page):
            for index, card in enumerate(cards[start : start + per_page]):
                column, row = index % COLUMNS, index // COLUMNS
                _draw_card(canvas, card, vtt_session.name, left + column * CARD_W, bottom + (ROWS - 1 - row) * CARD_H)
            _cut_marks(canvas, left, bottom)
            canvas.showPage()
        canvas.save()
    return out.getvalue()


def _draw_card(canvas: Canvas, card: Card, session_name: str, x: float, y: float) -> None:
    inner_w = CARD_W - 2 * CARD_PAD
    top = y + CARD_H - CARD_PAD
    canvas.setFillColor(GREY)
    canvas.setFont(REGULAR, 8)
    role = f"{card.role} · "
    canvas.drawString(x + CARD_PAD, top - 8, role + fit_text(session_name, inner_w - stringWidth(role, REGULAR, 8), 8))
    canvas.setFillColor(colors.black)
    canvas.setFont(BOLD, 16)
    canvas.drawString(x + CARD_PAD, top - 26, fit_text(card.name, inner_w, 16, BOLD))

    qr_y = y + CARD_PAD
    draw_qr(canvas, card.url, x + CARD_PAD - 2 * mm, qr_y, QR_SIZE)  # the QR's own white border eats into the pad
    text_x = x + CARD_PAD + QR_SIZE + 1 * mm
    text_w = x + CARD_W - CARD_PAD - text_x
    line_y = qr_y + QR_SIZE - 10
    canvas.setFont(REGULAR, 8)
    for line in wrap_chars(card.hint, REGULAR, 8, text_w, by_words=True):
        canvas.drawString(text_x, line_y, line)
        line_y -= 10
    line_y -= 4
    canvas.setFillColor(GREY)
    canvas.drawString(text_x, line_y, _("Code"))
    canvas.setFillColor(colors.black)
    code_size = min(11, 11 * text_w / max(stringWidth(card.code, CODE_FONT, 11), 1))
    canvas.setFont(CODE_FONT, code_size)
    canvas.drawString(text_x, line_y - 13, card.code)
    line_y -= 13 + 14
    canvas.setFillColor(GREY)
    canvas.setFont(REGULAR, 6.5)
    for line in wrap_chars(card.url, REGULAR, 6.5, text_w, by_words=" " in card.url):  # a command: between words
        canvas.drawString(text_x, line_y, line)
        line_y -= 8
    canvas.setFillColor(colors.black)


def _cut_marks(canvas: Canvas, left: float, bottom: float) -> None:
    """Ticks in the margins along every cut, and a faint dotted guide where two cards meet."""
    right, top = left + COLUMNS * CARD_W, bottom + ROWS * CARD_H
    canvas.setStrokeColor(LIGHT)
    canvas.setLineWidth(0.3)
    canvas.setDash(1, 2)
    for column in range(1, COLUMNS):
        canvas.line(left + column * CARD_W, bottom, left + column * CARD_W, top)
    for row in range(1, ROWS):
        canvas.line(left, bottom + row * CARD_H, right, bottom + row * CARD_H)
    canvas.setDash()
    canvas.setStrokeColor(colors.black)
    canvas.setLineWidth(0.5)
    for column in range(COLUMNS + 1):
        x = left + column * CARD_W
        canvas.line(x, top + CUT_GAP, x, top + CUT_GAP + CUT_MARK)
        canvas.line(x, bottom - CUT_GAP, x, bottom - CUT_GAP - CUT_MARK)
    for row in range(ROWS + 1):
        y = bottom + row * CARD_H
        canvas.line(left - CUT_GAP, y, left - CUT_GAP - CUT_MARK, y)
        canvas.line(right + CUT_GAP, y, right + CUT_GAP + CUT_MARK, y)


def qr_drawing(value: str, size: float) -> Drawing:
    """A QR code of ``value`` (error correction M, with its quiet zone) as a ``size`` x ``size`` drawing."""
    widget = QrCodeWidget(value, barLevel="M")
    x0, y0, x1, y1 = widget.getBounds()
    drawing = Drawing(size, size, transform=[size / (x1 - x0), 0, 0, size / (y1 - y0), 0, 0])
    drawing.add(widget)
    return drawing


def draw_qr(canvas: Canvas, value: str, x: float, y: float, size: float) -> None:
    renderPDF.draw(qr_drawing(value, size), canvas, x, y)


def wrap_chars(text: str, font: str, size: float, width: float, *, by_words: bool = False) -> list[str]:
    """``text`` in lines at most ``width`` wide: between words when ``by_words`` (a word too long is cut),
    else anywhere (a link has no spaces to break at)."""
    pieces = text.split(" ") if by_words else list(text)
    joiner = " " if by_words else ""
    lines, current = [], ""
    for piece in pieces:
        candidate = f"{current}{joiner}{piece}" if current else piece
        if stringWidth(candidate, font, size) <= width:
            current = candidate
            continue
        if current:
            lines.append(current)
        while stringWidth(piece, font, size) > width and len(piece) > 1:  # one word wider than the line
            cut = max(n for n in range(1, len(piece)) if stringWidth(piece[:n], font, size) <= width or n == 1)
            lines.append(piece[:cut])
            piece = piece[cut:]
        current = piece
    if current:
        lines.append(current)
    return lines


# --- paper judgment sheets ------------------------------------------------------------------------

MARGIN = 15 * mm
FRAME_W = PAGE_W - 2 * MARGIN
BOX = 4.2 * mm
NOTE_H = 12 * mm


def paper_sheets_pdf(
    vtt_session: VttSession, jurors: Sequence[Juror], rounds: Sequence[SheetRound], base: str, language: str
) -> bytes:
    """One sheet per juror in ``jurors`` (each starting on a new page) for ``rounds`` (see
    :func:`vtt.on_behalf.paper_jurors.sheet_rounds`), in ``language``."""
    register_fonts()
    with force_locale(language):
        secret = current_app.config["SECRET_KEY"]
        links = {j["token"]: j for j in person_links(vtt_session, base, secret)["jurors"]}
        styles = _styles()
        story: list[Flowable] = []
        for index, juror in enumerate(jurors):
            if index:
                story.append(PageBreak())
            story += _juror_sheet(vtt_session, juror, links[juror.token]["url"], rounds, styles)
        out = io.BytesIO()
        doc = BaseDocTemplate(
            out,
            pagesize=A4,
            leftMargin=MARGIN,
            rightMargin=MARGIN,
            topMargin=MARGIN,
            bottomMargin=MARGIN + 4 * mm,
            title=_("Paper judgment sheets: %(session)s", session=vtt_session.name),
        )
        footer = _Footer(vtt_session.name)
        doc.addPageTemplates(
            [
                PageTemplate(
                    "sheet",
                    [Frame(MARGIN, MARGIN + 4 * mm, FRAME_W, PAGE_H - 2 * MARGIN - 4 * mm, id="body")],
                    onPageEnd=footer,
                )
            ]
        )
        doc.build(story)
    return out.getvalue()


def _styles() -> dict[str, ParagraphStyle]:
    body = ParagraphStyle("body", fontName=REGULAR, fontSize=9, leading=12)
    return {
        "body": body,
        "small": ParagraphStyle("small", body, fontSize=7.5, leading=9.5, textColor=GREY),
        "title": ParagraphStyle("title", body, fontName=BOLD, fontSize=15, leading=19),
        "juror": ParagraphStyle("juror", body, fontName=BOLD, fontSize=20, leading=25, spaceBefore=4),
        "round": ParagraphStyle("round", body, fontName=BOLD, fontSize=13, leading=16, spaceBefore=10, spaceAfter=2),
        "question": ParagraphStyle(
            "question", body, fontName=BOLD, fontSize=9.5, leading=12.5, spaceBefore=6, spaceAfter=3
        ),
        "head": ParagraphStyle("head", body, fontName=BOLD, fontSize=8, leading=10),
        "alias": ParagraphStyle("alias", body, fontName=BOLD, fontSize=16, leading=18),
    }


def _juror_sheet(
    vtt_session: VttSession, juror: Juror, url: str, rounds: Sequence[SheetRound], styles: dict[str, ParagraphStyle]
) -> list[Flowable]:
    qr_size = 30 * mm
    heading = [
        _JurorMark(juror.label),
        Paragraph(escape(_("Paper judgment sheet")), styles["title"]),
        Paragraph(escape(vtt_session.name), styles["body"]),
        Paragraph(escape(_("Juror %(label)s", label=juror.label)), styles["juror"]),
        Spacer(1, 4),
        Paragraph(
            escape(
                _(
                    "For every answer: a note if you like, how human it sounds from 1 (a machine) to 5 "
                    "(a person), and a tick if it looks like the AI's. At the end of each round, tick who "
                    "you think is the AI and how sure you are."
                )
            ),
            styles["body"],
        ),
    ]
    code = [
        qr_drawing(url, qr_size),
        Paragraph(f"<font name='{CODE_FONT}'>{escape(juror.token)}</font>", styles["small"]),
    ]
    top = Table([[heading, code]], colWidths=[FRAME_W - qr_size - 4 * mm, qr_size + 4 * mm])
    top.setStyle(
        TableStyle(
            [
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("LEFTPADDING", (0, 0), (-1, -1), 0),
                ("RIGHTPADDING", (0, 0), (-1, -1), 0),
                ("FONTNAME", (0, 0), (-1, -1), REGULAR),
            ]
        )
    )
    story: list[Flowable] = [top]
    for sheet_round in rounds:
        title = _("Round %(number)s", number=sheet_round.number)
        if sheet_round.theme:
            title += f" · {sheet_round.theme}"
        story += [
            Paragraph(escape(title), styles["round"]),
            Paragraph(
                escape(_("Answers in this round: %(aliases)s", aliases=", ".join(sheet_round.aliases))), styles["small"]
            ),
        ]
        story += [_question_block(question, styles) for question in sheet_round.questions]
        story.append(_vote_block(sheet_round, vtt_session.ai_votes_per_juror, styles))
    return story


def _question_block(question: SheetQuestion, styles: dict[str, ParagraphStyle]) -> Flowable:
    head = [
        Paragraph(escape(_("Answer")), styles["head"]),
        Paragraph(escape(_("Note")), styles["head"]),
        Paragraph(escape(_("Human-like: 1 (machine) to 5 (person)")), styles["head"]),
        Paragraph(escape(_("Looks like the AI")), styles["head"]),
    ]
    rows = [
        [Paragraph(alias, styles["alias"]), "", _Boxes([str(n) for n in range(1, 6)]), _Boxes([""])]
        for alias in question.aliases
    ]
    widths = [18 * mm, FRAME_W - 18 * mm - 62 * mm - 26 * mm, 62 * mm, 26 * mm]
    table = Table([head] + rows, colWidths=widths, rowHeights=[None] + [NOTE_H] * len(rows), repeatRows=1)
    table.setStyle(
        TableStyle(
            [
                ("FONTNAME", (0, 0), (-1, -1), REGULAR),
                ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
                ("LINEBELOW", (0, 0), (-1, -1), 0.4, GREY),
                ("BOX", (1, 1), (1, -1), 0.4, GREY),  # the note is written in a box
                ("INNERGRID", (1, 1), (1, -1), 0.4, GREY),
            ]
        )
    )
    label = _("Question %(position)s", position=question.position)
    return KeepTogether([Paragraph(f"{escape(label)} · {escape(question.text)}", styles["question"]), table])


def _vote_block(sheet_round: SheetRound, slots: int, styles: dict[str, ParagraphStyle]) -> Flowable:
    rows = []
    for slot in range(1, slots + 1):
        label = _("Who is the AI?") if slots == 1 else _("Who is the AI? (pick %(slot)s)", slot=slot)
        rows.append(
            [Paragraph(escape(label), styles["head"]), _Boxes([*sheet_round.aliases, _("nobody")], label_size=11)]
        )
        rows.append(
            [
                Paragraph(escape(_("How sure: 1 (a guess) to 5 (certain)")), styles["head"]),
                _Boxes([str(n) for n in range(1, 6)]),
            ]
        )
    rows.append([Paragraph(escape(_("Why (optional)")), styles["head"]), ""])
    table = Table(rows, colWidths=[48 * mm, FRAME_W - 48 * mm], rowHeights=[10 * mm] * (len(rows) - 1) + [16 * mm])
    table.setStyle(
        TableStyle(
            [
                ("FONTNAME", (0, 0), (-1, -1), REGULAR),
                ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
                ("BOX", (0, 0), (-1, -1), 1, colors.black),
                ("LINEBELOW", (0, 0), (-1, -2), 0.4, GREY),
                ("BACKGROUND", (0, 0), (0, -1), colors.HexColor("#F0F0F0")),
            ]
        )
    )
    heading = Paragraph(escape(_("Round %(number)s: the vote", number=sheet_round.number)), styles["question"])
    return KeepTogether([heading, table])


class _Boxes(Flowable):
    """Tick boxes in a row, each followed by its label."""

    def __init__(self, labels: Sequence[str], label_size: float = 9):
        super().__init__()
        self.labels, self.label_size = list(labels), label_size
        self.gap = 3 * mm

    def wrap(self, avail_width, avail_height):
        self.width = sum(BOX + self._label_width(label) + self.gap for label in self.labels)
        self.height = BOX
        return self.width, self.height

    def _label_width(self, label: str) -> float:
        return stringWidth(label, REGULAR, self.label_size) + (1.5 * mm if label else 0)

    def draw(self):
        canvas, x = self.canv, 0.0
        canvas.setLineWidth(0.8)
        canvas.setFont(REGULAR, self.label_size)
        for label in self.labels:
            canvas.rect(x, 0, BOX, BOX)
            canvas.drawString(x + BOX + 1.5 * mm, (BOX - self.label_size * 0.72) / 2, label)
            x += BOX + self._label_width(label) + self.gap


class _JurorMark(Flowable):
    """Zero-size: tells the page footer whose sheet begins here (and on which page)."""

    def __init__(self, label: str):
        super().__init__()
        self.label = label

    def wrap(self, avail_width, avail_height):
        return 0, 0

    def draw(self):
        self.canv.vtt_juror = (self.label, self.canv.getPageNumber())


class _Footer:
    """The foot of every sheet page: the session, the juror and the page of that juror's sheet.

    Called while the document is built, so inside :func:`paper_sheets_pdf`'s language."""

    def __init__(self, session_name: str):
        self.session_name = session_name

    def __call__(self, canvas: Canvas, doc) -> None:
        label, first_page = getattr(canvas, "vtt_juror", ("", canvas.getPageNumber()))
        text = _("Juror %(label)s · page %(page)s", label=label, page=canvas.getPageNumber() - first_page + 1)
        canvas.saveState()
        canvas.setFont(REGULAR, 7.5)
        canvas.setFillColor(GREY)
        canvas.drawString(MARGIN, MARGIN - 2, fit_text(self.session_name, FRAME_W / 2, 7.5))
        canvas.drawRightString(PAGE_W - MARGIN, MARGIN - 2, text)
        canvas.restoreState()
