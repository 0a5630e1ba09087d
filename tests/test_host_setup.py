"""The host console's setup side over HTTP: creating a session through the form, bank uploads, join links."""

from __future__ import annotations

import io
import re

import pytest
from openpyxl import Workbook
from sqlalchemy import func, select

from tests.support.apps import form_token
from tests.support.machine import require_poppler
from tests.support.paths import DATA
from tests.support.session_setup import BANK, setup_form
from vtt.banks import import_bank, read_bank
from vtt.models import Juror, PlayerKind, QuestionBank, SessionRound, VttSession


@pytest.fixture
def spec_bank(db):
    bank = import_bank(db, read_bank(DATA / "spec_examples.csv"), BANK)
    db.commit()
    return bank


def sessions_in(db) -> int:
    db.expire_all()
    return db.scalar(select(func.count()).select_from(VttSession))


def error_next_to(page: str, key: str) -> list[str]:
    """The error messages rendered under the form field ``key`` (and only there)."""
    return re.findall(rf'<p class="field-error" id="err-{re.escape(key)}-\d+">([^<]*)</p>', page)


def test_the_form_offers_the_banks_and_the_defaults(host, spec_bank):
    page = host.get("/host/sessions/new").get_data(as_text=True)
    assert f'<option value="{BANK}">{BANK} (5 questions; rounds 1–2 dealt in the bank)</option>' in page
    assert 'name="rounds" type="text" value="5"' in page and 'name="jurors_count" type="text" value="16"' in page
    assert page.count('data-player-row="') == 5 + 1  # five rows and the template for more
    assert host.get(f"/host/sessions/new?bank={BANK}").get_data(as_text=True).count(f'value="{BANK}" selected') == 1


@pytest.mark.each_database
def test_a_session_created_through_the_form(host, db, spec_bank):
    response = host.post("/host/sessions/new", data=setup_form(host))
    assert response.status_code == 302
    vtt = db.scalar(select(VttSession).where(VttSession.name == "Pilot"))
    assert response.headers["Location"] == f"/host/sessions/{vtt.id}"
    assert (vtt.rounds, vtt.questions_per_round, vtt.seed, vtt.answer_seconds, vtt.vote_seconds) == (1, 5, 7, 45, 90)
    assert (vtt.reveal_policy.value, vtt.pass_rule.value, vtt.pass_alpha, vtt.open_join) == (
        "per-round",
        "chance",
        0.1,
        True,
    )
    assert vtt.design["clip_playback"] == "device"
    assert [(p.name, p.kind, p.age, p.stage, p.backends) for p in vtt.players] == [
        ("Minjun", PlayerKind.HUMAN, 10, "middle concrete operational", {}),
        ("지수", PlayerKind.HUMAN, 24, None, {}),
        ("Agent", PlayerKind.AI, None, None, {"mcq": "mcq-model", "open": "open-model"}),
    ]
    assert [(j.label, j.age_band, j.sex, j.expert) for j in vtt.jurors] == [
        ("J1", "30s", "female", True),
        ("J2", None, None, False),
    ]
    assert vtt.round_states[0].theme == "emotion recognition" and len(vtt.questions) == 5
    assert vtt.design["players"][2] == {
        "name": "Agent",
        "kind": "ai",
        "backends": {"mcq": "mcq-model", "open": "open-model"},
    }
    assert len(vtt.design_hash) == 64

    page = host.get(response.headers["Location"]).get_data(as_text=True)
    assert f"Session Pilot created: join code {vtt.join_code}." in page
    base = "http://localhost"
    for person in vtt.players:
        assert f'href="{base}/play/{person.token}"' in page
    for juror in vtt.jurors:
        assert f'href="{base}/jury/{juror.token}"' in page
    assert f"{base}/join/{vtt.join_code}" in page and f"{base}/stage/{vtt.join_code}" in page
    assert '<code id="base-url">http://localhost</code>' in page
    # the preflight: the spec bank's clips are nowhere in this test's media folder
    assert (
        "Not every clip of this session will play (the live console lists each clip, with a preview): "
        "5 questions: 0 clips ready"
    ) in page
    assert "Phones cannot open links to this machine" in page  # localhost: a phone would not reach it


