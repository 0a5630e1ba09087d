"""Join cards and paper judgment sheets (PDFs read back with poppler and a QR reader), the paper jurors' entry
form through the live engine, and the report PDF fixes ("<" glyph, colour-blind-safe palette, radar labels)."""

from __future__ import annotations

import io
import math
import re
import subprocess
from pathlib import Path

import pytest
from PIL import Image, ImageChops
from sqlalchemy import select, update

from analysis import charts
from tests.support.apps import form_token, login
from tests.support.live import TO_JUDGING, Role, make_session
from vtt.access.admission import stage_key
from vtt.config import Settings
from vtt.extensions import socketio
from vtt.models import Juror, SheetEntry, Vote

pytestmark = pytest.mark.usefixtures("poppler")

BASE = "http://192.168.1.20:5000"
PLAYERS = [
    {"name": "지수", "kind": "human", "age": 10, "stage": "concrete"},
    {"name": "Grace", "kind": "human", "age": 31},
    {"name": "Agent", "kind": "ai"},
]


@pytest.fixture
def served(app, db_factory):
    """The app with the join base URL a venue would set, and a signed-in host's client."""
    app.config["BASE_URL"] = BASE
    client = app.test_client()
    login(client)
    return app, client


def pdf_text(data: bytes, tmp_path: Path) -> str:
    path = tmp_path / "read.pdf"
    path.write_bytes(data)
    return subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


def page_images(data: bytes, tmp_path: Path, dpi: int = 150) -> list[Image.Image]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "pages.pdf"
    path.write_bytes(data)
    subprocess.run(["pdftoppm", "-r", str(dpi), "-png", str(path), str(tmp_path / "page")], check=True)
    return [Image.open(png).convert("RGB") for png in sorted(tmp_path.glob("page-*.png"))]


def qr_codes(data: bytes, tmp_path: Path) -> list[list[str]]:
    """The QR codes' texts, page by page."""
    import zxingcpp

    return [
        [code.text for code in zxingcpp.read_barcodes(image) if code.format == zxingcpp.BarcodeFormat.QRCode]
        for image in page_images(data, tmp_path)
    ]


