"""``vtt session create | list | show``: a design file in, everyone's link out, the design hashed and kept."""

from __future__ import annotations

import hashlib
import json
import re
import shutil

import pytest
from sqlalchemy import func, select

from vtt.access.admission import stage_key
from vtt.banks import import_bank, read_bank
from vtt.config import Settings
from vtt.db import make_db_factory, make_engine
from vtt.models import Event, Juror, Player, VttSession
from vtt.sessions.demo import BANK_FILE, SESSION_FILE

BASE = "https://vtt.example.org"


@pytest.fixture
def demo_bank(db):
    import_bank(db, read_bank(BANK_FILE), "Demo drama bank")
    db.commit()


def demo_design(**changes) -> dict:
    design = json.loads(SESSION_FILE.read_text(encoding="utf-8"))
    design.update(changes)
    return {key: value for key, value in design.items() if value is not None}


def write(tmp_path, design: dict, name: str = "design.json"):
    path = tmp_path / name
    path.write_text(json.dumps(design, ensure_ascii=False), encoding="utf-8")
    return path


def sha256_of(design: dict) -> str:
    canonical = json.dumps(design, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def count_sessions(db) -> int:
    db.expire_all()
    return db.scalar(select(func.count()).select_from(VttSession))


def test_create_with_numbered_jurors_prints_one_json_object(run, db, demo_bank):
    result = run("session", "create", str(SESSION_FILE), "--jurors", "16", "--json", "--base-url", BASE + "/")
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert set(out) == {
        "code",
        "name",
        "seed",
        "design_hash",
        "stage_url",
        "join_url",
        "players",
        "jurors",
        "clip_warnings",
    }
    stored = db.scalar(select(VttSession))
    assert out["code"] == stored.join_code and re.fullmatch(r"[A-HJ-NP-Z2-9]{6}", out["code"])
    assert out["name"] == "Demo VTT session" and out["seed"] == 2021 == stored.seed
    # The jurors given on the command line replace the file's own, in the stored and hashed design too.
    expected = demo_design(jurors=[{"label": f"J{n:02d}"} for n in range(1, 17)])
    assert stored.design == expected
    assert out["design_hash"] == sha256_of(expected) == stored.design_hash
    assert out["stage_url"] == f"{BASE}/stage/{out['code']}?key={stage_key(Settings.from_env().secret_key, stored.id)}"
    assert out["join_url"] == f"{BASE}/join/{out['code']}"  # the demo design has open_join
    assert [(p["label"], p["kind"]) for p in out["players"]] == [
        ("김민준", "human"),
        ("Lena", "human"),
        ("Tomás", "human"),
        ("Grace", "human"),
        ("Agent", "ai"),
    ]
    assert [j["label"] for j in out["jurors"]] == [f"J{n:02d}" for n in range(1, 17)]
    tokens = [p["token"] for p in out["players"]] + [j["token"] for j in out["jurors"]]
    assert len(set(tokens)) == 21 and all(re.fullmatch(r"[A-Za-z0-9_-]{24}", t) for t in tokens)
    for player in out["players"]:
        assert player["url"] == f"{BASE}/play/{player['token']}"
    for juror in out["jurors"]:
        assert juror["url"] == f"{BASE}/jury/{juror['token']}"
    assert {(p.name, p.token) for p in db.scalars(select(Player))} == {(p["label"], p["token"]) for p in out["players"]}
    rows = db.scalars(select(Juror).order_by(Juror.id)).all()
    assert [(j.label, j.token, j.age_band, j.sex, j.expert, j.juror_group) for j in rows] == [
        (j["label"], j["token"], None, None, None, None) for j in out["jurors"]
    ]
    assert db.scalar(select(Event.actor).where(Event.kind == "session.created")) == "cli"


def test_create_prints_the_code_seed_hash_and_every_link(run, db, demo_bank, monkeypatch):
    monkeypatch.setenv("VTT_BASE_URL", "http://192.0.2.7:5000/")
    result = run("session", "create", str(SESSION_FILE))
    assert result.exit_code == 0, result.output
    stored = db.scalar(select(VttSession))
    lines = result.output.splitlines()
    assert lines[:4] == [
        "created session 'Demo VTT session'",
        f"join code:   {stored.join_code}",
        "seed:        2021 (from the design)",
        f"design hash: {stored.design_hash[:12]} (sha256; `vtt session show {stored.join_code}` prints it whole)",
    ]
    assert stored.design_hash == sha256_of(demo_design())  # the file as given, its own 16 jurors included
    key = stage_key(Settings.from_env().secret_key, stored.id)
    assert f"stage screen: http://192.0.2.7:5000/stage/{stored.join_code}?key={key}" in lines
    assert f"open join:    http://192.0.2.7:5000/join/{stored.join_code}" in lines
    for player in stored.players:  # a player's answer modes after the link, unless only text
        modes = [] if player.answer_modes == ["text"] else [f"({', '.join(player.answer_modes)})"]
        assert any(
            line.split(maxsplit=3)
            == [player.name, str(player.kind), f"http://192.0.2.7:5000/play/{player.token}"] + modes
            for line in lines
        )
    assert "jurors (16):" in lines
    for juror in stored.jurors:
        assert f"  {juror.label}  http://192.0.2.7:5000/jury/{juror.token}" in lines
    assert [(j.label, j.age_band, j.expert) for j in stored.jurors][:2] == [("J01", "20s", True), ("J02", "30s", True)]


def test_the_hash_depends_on_the_design_only(
    run, db, demo_bank, database_url, migrated_template, tmp_path, monkeypatch
):
    first = json.loads(run("session", "create", str(SESSION_FILE), "--jurors", "3", "--json").output)
    renamed = json.loads(
        run("session", "create", str(SESSION_FILE), "--jurors", "3", "--name", "Rerun", "--json").output
    )
    assert renamed["name"] == "Rerun" and renamed["design_hash"] != first["design_hash"]
    three = [{"label": "J01"}, {"label": "J02"}, {"label": "J03"}]
    assert renamed["design_hash"] == sha256_of(demo_design(name="Rerun", jurors=three))
    # The same design in another database: the same hash (and new codes and tokens).
    other = tmp_path / "other.db"
    shutil.copy(migrated_template, other)
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{other}")
    engine = make_engine(f"sqlite:///{other}")
    with make_db_factory(engine)() as other_db:
        import_bank(other_db, read_bank(BANK_FILE), "Demo drama bank")
        other_db.commit()
    engine.dispose()
    again = json.loads(run("session", "create", str(SESSION_FILE), "--jurors", "3", "--json").output)
    assert again["design_hash"] == first["design_hash"]
    assert again["jurors"][0]["token"] != first["jurors"][0]["token"]


def test_a_design_without_a_seed_gets_one_drawn_and_recorded(run, db, demo_bank, tmp_path):
    path = write(tmp_path, demo_design(seed=None))
    one = json.loads(run("session", "create", str(path), "--name", "One", "--json").output)
    two = run("session", "create", str(path), "--name", "Two")
    drawn = re.search(r"^seed: +(\d+) \(drawn at random, recorded\)$", two.output, re.M)
    assert drawn, two.output
    seeds = {s.name: s.seed for s in db.scalars(select(VttSession))}
    assert seeds == {"One": one["seed"], "Two": int(drawn.group(1))} and one["seed"] != seeds["Two"]
    assert "seed" not in db.scalar(select(VttSession).where(VttSession.name == "One")).design  # the design as given
    show = run("session", "show", one["code"])
    assert f"seed:          {one['seed']}" in show.output.splitlines()


def test_a_bad_design_lists_every_problem_and_writes_nothing(run, db, demo_bank, tmp_path):
    design = demo_design(colour="red")
    design["jurors"][2]["expert"] = "maybe"
    design["jurors"][5]["label"] = "J01"
    result = run("session", "create", str(write(tmp_path, design)))
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "error: 3 problems; no session was created",
        "  design.json: field 'colour': is not a known setting",
        "  design.json: field 'jurors[2].expert': must be true, false or null, not 'maybe'",
        "  design.json: field 'jurors[5].label': 'J01' appears twice",
    ]
    assert count_sessions(db) == 0