@pytest.mark.parametrize(
    "overrides, key, message",
    [
        ({"rounds": "five"}, "rounds", "must be a whole number from 1 to 100, not 'five'"),
        ({"answer_seconds": "0"}, "answer_seconds", "must be a whole number from 1 to 3600, not 0"),
        ({"pass_alpha": "1.5"}, "pass_alpha", "must be a number strictly between 0 and 1, not 1.5"),
        ({"players-1-age": "old"}, "players-1-age", "must be a whole number of years, not 'old'"),
        ({"players-0-name": "", "players-0-age": "10"}, "players-0-name", "is required"),
        ({"players-1-name": "Minjun"}, "players-1-name", "'Minjun' appears twice"),
        ({"players-2-kind": "human"}, "players", 'needs at least one AI player (kind "ai")'),
        ({"ai_votes_per_juror": "2"}, "ai_votes_per_juror", "is 2 but the session has 1 AI player(s)"),
        ({"jurors-1-label": "J1"}, "jurors-1-label", "'J1' appears twice"),
        ({"name": ""}, "name", "is required"),
        ({"clip_playback": "tv"}, "clip_playback", "must be one of host, device, not 'tv'"),
        ({"bank": "Nope"}, "bank", "no question bank named 'Nope'"),
        ({"questions_per_round": "9"}, "questions_per_round", "1 x 9 = 9 questions needed, the bank has 5"),
        ({"jurors_source": "count", "jurors_count": "many"}, "jurors_count", "must be a whole number, not 'many'"),
        ({"jurors_source": "count", "jurors_count": "5000"}, "jurors_count", "must be from 0 to 1000, not 5000"),
        ({"jurors_source": "csv"}, "jurors_csv", "choose a CSV file of jurors"),
    ],
)
def test_a_bad_field_is_named_next_to_it_and_nothing_is_written(host, db, spec_bank, overrides, key, message):
    response = host.post("/host/sessions/new", data=setup_form(host, **overrides))
    page = response.get_data(as_text=True)
    assert response.status_code == 422
    assert error_next_to(page, key) == [message.replace("'", "&#39;").replace('"', "&#34;")]
    assert "no session was created" in page and sessions_in(db) == 0
    assert f'id="f-{key}"' in page or key == "players"
    if key.startswith("players-"):  # what was typed comes back, blank rows included
        assert 'name="players-2-mcq" type="text" value="mcq-model"' in page


def test_a_second_session_of_the_same_name_is_refused(host, db, spec_bank):
    assert host.post("/host/sessions/new", data=setup_form(host)).status_code == 302
    page = host.post("/host/sessions/new", data=setup_form(host)).get_data(as_text=True)
    assert error_next_to(page, "name") == ["a session named &#39;Pilot&#39; exists already"]
    assert sessions_in(db) == 1