def cards_by_link(data: bytes, tmp_path: Path, dpi: int = 150) -> dict[str, str]:
    """Each card's QR code text -> the text printed on that card (the grid cell around the code)."""
    import zxingcpp

    from vtt.printouts.documents import CARD_H, CARD_W, COLUMNS, PAGE_H, PAGE_W, ROWS

    scale = dpi / 72
    left, top = (PAGE_W - COLUMNS * CARD_W) / 2 * scale, (PAGE_H - ROWS * CARD_H) / 2 * scale
    cards = {}
    for number, image in enumerate(page_images(data, tmp_path, dpi), start=1):
        for code in zxingcpp.read_barcodes(image):
            corner = code.position.top_left
            column, row = int((corner.x - left) // (CARD_W * scale)), int((corner.y - top) // (CARD_H * scale))
            box = [
                round(left + column * CARD_W * scale),
                round(top + row * CARD_H * scale),
                round(CARD_W * scale),
                round(CARD_H * scale),
            ]
            cards[code.text] = subprocess.run(
                [
                    "pdftotext",
                    "-enc",
                    "UTF-8",
                    "-r",
                    str(dpi),
                    "-f",
                    str(number),
                    "-l",
                    str(number),
                    "-x",
                    str(box[0]),
                    "-y",
                    str(box[1]),
                    "-W",
                    str(box[2]),
                    "-H",
                    str(box[3]),
                    str(tmp_path / "pages.pdf"),
                    "-",
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
    return cards


def juror_ids(db_factory, session_id: int) -> dict[str, int]:
    with db_factory() as db:
        return {j.label: j.id for j in db.scalars(select(Juror).where(Juror.session_id == session_id))}


# --- join cards -----------------------------------------------------------------------------------


def test_join_cards_carry_one_qr_per_person_with_their_own_link(served, db_factory, tmp_path):
    app, client = served
    people = make_session(db_factory, jurors=6, open_join=True, players=PLAYERS, name="Cards 2021")
    reply = client.get(f"/host/sessions/{people.session_id}/join-cards.pdf")
    assert reply.status_code == 200 and reply.mimetype == "application/pdf"

    pages = qr_codes(reply.data, tmp_path)
    stage_link = f"{BASE}/stage/{people.code}?key={stage_key(Settings.from_env().secret_key, people.session_id)}"
    links = (
        [f"{BASE}/play/{token}" for name, token in people.players.items() if name != "Agent"]
        + [f"vtt agent --server {BASE} --token {people.players['Agent']} --session {people.code} --backend SPEC"]
        + [f"{BASE}/jury/{token}" for token in people.jurors.values()]
        + [stage_link, f"{BASE}/join/{people.code}"]
    )
    assert [len(codes) for codes in pages] == [8, 3]  # 3 players, 6 jurors, the stage, the open join: 8 a page
    assert sorted(code for codes in pages for code in codes) == sorted(links)
    cards = cards_by_link(reply.data, tmp_path)
    for label, token in people.jurors.items():  # each card: its person's label, role, session and code
        card = cards[f"{BASE}/jury/{token}"]
        # pdftotext joins a line that ends in "-" to the next one and drops the "-": a token may end in one
        assert "Juror · Cards 2021" in card and re.search(rf"^{label}$", card, re.M), card
        assert token.rstrip("-") in card, card
    assert "지수" in cards[f"{BASE}/play/{people.players['지수']}"]
    assert "Stage screen" in cards[stage_link]
    assert "Join the jury" in cards[f"{BASE}/join/{people.code}"]


def test_an_ai_players_card_says_how_to_run_the_agent(served, db_factory, tmp_path):
    app, client = served
    people = make_session(db_factory, jurors=1, players=PLAYERS, name="Cards 2021")
    token = people.players["Agent"]
    command = f"vtt agent --server {BASE} --token {token} --session {people.code} --backend SPEC"  # docs/agents.md
    for language, role, hint, not_for_ai in (
        (
            "en",
            "AI player · Cards 2021",
            "Not a page to open: run the agent with the command below.",
            "laptop or tablet",
        ),
        ("ko", "AI 참가자 · Cards 2021", "열어 볼 페이지가 아닙니다: 아래 명령으로 에이전트를 실행하세요.", "노트북"),
    ):
        reply = client.get(f"/host/sessions/{people.session_id}/join-cards.pdf?lang={language}")
        cards = cards_by_link(reply.data, tmp_path / language)
        assert command in cards and f"{BASE}/play/{token}" not in cards  # the QR code holds the command
        card = " ".join(cards[command].split())
        assert role in card and hint in card and "replay:FILE, http:URL" in card, card
        assert not_for_ai not in card
        # printed whole; pdftotext reads a line ending in "-" (a token may end so) as a hyphenated word: it drops the
        # "-" and the line break
        dehyphenated = command.replace(f"{token} ", token.removesuffix("-")) if token.endswith("-") else command
        assert any(whole.replace(" ", "") in card.replace(" ", "") for whole in (command, dehyphenated)), card
        assert token.rstrip("-") in card
        human = " ".join(cards[f"{BASE}/play/{people.players['Grace']}"].split())
        assert not_for_ai in human and "vtt agent" not in human
    assert "vtt agent --server" in (Path(__file__).parent.parent / "docs" / "agents.md").read_text()


def test_an_ai_players_printed_command_names_its_session_as_the_consoles_does(served, db_factory, tmp_path):
    """Behind nginx with several processes the agent reaches its session's process only by ``--session CODE``
    (docs/agents.md): the card's QR code and printed line carry it, as the host console's line does."""
    app, client = served
    people = make_session(db_factory, jurors=1, players=PLAYERS, name="Cards 2021")
    reply = client.get(f"/host/sessions/{people.session_id}/join-cards.pdf")
    printed = [code for codes in qr_codes(reply.data, tmp_path) for code in codes if code.startswith("vtt agent")]
    token = people.players["Agent"]
    assert printed == [f"vtt agent --server {BASE} --token {token} --session {people.code} --backend SPEC"]


@pytest.mark.each_database
def test_join_cards_need_the_host(app, db_factory):
    people = make_session(db_factory, jurors=1)
    reply = app.test_client().get(f"/host/sessions/{people.session_id}/join-cards.pdf")
    assert reply.status_code == 302 and "/host/login" in reply.location


# --- paper judgment sheets ------------------------------------------------------------------------


def test_a_paper_sheet_is_laid_out_per_round_with_the_jurors_qr(served, db_factory, tmp_path):
    app, client = served
    two_ais = [*PLAYERS, {"name": "Agent 2", "kind": "ai"}]
    people = make_session(db_factory, rounds=2, per_round=2, jurors=3, ai_votes=2, players=two_ais)
    ids = juror_ids(db_factory, people.session_id)
    reply = client.get(f"/host/sessions/{people.session_id}/paper-sheets.pdf?juror={ids['J2']}&lang=en")
    assert reply.status_code == 200 and reply.mimetype == "application/pdf"

    codes = [code for page in qr_codes(reply.data, tmp_path) for code in page]
    assert codes == [f"{BASE}/jury/{people.jurors['J2']}"]
    text = pdf_text(reply.data, tmp_path)
    assert "Juror J2" in text and "Juror J1" not in text
    assert text.count("Answers in this round: A, B, C, D") == 2
    assert text.count("Question 1 ·") == 2 and text.count("Question 2 ·") == 2
    assert text.count("Looks like the AI") == 4  # one table per question
    assert "Who is the AI? (pick 2)" in text and "nobody" in text
    assert "지수" not in text and "Agent" not in text  # the sheet is blind: letters only


@pytest.mark.each_database
def test_paper_sheets_print_the_paper_jurors_else_everyone(served, db_factory, tmp_path):
    app, client = served
    people = make_session(db_factory, rounds=1, per_round=1, jurors=3)
    everyone = client.get(f"/host/sessions/{people.session_id}/paper-sheets.pdf")
    pages = qr_codes(everyone.data, tmp_path / "all")
    assert [len(codes) for codes in pages] == [1, 1, 1]  # a sheet per juror, each from a new page
    assert [codes[0] for codes in pages] == [f"{BASE}/jury/{token}" for token in people.jurors.values()]

    with db_factory() as db:
        db.execute(
            update(Juror)
            .where(Juror.session_id == people.session_id, Juror.label.in_(["J1", "J3"]))
            .values(juror_group="paper")
        )
        db.commit()
    marked = client.get(f"/host/sessions/{people.session_id}/paper-sheets.pdf")
    assert [code for page in qr_codes(marked.data, tmp_path / "paper") for code in page] == [
        f"{BASE}/jury/{people.jurors['J1']}",
        f"{BASE}/jury/{people.jurors['J3']}",
    ]
    assert client.get(f"/host/sessions/{people.session_id}/paper-sheets.pdf?juror=999999").status_code == 404


def test_korean_sheets_render_hangul_in_the_embedded_font(served, db_factory, tmp_path):
    app, client = served
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1, name="비디오 튜링 테스트")
    reply = client.get(f"/host/sessions/{people.session_id}/paper-sheets.pdf?lang=ko")
    assert "비디오 튜링 테스트" in pdf_text(reply.data, tmp_path)
    path = tmp_path / "ko.pdf"
    path.write_bytes(reply.data)
    fonts = subprocess.run(["pdffonts", str(path)], capture_output=True, text=True, check=True).stdout
    assert "NanumGothic" in fonts


# --- the paper jurors' entry form ----------------------------------------------------------------


@pytest.mark.each_database
def test_the_host_types_in_a_paper_jurors_sheet_and_vote_through_the_engine(served, db_factory):
    app, client = served
    people = make_session(db_factory, rounds=1, per_round=2, jurors=2, players=PLAYERS)
    paper_juror = juror_ids(db_factory, people.session_id)["J2"]
    page_url = f"/host/sessions/{people.session_id}/paper?juror={paper_juror}&round=1"
    planned = re.findall(r'data-alias="([A-Z])"', client.get(page_url).get_data(as_text=True))

    host = Role(socketio, app, {"code": people.code, "role": "host"}, flask_client=client)
    juror_phone = Role(socketio, app, {"token": people.jurors["J1"]})
    for move in TO_JUDGING:
        host.host(move)
    shown = juror_phone.last("answers")
    # The form (like the printed sheet) lists the answers in the order the jury is shown them, known beforehand.
    assert planned[:3] == [answer["alias"] for answer in shown["answers"]]
    first = shown["question"]

    page = client.get(page_url).get_data(as_text=True)
    entry = re.search(r'name="entry" value="([^"]+)"', page).group(1)
    form = {
        "csrf_token": form_token(client, page_url),
        "juror": paper_juror,
        "round": 1,
        "entry": entry,
        f"line-{first}-A-note": "answers like my nephew",
        f"line-{first}-A-likeness": "4",
        f"line-{first}-C-likeness": "1",
        f"line-{first}-C-ai": "1",
    }
    saved = client.post(f"/host/sessions/{people.session_id}/paper", data=form)
    assert saved.status_code == 302
    assert "2 sheet lines" in client.get(saved.location).get_data(as_text=True)
    with db_factory() as db:
        rows = {row.alias: row for row in db.scalars(select(SheetEntry).where(SheetEntry.juror_id == paper_juror))}
    assert set(rows) == {"A", "C"}
    assert (rows["A"].note, rows["A"].human_likeness, rows["A"].looks_like_ai) == ("answers like my nephew", 4, False)
    assert (rows["C"].note, rows["C"].human_likeness, rows["C"].looks_like_ai) == ("", 1, True)
    assert rows["A"].client_key == f"paper-{entry}-sheet"  # the engine wrote it, as the juror's own action

    host.host("show_question")
    host.host("open_answering")
    host.host("close_answering")
    host.host("reveal")
    host.host("open_vote")
    page = client.get(page_url).get_data(as_text=True)
    assert 'value="answers like my nephew"' in page  # what is saved fills the form again
    vote = {
        "csrf_token": form_token(client, page_url),
        "juror": paper_juror,
        "round": 1,
        "entry": re.search(r'name="entry" value="([^"]+)"', page).group(1),
        "vote-1-alias": "C",
        "vote-1-confidence": "5",
        "vote-1-reason": "too quick",
    }
    assert client.post(f"/host/sessions/{people.session_id}/paper", data=vote).status_code == 302
    assert host.last("votes")["voted"] == 1  # the host's live count moved: the engine took it
    with db_factory() as db:
        cast = db.scalars(select(Vote).where(Vote.juror_id == paper_juror)).one()
        assert (cast.round, cast.slot, cast.alias, cast.confidence, cast.reason) == (1, 1, "C", 5, "too quick")

    host.host("close_vote")
    page = client.get(page_url).get_data(as_text=True)
    late = {**vote, "entry": re.search(r'name="entry" value="([^"]+)"', page).group(1), "vote-1-alias": "A"}
    refused = client.post(f"/host/sessions/{people.session_id}/paper", data=late)
    assert refused.status_code == 409
    shown = refused.get_data(as_text=True)
    assert 'role="alert"' in shown and "Vote 1 not saved" in shown and "The vote of this round is not open" in shown
    assert re.search(r'<option value="A" selected>A</option>', shown)  # what was typed is kept for the host
    with db_factory() as db:
        assert db.scalars(select(Vote.alias).where(Vote.juror_id == paper_juror)).all() == ["C"]


def test_a_confidence_without_a_pick_is_named_and_nothing_is_sent(served, db_factory):
    app, client = served
    people = make_session(db_factory, rounds=1, per_round=1, jurors=1)
    juror = juror_ids(db_factory, people.session_id)["J1"]
    url = f"/host/sessions/{people.session_id}/paper?juror={juror}"
    reply = client.post(
        f"/host/sessions/{people.session_id}/paper",
        data={
            "csrf_token": form_token(client, url),
            "juror": juror,
            "round": 1,
            "entry": "x1",
            "vote-1-confidence": "3",
        },
    )
    assert reply.status_code == 422
    assert "Vote 1: choose who is the AI (or nobody)" in reply.get_data(as_text=True)
    with db_factory() as db:
        assert db.scalars(select(Vote)).all() == []


# --- the report PDFs' fixes -------------------------------------------------------------------------


def _drawn(text: str, tmp_path: Path, name: str) -> tuple[str, Image.Image]:
    """``text`` set in the report font: what pdftotext reads back, and how it looks."""
    from reportlab.pdfgen.canvas import Canvas

    from analysis.fonts import REGULAR, register_fonts

    register_fonts()
    out = io.BytesIO()
    canvas = Canvas(out, pagesize=(200, 40))
    canvas.setFont(REGULAR, 14)
    canvas.drawString(10, 15, text)
    canvas.save()
    folder = tmp_path / name
    folder.mkdir()
    return pdf_text(out.getvalue(), folder).strip(), page_images(out.getvalue(), folder)[0]


def test_less_than_reads_back_as_less_than_and_is_drawn_as_a_comparison(tmp_path):
    text, look = _drawn("p < 0.001, a > b", tmp_path, "ascii")
    _, lookalike = _drawn("p \u2039 0.001, a \u203a b", tmp_path, "math")
    assert text == "p < 0.001, a > b"
    # NanumGothic's own "<" is a CJK angle bracket ("p ‹ 0.001"); its U+2039 glyph is the comparison sign.
    assert ImageChops.difference(look, lookalike).getbbox() is None


def _lab(colour) -> tuple[float, float, float]:
    def linear(v: float) -> float:
        return v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    r, g, b = (linear(v) for v in (colour.red, colour.green, colour.blue))
    x, y, z = (
        (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047,
        0.2126 * r + 0.7152 * g + 0.0722 * b,
        (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883,
    )
    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def _deuteranope(colour):
    """How a deuteranope sees ``colour`` (Machado, Oliveira & Fernandes 2009, severity 1)."""
    from reportlab.lib import colors

    matrix = ((0.367322, 0.860646, -0.227968), (0.280085, 0.672501, 0.047413), (-0.011820, 0.042940, 0.968881))
    linear = [
        v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4 for v in (colour.red, colour.green, colour.blue)
    ]
    mixed = [min(max(sum(m * v for m, v in zip(row, linear)), 0), 1) for row in matrix]
    return colors.Color(*(12.92 * v if v <= 0.0031308 else 1.055 * v ** (1 / 2.4) - 0.055 for v in mixed))


def test_no_human_colour_is_near_the_ais_even_for_colour_blind_readers():
    styles = charts.player_styles([(f"H{n}", "human") for n in range(5)] + [("AI", "ai"), ("AI 2", "ai")])
    humans = {s.colour.hexval() for s in styles.values() if not s.is_ai}
    assert len(humans) == 5
    for ai in (s.colour for s in styles.values() if s.is_ai):
        for human in (s.colour for s in styles.values() if not s.is_ai):
            assert math.dist(_lab(ai), _lab(human)) > 40, (ai, human)
            assert math.dist(_lab(_deuteranope(ai)), _lab(_deuteranope(human))) > 40, (ai, human)


def test_radar_ring_values_are_drawn_over_the_players_lines():
    styles = charts.player_styles([("Kid", "human"), ("AI", "ai")])
    series = [charts.RadarSeries(name, [100, 50, 75, 25], styles[name]) for name in styles]
    drawing = charts.radar_chart("TARGET", ["Character", "Object", "Event", "Emotion"], series, legend=False)
    contents = drawing.contents
    last_line = max(i for i, shape in enumerate(contents) if getattr(shape, "strokeColor", None) == styles["AI"].colour)
    rings = [i for i, shape in enumerate(contents) if getattr(shape, "text", None) in ("25", "50", "75", "100 %")]
    assert len(rings) == 4 and min(rings) > last_line
    assert not any(getattr(shape, "text", None) == "0" for shape in contents)  # nothing printed on the centre
