"""A round cut short: the host stops the session after 2 of round 3's 3 questions, before round 3's vote opens.

Five rounds of three questions are designed; rounds 1 and 2 are played to their votes (tests.support.review's
VOTES: live detection 3/4 and 1/3), round 3 shows and reveals 2 of its 3 questions and the host presses "Stop the
session now".  Round 3 is not a round the live jury judged: by default no other jury is offered it; offered
explicitly, it is labelled cut short and never pooled with the whole rounds; the cover and the results page say so.
"""

from __future__ import annotations

import json
import re
import subprocess

import pandas as pd
import pytest
from sqlalchemy import select

from tests.support.judge import FakeJudge
from tests.support.live import Role
from tests.support.machine import require_poppler
from tests.support.review import host_client, play_session, post, vote_as_other_juries
from vtt.extensions import socketio
from vtt.juries.ai import JurySettings, judge_session, rounds_to_judge
from vtt.juries.displaced import JuryError, create_jurors, open_link
from vtt.models import Juror, Jury, VttSession
from vtt.reports.session import write_session_reports
from vtt.reports.session_info import session_info
from vtt.reports.study import write_study
from vtt.results.tables import session_jury_stats, session_tables

COVERAGE = "round 3 cut short after 2 of 3 questions; rounds 4-5 not played: 8 of 15 questions shown"


@pytest.fixture
def cut(backend):
    app, db_factory = backend
    return app, db_factory, play_session(app, db_factory, designed_rounds=5, per_round=3, cut_short_after=2)


def displaced_rounds(app, token: str) -> list[int]:
    juror = Role(socketio, app, {"token": token})
    assert juror.connected
    rounds = [card["round"] for card in juror.last("snapshot")["rounds"]]
    juror.client.disconnect()
    return rounds


# D001 and D002 (offered round 3 explicitly) and the AI jury gpt-x name the AI in every round 3 pick: were round 3
# pooled, the displaced jury's pooled detection would be 4/6, not 2/4.
OTHERS = {
    "D001": (Jury.DISPLACED, None, ["Agent", "Grace", "Agent"]),
    "D002": (Jury.DISPLACED, None, ["Mina", "Agent", "Agent"]),
    "AI gpt-x": (Jury.AI, "gpt-x", ["Agent", "Agent", "Agent"]),
}


def test_a_round_whose_vote_never_opened_is_offered_to_no_other_jury(cut):
    """Found: the displaced and AI juries were given round 3 (its vote never opened: "Round 1 of 3" on a displaced
    juror's page), so the comparison set a live jury of 2 rounds against juries of 3."""
    app, db_factory, people = cut
    with db_factory() as db:
        session = db.get(VttSession, people.session_id)
        (made,) = create_jurors(db, session, 1)
        link = open_link(db, session, 5)
        db.commit()
        assert [ask.round for ask in rounds_to_judge(db, people.session_id)] == [1, 2]
        with pytest.raises(JuryError, match=r"^round 3 was cut short .*offered only when asked for") as refused:
            create_jurors(db, db.get(VttSession, people.session_id), 1, "2,3")
        assert refused.value.cut_short == (3,)  # the command line names its option: --cut-short
        with pytest.raises(JuryError, match=r"round 3 was cut short"):
            rounds_to_judge(db, people.session_id, [3])
        db.rollback()
        assert link.rounds is None
    assert displaced_rounds(app, made.token) == [1, 2]
    page = app.test_client().get(f"/jury/open/{link.token}").get_data(as_text=True)
    assert "2 rounds" in page or "2 라운드" in page