def test_numbered_jurors_and_a_jurors_csv(host, db, spec_bank):
    form = setup_form(host, jurors_source="count", jurors_count="12")
    assert host.post("/host/sessions/new", data=form).status_code == 302
    labels = db.scalars(select(Juror.label).order_by(Juror.id)).all()
    assert labels == [f"J{n:02d}" for n in range(1, 13)]

    bad = b"label,age_band,sex,expert\nA,20s,female,yes\nB,30s,male,perhaps\nA,,,\n"
    form = setup_form(host, name="From CSV", jurors_source="csv")
    form["jurors_csv"] = (io.BytesIO(bad), "panel.csv")
    page = host.post("/host/sessions/new", data=form, content_type="multipart/form-data").get_data(as_text=True)
    assert error_next_to(page, "jurors_csv") == [
        "panel.csv: row 3: field &#39;expert&#39;: must be yes, no, true, false, 1, 0 or empty, not &#39;perhaps&#39;",
        "panel.csv: row 4: field &#39;label&#39;: &#39;A&#39; appears twice",
    ]
    assert sessions_in(db) == 1

    good = "label,age_band,sex,expert,group\n민지,20s,female,yes,panel\nB,30s,male,,\n".encode()
    form = setup_form(host, name="From CSV", jurors_source="csv")
    form["jurors_csv"] = (io.BytesIO(good), "panel.csv")
    assert host.post("/host/sessions/new", data=form, content_type="multipart/form-data").status_code == 302
    vtt = db.scalar(select(VttSession).where(VttSession.name == "From CSV"))
    assert [(j.label, j.expert, j.juror_group) for j in vtt.jurors] == [("민지", True, "panel"), ("B", None, None)]


@pytest.mark.each_database
def test_the_join_base_url_is_configured_derived_or_set_on_this_console(host, app, db, spec_bank, lan_address):
    assert host.post("/host/sessions/new", data=setup_form(host)).status_code == 302
    created = db.scalar(select(VttSession))
    path = f"/host/sessions/{created.id}"

    def shown() -> str:
        return re.search(r'<code id="base-url">([^<]+)</code>', host.get(path).get_data(as_text=True)).group(1)

    app.config.update(SERVE_HOST="0.0.0.0", SERVE_PORT=5000)
    assert shown() == "http://192.168.7.23:5000"  # serving on all interfaces: the LAN address
    assert "Phones cannot open" not in host.get(path).get_data(as_text=True)
    app.config["BASE_URL"] = "https://vtt.example.org"
    assert shown() == "https://vtt.example.org"  # VTT_BASE_URL wins over the derived one

    token = form_token(host, path)
    response = host.post(
        "/host/join-base-url", data={"csrf_token": token, "base_url": "http://10.0.0.5:8000/", "next": path}
    )
    assert response.headers["Location"] == path
    page = host.get(path).get_data(as_text=True)
    assert shown() == "http://10.0.0.5:8000" and f"http://10.0.0.5:8000/play/{created.players[0].token}" in page
    host.post("/host/join-base-url", data={"csrf_token": token, "base_url": "javascript:alert(1)", "next": path})
    page = host.get(path).get_data(as_text=True)
    assert "javascript:alert(1) is not an http:// or https:// address; the links are unchanged." in page
    assert shown() == "http://10.0.0.5:8000"
    host.post("/host/join-base-url", data={"csrf_token": token, "reset": "1", "next": "//evil.example"})
    assert shown() == "https://vtt.example.org"


@pytest.mark.each_database
def test_the_session_page_links_only_pages_that_exist_and_sets_round_participants(host, app, db, spec_bank):
    form = setup_form(host, rounds="2", questions_per_round="2", **{"players-3-name": "Grace"})
    assert host.post("/host/sessions/new", data=form).status_code == 302
    vtt = db.scalar(select(VttSession))
    page = host.get(f"/host/sessions/{vtt.id}").get_data(as_text=True)
    nav = re.search(r'<nav class="session-pages"[^>]*>(.*?)</nav>', page, re.S).group(1)
    linked = re.findall(r'href="([^"]+)"', nav)
    adapter = app.url_map.bind("localhost")
    for href in linked:
        if href.startswith("/"):
            adapter.match(href)  # raises for a page that does not exist
    assert f"/host/sessions/{vtt.id}/live" in linked
    assert f"/host/sessions/{vtt.id}/nothing-here" not in linked

    ids = [p.id for p in vtt.players]  # Minjun, 지수, Agent, Grace
    token = form_token(host, f"/host/sessions/{vtt.id}")
    response = host.post(
        f"/host/sessions/{vtt.id}/rounds/2/participants",
        data={"csrf_token": token, "players": [str(ids[0]), str(ids[2])]},
    )
    assert response.headers["Location"].endswith(f"/host/sessions/{vtt.id}#round-2")
    db.expire_all()
    rounds = {
        r.number: r.participants for r in db.scalars(select(SessionRound).where(SessionRound.session_id == vtt.id))
    }
    assert rounds == {1: None, 2: sorted([ids[0], ids[2]])}
    page = host.get(f"/host/sessions/{vtt.id}").get_data(as_text=True)
    assert "Round 2: participants saved." in page
    round_two = page[page.index('id="round-2"') :]
    assert f'value="{ids[1]}">' in round_two and f'value="{ids[0]}" checked>' in round_two
    # The engine's own rule: a round needs two players.
    host.post(f"/host/sessions/{vtt.id}/rounds/1/participants", data={"csrf_token": token, "players": [str(ids[0])]})
    assert "Round 1: a round needs at least two players" in host.get(f"/host/sessions/{vtt.id}").get_data(as_text=True)