def test_a_bad_jurors_csv_is_reported_with_the_design_and_writes_nothing(run, db, demo_bank, tmp_path):
    jurors = tmp_path / "jurors.csv"
    jurors.write_text(
        "label,age_band,sex,expert,group\nJ01,20s,female,yes,panel\nJ02,30s,male,perhaps,panel\n", encoding="utf-8"
    )
    design = demo_design(round=3)
    design["jurors"][0]["expert"] = "maybe"  # replaced by the CSV: not reported
    result = run("session", "create", str(write(tmp_path, design)), "--jurors", str(jurors))
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "error: 2 problems; no session was created",
        "  jurors.csv: row 3: field 'expert': must be yes, no, true, false, 1, 0 or empty, not 'perhaps'",
        "  design.json: field 'round': is not a known setting (did you mean 'rounds'?)",
    ]
    assert count_sessions(db) == 0
    nowhere = run("session", "create", str(SESSION_FILE), "--jurors", str(tmp_path / "missing.csv"))
    assert nowhere.exit_code == 1 and "--jurors: " in nowhere.output and "neither a number" in nowhere.output
    assert count_sessions(db) == 0


def test_a_good_jurors_csv_replaces_the_designs_jurors(run, db, demo_bank, tmp_path):
    jurors = tmp_path / "jurors.csv"
    jurors.write_text("label,age_band,sex,expert,group\nP1,20s,female,yes,panel\nP2,,,,\n", encoding="utf-8")
    out = json.loads(run("session", "create", str(SESSION_FILE), "--jurors", str(jurors), "--json").output)
    assert [j["label"] for j in out["jurors"]] == ["P1", "P2"]
    stored = db.scalar(select(VttSession))
    assert stored.design["jurors"] == [
        {"label": "P1", "age_band": "20s", "sex": "female", "expert": True, "group": "panel"},
        {"label": "P2"},
    ]
    assert [(j.label, j.expert, j.juror_group) for j in stored.jurors] == [("P1", True, "panel"), ("P2", None, None)]