def test_the_host_may_offer_a_cut_short_round_and_it_is_never_pooled(cut, tmp_path):
    """Offered with cut_short, round 3 is judged, labelled cut short in every comparison (the stats, the report's
    CSVs and PDF, the results page) and left out of every pooled figure, the study's too."""
    app, db_factory, people = cut
    with db_factory() as db:
        session = db.get(VttSession, people.session_id)
        made = create_jurors(db, session, 2, cut_short=True)
        assert [ask.round for ask in rounds_to_judge(db, people.session_id, cut_short=True)] == [1, 2, 3]
        db.commit()
    assert displaced_rounds(app, made[0].token) == [1, 2, 3]
    vote_as_other_juries(db_factory, people.session_id, OTHERS)
    with db_factory() as db:
        stats = session_jury_stats(session_tables(db, db.get(VttSession, people.session_id)))
    rounds = stats.rounds.set_index(["jury", "round"])
    assert rounds.loc[("displaced", 3), "cut_short"] and not rounds.loc[("displaced", 2), "cut_short"]
    assert rounds.loc[("displaced", 3), ["votes", "ai_votes"]].tolist() == [2, 2]  # judged, and shown
    pooled = stats.pooled.set_index("jury")
    assert pooled.loc["displaced", ["rounds", "votes", "ai_votes"]].tolist() == [2, 4, 2]
    assert pooled.loc["ai:gpt-x", ["rounds", "votes", "ai_votes"]].tolist() == [2, 2, 2]
    assert pooled.loc["live", ["rounds", "votes", "ai_votes"]].tolist() == [2, 7, 4]
    tests = stats.round_tests.set_index("round")
    assert "cut short" in tests.loc[3, "note"]

    with db_factory() as db:
        reports = write_session_reports(db, db.get(VttSession, people.session_id), tmp_path)
    detection = pd.read_csv(tmp_path / "jury_detection.csv")
    assert detection.loc[detection["round"] == 3, "cut_short"].all()
    assert not detection.loc[detection["round"] == 2, "cut_short"].any()
    assert detection.loc[(detection["scope"] == "pooled") & (detection["jury"] == "displaced"), "votes"].item() == 4
    require_poppler()
    text = " ".join(
        subprocess.run(
            ["pdftotext", str(reports.written["report.pdf"]), "-"], capture_output=True, text=True, check=True
        ).stdout.split()
    )
    assert "3 (cut short)" in text

    page = host_client(app).get(f"/host/sessions/{people.session_id}/results/").get_data(as_text=True)
    section = re.search(r'<section class="card" id="juries".*?</section>', page, re.S).group(0)
    row = re.search(r'<tr class="jury-round[^"]*" data-round="3" data-jury="live">(.*?)</tr>', section, re.S)
    assert "cut short: not pooled" in row.group(1)
    assert 'id="juries-cut-short"' in section
    displaced = re.search(r'<tr class="jury-pooled" data-jury="displaced">(.*?)</tr>', section, re.S).group(1)
    assert [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", displaced)][1:3] == [
        "4",
        "2",
    ]

    assert post(host_client(app), "/host/studies/", name="Cut", session=[people.code]).status_code == 302
    with db_factory() as db:
        written = {path.name: path for path in write_study(db, "Cut", tmp_path / "study")}
    juries = pd.read_csv(written["juries.csv"])
    study_pooled = juries[juries["session"] == "all"].set_index("jury")
    assert study_pooled.loc["displaced", ["rounds", "votes", "ai_votes"]].tolist() == [2, 4, 2]