def upload(client, content: bytes, filename: str, **fields):
    data = {"csrf_token": form_token(client, "/host/"), "file": (io.BytesIO(content), filename), **fields}
    return client.post("/host/banks/upload", data=data, content_type="multipart/form-data")


def workbook(rows: list[list]) -> bytes:
    book = Workbook()
    for row in rows:
        book.active.append(row)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def bank_names(db) -> list[str]:
    db.expire_all()
    return db.scalars(select(QuestionBank.name)).all()


def test_an_xlsx_bank_is_read_like_its_csv(host, db):
    import csv

    rows = list(csv.reader((DATA / "spec_examples.csv").open(encoding="utf-8")))
    # Spreadsheet cells hold numbers as numbers: 0 and 3.5, not "0" and "3.5".
    typed = [rows[0]] + [[float(c) if re.fullmatch(r"\d+(\.\d+)?", c) else c for c in row] for row in rows[1:]]
    response = upload(host, workbook(typed), "spec.xlsx")
    assert response.status_code == 302
    page = host.get(response.headers["Location"]).get_data(as_text=True)
    assert "Imported 5 questions (csv) into bank spec; 0 without CogME tags." in page
    bank = db.scalar(select(QuestionBank).where(QuestionBank.name == "spec"))
    from vtt.banks import bank_records

    assert bank_records(db, bank) == read_bank(DATA / "spec_examples.csv").records


def test_xlsx_problems_name_spreadsheet_rows_and_nothing_is_imported(host, db):
    rows = [
        ["qid", "question", "answer", "type"],
        ["a1", "Fine?", "yes", "open"],
        [None, None, None, None],
        ["a2", "", "yes", "open"],
        ["a3", "", "yes", "open"],
        ["a1", "Again?", "no", "essay"],
    ]
    response = upload(host, workbook(rows), "bank.xlsx", bank="Sheet bank")
    page = response.get_data(as_text=True)
    assert response.status_code == 422 and bank_names(db) == []
    assert "bank.xlsx: 4 problems; nothing was imported" in page
    assert "<li>bank.xlsx: 2 rows (4, 5): field &#39;question&#39;: is empty</li>" in page  # row 3 is blank
    assert "bank.xlsx: row 6: field &#39;qid&#39;: &#39;a1&#39; repeats row 2" in page
    assert 'value="Sheet bank"' in page  # the form keeps what was typed


def test_a_korean_excel_csv_gets_a_hint_that_names_its_encoding(host, db):
    text = "qid,question,answer\nk1,해영이는 무엇을 입고 있나요?,흰 코트\n"
    response = upload(host, text.encode("cp949"), "korean.csv")
    page = response.get_data(as_text=True)
    assert response.status_code == 422 and bank_names(db) == []
    assert 'data-encoding="CP949"' in page and "looks saved by Korean Excel in CP949" in page
    assert "korean.csv: is not UTF-8 text" in page
    latin = upload(host, "qid,question,answer\nx,caf\xe9?,oui\n".encode("latin-1") + b"\x81\xff", "latin.csv")
    assert latin.status_code == 422 and "data-encoding" not in latin.get_data(as_text=True)
    assert upload(host, text.encode("utf-8"), "korean.csv").status_code == 302