def test_errors_found_only_by_the_database_side_write_nothing(run, db, demo_bank, tmp_path):
    assert run("session", "create", str(SESSION_FILE), "--jurors", "2").exit_code == 0
    twice = run("session", "create", str(SESSION_FILE))
    assert twice.exit_code == 1
    assert twice.output.splitlines() == [
        "error: 1 problem; no session was created",
        "  session: field 'name': a session named 'Demo VTT session' exists already",
    ]
    unknown_bank = run("session", "create", str(write(tmp_path, demo_design(name="X", bank="Nope"))))
    assert unknown_bank.exit_code == 1 and "no question bank named 'Nope'" in unknown_bank.output
    assert count_sessions(db) == 1
    bad_url = run("session", "create", str(SESSION_FILE), "--base-url", "vtt.example.org")
    assert bad_url.exit_code == 2 and "not an http:// or https:// address" in bad_url.output


def test_list_and_show(run, db, demo_bank, tmp_path):
    assert run("session", "list").output == "no sessions yet (`vtt session create FILE` makes one)\n"
    first = json.loads(run("session", "create", str(SESSION_FILE), "--json").output)
    closed = json.loads(
        run(
            "session",
            "create",
            str(write(tmp_path, demo_design(name="Closed", open_join=False))),
            "--jurors",
            "0",
            "--json",
        ).output
    )
    assert closed["join_url"] is None and closed["jurors"] == []
    lines = run("session", "list").output.splitlines()
    assert lines[0].split() == [
        "code",
        "name",
        "phase",
        "rounds",
        "players",
        "jurors",
        "displaced",
        "ai_jurors",
        "created",
    ]
    assert lines[1].split()[:10] == [first["code"], "Demo", "VTT", "session", "draft", "5", "5", "16", "0", "0"]
    assert lines[2].split()[:8] == [closed["code"], "Closed", "draft", "5", "5", "0", "0", "0"]
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC$", lines[2])

    show = run("session", "show", first["code"].lower(), "--base-url", BASE)
    assert show.exit_code == 0, show.output
    text = show.output.splitlines()
    assert text[:5] == [
        f"session 'Demo VTT session'  join code {first['code']}",
        "phase:         draft (not started); state version 0",
        "design:        5 rounds x 6 questions from bank 'Demo drama bank'",
        "seed:          2021",
        f"design hash:   {first['design_hash']}",
    ]
    stage_path = first["stage_url"].split("/stage/")[1]  # the code and the stage key
    assert f"stage screen: {BASE}/stage/{stage_path}" in text and "?key=" in stage_path
    assert f"open join:    {BASE}/join/{first['code']}" in text
    tokens = {p["label"]: p["token"] for p in first["players"] + first["jurors"]}
    assert f"  Agent   ai     {BASE}/play/{tokens['Agent']}" in text
    assert f"  김민준  human  {BASE}/play/{tokens['김민준']}  (text, read_aloud)" in text  # wide characters: 2 columns
    assert f"  J01  {BASE}/jury/{tokens['J01']}  (20s, female, AI expert, group panel)" in text
    assert f"  J16  {BASE}/jury/{tokens['J16']}  (50s, male, not an AI expert, group panel)" in text

    shown = json.loads(run("session", "show", closed["code"], "--json").output)
    assert {key: shown[key] for key in closed if key != "clip_warnings"} == {  # create's preflight only
        key: value for key, value in closed.items() if key != "clip_warnings"
    }
    assert (shown["phase"], shown["current_round"], shown["state_version"], shown["bank"]) == (
        "draft",
        None,
        0,
        "Demo drama bank",
    )
    assert "open join:    off (only the jurors below)" in run("session", "show", closed["code"]).output