def test_the_cover_and_the_results_page_say_the_round_was_cut_short(cut, tmp_path):
    """Found: the cover said "stopped after round 3 of 5", as if round 3 were complete, and the results page said
    "No votes in this round yet" for round 3 and for rounds 4 and 5, which never began."""
    app, db_factory, people = cut
    with db_factory() as db:
        session = db.get(VttSession, people.session_id)
        tables = session_tables(db, session)
        assert session_info(session, tables)["Questions shown"] == COVERAGE
        reports = write_session_reports(db, session, tmp_path, language="ko")
    require_poppler()
    cover = subprocess.run(
        ["pdftotext", str(reports.written["report.pdf"]), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "3라운드는 3문항 중 2문항 후 중단; 4-5라운드는 진행하지 않음: 15문항 중 8문항 제시" in " ".join(
        cover.split()
    )

    client = host_client(app)
    page = client.get(f"/host/sessions/{people.session_id}/results/").get_data(as_text=True)
    coverage = " ".join(
        re.sub(r"<[^>]+>", "", re.search(r'<p class="problem" id="coverage">(.*?)</p>', page, re.S).group(1)).split()
    )
    assert coverage.startswith(
        "Round 3 cut short after 2 of 3 questions; rounds 4-5 not played: 8 of 15 questions shown."
    )
    assert "No votes in this round yet" not in page
    blocks = dict(re.findall(r'<section class="card round" id="round-(\d)"(.*?)</section>', page, re.S))
    assert list(blocks) == ["1", "2", "3", "4", "5"]
    cards = {number: re.search(r'<p class="empty[^"]*">(.*?)</p>', block, re.S) for number, block in blocks.items()}
    assert cards["1"] is None and cards["2"] is None  # their tallies
    cards = {number: found.group(1) for number, found in cards.items() if found}
    assert cards["3"] == "Cut short after 2 of 3 questions: its vote never opened."
    assert cards["4"] == cards["5"] == "Not played: the session stopped before this round."
    korean = client.get(f"/host/sessions/{people.session_id}/results/?lang=ko").get_data(as_text=True)
    assert "3라운드는 3문항 중 2문항 후 중단; 4-5라운드는 진행하지 않음" in korean
    assert "진행하지 않음: 이 라운드 전에 세션이 중단되었습니다." in korean


def test_the_command_line_and_the_forms_offer_a_cut_short_round_only_when_asked(cut, migrated_database_url):
    app, db_factory, people = cut
    from click.testing import CliRunner

    from vtt.cli import main

    def run(*args: str):
        return CliRunner().invoke(main, list(args), env={"DATABASE_URL": migrated_database_url})

    made = run("jury", "displaced", people.code, "--jurors", "1", "--json")
    assert made.exit_code == 0, made.output
    offered = run("jury", "displaced", people.code, "--jurors", "1", "--cut-short", "--json")
    assert offered.exit_code == 0, offered.output
    tokens = [json.loads(out.output)["jurors"][0]["token"] for out in (made, offered)]
    assert [displaced_rounds(app, token) for token in tokens] == [[1, 2], [1, 2, 3]]
    refused = run("jury", "displaced", people.code, "--jurors", "1", "--rounds", "3")
    assert refused.exit_code == 1 and "--rounds: round 3 was cut short" in refused.output
    assert "--cut-short offers round 3" in refused.output

    with FakeJudge(respond=lambda body: json.dumps({"alias": "A", "confidence": 3})) as judge:
        plain = run("jury", "ai", people.code, "--judge", f"http:{judge.url}", "--model", "m1", "--json")
        assert json.loads(plain.output.strip().splitlines()[-1])["rounds"] == [1, 2]
        more = run("jury", "ai", people.code, "--judge", f"http:{judge.url}", "--model", "m2", "--cut-short", "--json")
        assert json.loads(more.output.strip().splitlines()[-1])["rounds"] == [1, 2, 3]
        with db_factory() as db:
            summary = judge_session(
                lambda: db_factory(), people.session_id, JurySettings.from_spec(f"http:{judge.url}", "m3")
            )
        assert summary.rounds == [1, 2]

    host = host_client(app)
    base = f"/host/sessions/{people.session_id}"
    page = host.get(base).get_data(as_text=True)
    assert 'name="cut_short"' in page and "Round 3 was cut short" in page
    assert post(host, f"{base}/displaced/jurors", count="1", cut_short="1").status_code == 302
    with db_factory() as db:
        newest = db.scalars(
            select(Juror).where(Juror.session_id == people.session_id, Juror.jury == Jury.DISPLACED).order_by(Juror.id)
        ).all()[-1]
        assert newest.rounds == [1, 2, 3]
    results = host.get(f"{base}/results/").get_data(as_text=True)
    assert re.search(r'<form[^>]*ai-jury-form.*?name="cut_short"', results, re.S)


def test_a_session_stopped_in_its_first_round_has_nothing_to_offer_unless_asked(backend):
    """Stopped after 1 of round 1's 3 questions: no round was voted on, so other juries get nothing by default (the
    refusal names --cut-short); the session page still offers the round cut short to a host who ticks the box."""
    app, db_factory = backend
    people = play_session(app, db_factory, votes={}, designed_rounds=2, per_round=3, cut_short_after=1)
    with db_factory() as db:
        session = db.get(VttSession, people.session_id)
        with pytest.raises(
            JuryError, match=r"no round .* to judge \(round 1 was cut short: offered only when asked for\)"
        ):
            create_jurors(db, session, 1)
        (made,) = create_jurors(db, session, 1, cut_short=True)
        db.commit()
    assert displaced_rounds(app, made.token) == [1]
    page = host_client(app).get(f"/host/sessions/{people.session_id}").get_data(as_text=True)
    assert 'name="cut_short"' in page and "Round 1 was cut short" in page