def test_upload_quirks_are_shown_but_do_not_block(host, db):
    text = "qid,question,answer,start,end\nw1,Same?,yes,3,3\nw2,Same?,no,,\n"
    response = upload(host, text.encode(), "quirky.csv", bank="Quirky")
    assert response.status_code == 302 and bank_names(db) == ["Quirky"]
    page = host.get(response.headers["Location"]).get_data(as_text=True)
    assert "2 known quirks of published files, imported as noted:" in page
    assert "quirky.csv: row 3: field &#39;question&#39;: the same text as row 2" in page
    strict = upload(host, text.encode(), "quirky.csv", bank="Strict", strict="on")
    assert strict.status_code == 422 and "(a quirk, refused as asked)" in strict.get_data(as_text=True)
    assert bank_names(db) == ["Quirky"]


@pytest.mark.each_database
def test_uploads_that_are_not_bank_files(host, db):
    page = upload(host, b"%PDF-1.4", "paper.pdf").get_data(as_text=True)
    assert "paper.pdf: is not a bank file; upload one of .csv, .tsv, .json, .jsonl, .xlsx" in page
    page = upload(host, b"not a zip", "sheet.xlsx").get_data(as_text=True)
    assert "sheet.xlsx: is not an .xlsx workbook" in page
    response = host.post("/host/banks/upload", data={"csrf_token": form_token(host, "/host/")})
    assert response.status_code == 422 and "Choose a file to upload." in response.get_data(as_text=True)
    assert bank_names(db) == []


def decode_terminal_qr(drawing: str) -> str:
    """Read a QR code drawn with half blocks (light on dark, as printed) back with a QR reader."""
    import numpy as np
    import zxingcpp

    lines = drawing.splitlines()
    width = max(len(line) for line in lines)
    pixels = np.zeros((2 * len(lines), width), dtype=np.uint8)
    for y, line in enumerate(lines):
        for x, char in enumerate(line.ljust(width)):
            pixels[2 * y, x] = 255 if char in "█▀" else 0
            pixels[2 * y + 1, x] = 255 if char in "█▄" else 0
    framed = np.pad(pixels, 4, constant_values=255).repeat(8, axis=0).repeat(8, axis=1)
    found = zxingcpp.read_barcodes(framed)
    assert found, "no QR code in the drawing"
    return found[0].text


def test_make_run_prints_the_login_the_lan_address_and_the_demo_join_qr(
    run, db, monkeypatch, capsys, lan_address, threaded_serving
):
    import vtt.serving.server
    from tests.support.apps import HOST_PASSWORD
    from tests.support.served import free_port

    run("demo", "load")
    code = db.scalar(select(VttSession.join_code).where(VttSession.name == "Demo VTT session"))
    monkeypatch.delenv("VTT_BASE_URL", raising=False)
    monkeypatch.setattr(vtt.serving.server, "serve_forever", lambda app, host, port: app.extensions["vtt.hub"].stop())
    port = free_port()
    vtt.serving.server.serve("0.0.0.0", port)
    output = capsys.readouterr().out
    link = f"http://192.168.7.23:{port}/join/{code}"
    assert f"Host console: http://192.168.7.23:{port}/host/login" in output
    assert f"Host password: {HOST_PASSWORD}" in output
    assert f"LAN address: http://192.168.7.23:{port}" in output
    assert f"Demo session: jurors join at {link}" in output
    drawing = "\n".join(line for line in output.splitlines() if line and set(line) <= set("█▀▄ \xa0"))
    assert decode_terminal_qr(drawing) == link

    vtt.serving.server.serve("127.0.0.1", port)
    output = capsys.readouterr().out
    assert "for phones on the venue Wi-Fi: make run HOST=0.0.0.0" in output
    assert f"jurors join at http://127.0.0.1:{port}/join/{code}" in output