def test_show_an_unknown_code(run, db):
    result = run("session", "show", "nope42")
    assert result.exit_code == 1
    assert result.output == "error: no session with join code 'NOPE42' (`vtt session list` shows every session)\n"


def test_the_demo_has_sixteen_jurors_and_open_join_and_loads_once(run, db):
    assert run("demo", "load").exit_code == 0 and run("demo", "load").exit_code == 0
    assert count_sessions(db) == 1
    demo = db.scalar(select(VttSession))
    assert demo.open_join is True and demo.design_hash == sha256_of(demo_design())
    jurors = demo.jurors
    assert [j.label for j in jurors] == [f"J{n:02d}" for n in range(1, 17)]
    assert sum(j.expert for j in jurors) == 6 and {j.age_band for j in jurors} == {"20s", "30s", "40s", "50s"}
    assert {j.sex for j in jurors} == {"female", "male"} and len({j.token for j in jurors}) == 16


def test_create_warns_about_clips_that_will_not_play_and_creates_the_session_all_the_same(
    run, db, demo_bank, tmp_path, monkeypatch
):
    from vtt.sessions.demo.clips import ensure_demo_clips

    media = tmp_path / "media"
    monkeypatch.setenv("VTT_MEDIA_DIR", str(media))
    result = run("session", "create", str(SESSION_FILE))
    assert result.exit_code == 0 and count_sessions(db) == 1
    lines = result.output.splitlines()
    start = lines.index("warning: not every clip is ready (`vtt media check --bank NAME` checks the bank again):")
    assert lines[start + 1] == (
        "  30 questions: 0 clips ready, 0 with a warning, 30 with a problem, 0 online (not checked), 0 without a clip:"
    )
    assert lines[start + 2].startswith("  Demo VTT session: 30 questions (")
    assert lines[start + 2].endswith(
        f"field 'clip': the file is not in the media folder ({media}): copy it "
        "there, or build it with `vtt media prepare`"
    )
    ensure_demo_clips(media)
    (media / "clips" / "ep01_s014.mp4").write_bytes(b"truncated")
    second = run("session", "create", str(SESSION_FILE), "--name", "Second", "--json")
    warnings = json.loads(second.output)["clip_warnings"]
    assert warnings[0].startswith("30 questions: 26 clips ready, 0 with a warning, 4 with a problem")
    assert (
        "cannot be opened as a video" in warnings[1] and "4 questions (q06, q16, q15, q12)" in warnings[1]
    )  # play order