def test_a_bank_uploaded_through_the_page_names_the_host_as_its_importer(host, db):
    from vtt.models import Event

    assert upload(host, (DATA / "spec_examples.csv").read_bytes(), "spec.csv", bank="Uploaded").status_code == 302
    import_bank(db, read_bank(DATA / "spec_examples.csv"), "From the command line")  # vtt questions import
    db.commit()
    events = db.execute(select(Event.actor, Event.payload).where(Event.kind == "bank.imported")).all()
    assert {payload["bank"]: actor for actor, payload in events} == {"Uploaded": "host", "From the command line": "cli"}


def flashes(page: str) -> list[tuple[str, str, str]]:
    """(category, role, text) of each flash message on a page."""
    return [
        (kind, role, re.sub(r"<[^>]+>", "", text).strip())
        for kind, role, text in re.findall(r'<p class="flash flash-(\w+)" role="(\w+)">(.*?)</p>', page, re.S)
    ]


def test_flash_messages_carry_their_category_and_errors_are_alerts(host, db):
    response = upload(host, (DATA / "spec_examples.csv").read_bytes(), "spec.csv", bank="Flashy")
    assert flashes(host.get(response.headers["Location"]).get_data(as_text=True)) == [
        ("success", "status", "Done: Imported 5 questions (csv) into bank Flashy; 0 without CogME tags.")
    ]

    refused = host.post(
        "/host/join-base-url", data={"csrf_token": form_token(host, "/host/"), "base_url": "ftp://x", "next": "/host/"}
    )
    assert refused.status_code == 302
    page = host.get(refused.headers["Location"]).get_data(as_text=True)
    assert flashes(page) == [
        ("error", "alert", "Error: ftp://x is not an http:// or https:// address; the links are unchanged.")
    ]
    assert flashes(host.get("/host/").get_data(as_text=True)) == []  # shown once

    korean = host.post(
        "/host/join-base-url?lang=ko",
        data={"csrf_token": form_token(host, "/host/"), "base_url": "ftp://x", "next": "/host/"},
    )
    assert flashes(host.get(korean.headers["Location"]).get_data(as_text=True))[0][:2] == ("error", "alert")


@pytest.mark.each_database
def test_the_form_marks_a_paper_juror_and_the_paper_pages_list_them(host, db, spec_bank):
    import subprocess

    refused = host.post("/host/sessions/new", data=setup_form(host, **{"jurors-1-paper": "on", "rounds": "x"}))
    assert refused.status_code == 422
    assert 'name="jurors-1-paper" value="on" checked' in refused.get_data(as_text=True)  # kept on re-display
    assert 'name="jurors-0-paper" value="on">' in refused.get_data(as_text=True)

    response = host.post("/host/sessions/new", data=setup_form(host, **{"jurors-1-paper": "on"}))
    assert response.status_code == 302
    vtt = db.scalar(select(VttSession).where(VttSession.name == "Pilot"))
    assert [(j.label, j.juror_group) for j in vtt.jurors] == [("J1", None), ("J2", "paper")]
    assert vtt.design["jurors"][1]["group"] == "paper"

    entry = host.get(f"/host/sessions/{vtt.id}/paper").get_data(as_text=True)
    options = re.findall(r'<option value="\d+"(?: selected)?>([^<]*)</option>', entry)
    assert options[:2] == ["J2 · paper", "J1"]  # the paper juror first, and the form opens on them
    sheets = host.get(f"/host/sessions/{vtt.id}/paper-sheets.pdf?lang=en")
    assert sheets.status_code == 200 and sheets.mimetype == "application/pdf"
    require_poppler()
    text = subprocess.run(["pdftotext", "-", "-"], input=sheets.data, capture_output=True, check=True).stdout
    assert b"J2" in text and b"J1" not in text  # only the marked juror gets a sheet
