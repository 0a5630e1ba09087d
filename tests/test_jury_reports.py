"""The juries side by side in a session's report, its CSVs and the results page, against hand-computed values.

The played session (tests/support/review.py) has 3 players (Agent the AI) who play both rounds, and 4 live jurors:
round 1 Agent 3, Mina 1 (75 %); round 2 Mina 2, Agent 1, one abstention (1/3).  Put straight into the database:

- the displaced jury, D001 (round 1 Agent, round 2 Grace) and D002 (round 1 Mina, round 2 Agent): 1/2 each round;
- the AI jury gpt-x, "AI gpt-x" (Agent both rounds): 2/2;
- the AI jury claude-y, "AI claude-y" (round 1 Grace, round 2 Mina): 0/2.

Pooled: live 4/7, displaced 2/4, ai:claude-y 0/2, ai:gpt-x 2/2.  Chance: 1/3 every round.
"""

from __future__ import annotations

import math
import re
import subprocess

import pandas as pd
import pytest
from sqlalchemy import select

from tests.support.apps import HOST_PASSWORD, login
from tests.support.browser import LAPTOP, PHONE, screenshot_dir
from tests.support.machine import require_poppler
from tests.support.review import host_client, judge_by_other_juries, play_session, post
from vtt.models import Juror, Jury, VttSession
from vtt.reports.session import write_session_reports
from vtt.reports.study import write_study
from vtt.results.export import export_tables
from vtt.results.tables import session_tables

Z = 1.959963984540054
JURIES = ["live", "displaced", "ai:claude-y", "ai:gpt-x"]


def wilson(hits: int, n: int) -> tuple[float, float]:
    """The Wilson 95 % interval in percent, written out (not analysis' own function)."""
    p = hits / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return 100 * (centre - half), 100 * (centre + half)


def pdf_text(path) -> str:
    require_poppler()
    done = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True, check=True)
    return " ".join(done.stdout.split())


@pytest.fixture
def judged(backend):
    app, db_factory = backend
    people = play_session(app, db_factory)
    return app, db_factory, people


def test_the_session_tables_carry_every_jury_and_the_live_figures_only_the_live_one(judged):
    app, db_factory, people = judged
    with db_factory() as db:
        before = session_tables(db, db.get(VttSession, people.session_id))
    judge_by_other_juries(db_factory, people.session_id)
    with db_factory() as db:
        tables = session_tables(db, db.get(VttSession, people.session_id))
    pd.testing.assert_frame_equal(tables.votes, before.votes)
    assert before.juries == ["live"] and not before.compares_juries
    assert tables.juries == ["live", "displaced", "ai:gpt-x", "ai:claude-y"]  # in vote order
    votes = tables.jury_votes
    ai = votes[votes["jury"].str.startswith("ai:")]
    assert dict(zip(ai["juror"], ai["model"])) == {"AI gpt-x": "gpt-x", "AI claude-y": "claude-y"}
    assert votes[~votes["jury"].str.startswith("ai:")]["model"].isna().all()
    assert len(votes) == 8 + 8
    with db_factory() as db:
        exported = export_tables(db, db.get(VttSession, people.session_id))
    jurors = exported["jurors.csv"]
    assert dict(zip(jurors["juror"], jurors["jury"]))["AI gpt-x"] == "ai"
    assert dict(zip(jurors["juror"], jurors["model"]))["AI gpt-x"] == "gpt-x"
    exported_votes = exported["votes.csv"]
    assert sorted(exported_votes[exported_votes["jury"] == "ai"]["model"]) == ["claude-y"] * 2 + ["gpt-x"] * 2


def test_a_removed_jurors_votes_stay_out(judged):
    app, db_factory, people = judged
    judge_by_other_juries(db_factory, people.session_id)
    with db_factory() as db, db.begin():
        juror = db.scalar(select(Juror).where(Juror.session_id == people.session_id, Juror.label == "D002"))
        juror.removed_at = juror.joined_at
    with db_factory() as db:
        tables = session_tables(db, db.get(VttSession, people.session_id))
    assert "D002" not in set(tables.jury_votes["juror"])
    assert len(tables.jury_votes[tables.jury_votes["jury"] == "displaced"]) == 2


def test_the_report_compares_the_juries(judged, tmp_path):
    app, db_factory, people = judged
    judge_by_other_juries(db_factory, people.session_id)
    with db_factory() as db:
        reports = write_session_reports(db, db.get(VttSession, people.session_id), tmp_path)
    for name in ("jury_detection.csv", "jury_tests.csv", "jury_shares.csv"):
        assert reports.written[name] == tmp_path / name
    detection = pd.read_csv(tmp_path / "jury_detection.csv")
    pooled = detection[detection["scope"] == "pooled"].set_index("jury")
    assert list(pooled.index) == JURIES
    expected = {"live": (4, 7), "displaced": (2, 4), "ai:claude-y": (0, 2), "ai:gpt-x": (2, 2)}
    for jury, (hits, n) in expected.items():
        assert (pooled.loc[jury, "ai_votes"], pooled.loc[jury, "votes"]) == (hits, n)
        assert pooled.loc[jury, "detection_pct"] == pytest.approx(100 * hits / n)
        assert (pooled.loc[jury, "ci_low"], pooled.loc[jury, "ci_high"]) == pytest.approx(wilson(hits, n))
        assert pooled.loc[jury, "chance_pct"] == pytest.approx(100 / 3)
    rounds = detection[detection["scope"] == "round"]
    live = rounds[rounds["jury"] == "live"].set_index("round")
    assert live.loc[1, "detection_pct"] == pytest.approx(75.0)
    assert live.loc[2, ["votes", "abstentions", "ai_votes"]].tolist() == [3, 1, 1]
    assert (live.loc[2, "ci_low"], live.loc[2, "ci_high"]) == pytest.approx(wilson(1, 3))

    # the pooled chi-squared test on (AI, other) x jury = [[4, 3], [2, 2], [0, 2], [2, 0]], N = 15, written out
    observed = [[4, 3], [2, 2], [0, 2], [2, 0]]
    statistic = sum(
        (observed[i][j] - sum(observed[i]) * (8, 7)[j] / 15) ** 2 / (sum(observed[i]) * (8, 7)[j] / 15)
        for i in range(4)
        for j in range(2)
    )
    assert statistic == pytest.approx(4.0944, abs=1e-4)
    tests = pd.read_csv(tmp_path / "jury_tests.csv")
    pooled_test = tests[tests["scope"] == "pooled"].iloc[0]
    assert pooled_test["test"] == "chi2" and pooled_test["dof"] == 3 and pooled_test["juries"] == 4
    assert pooled_test["statistic"] == pytest.approx(statistic)
    # chi-squared with 3 degrees of freedom: sf(x) = erfc(sqrt(x/2)) + sqrt(2x/pi) exp(-x/2)
    p_value = math.erfc(math.sqrt(statistic / 2)) + math.sqrt(2 * statistic / math.pi) * math.exp(-statistic / 2)
    assert pooled_test["p_value"] == pytest.approx(p_value)
    assert list(tests[tests["scope"] == "round"]["round"]) == [1, 2]

    shares = pd.read_csv(tmp_path / "jury_shares.csv")
    live_round_1 = shares[(shares["jury"] == "live") & (shares["round"] == 1)].set_index("player")
    assert live_round_1["share_pct"].to_dict() == pytest.approx({"Mina": 25.0, "Grace": 0.0, "Agent": 75.0})
    gpt = shares[shares["jury"] == "ai:gpt-x"]
    assert gpt[gpt["player"] == "Agent"]["share_pct"].tolist() == [100.0, 100.0]
    assert set(shares["chance_pct"].round(4)) == {round(100 / 3, 4)}

    text = pdf_text(reports.written["report.pdf"])
    assert "Juries compared" in text
    assert "AI gpt-x" in text and "displaced jury" in text
    assert "χ² = 4.09 (df 3)" in text
    assert "Juries compared" in pdf_text(reports.written["tallies.pdf"])
    with db_factory() as db:
        korean = write_session_reports(db, db.get(VttSession, people.session_id), tmp_path / "ko", language="ko")
    text = pdf_text(korean.written["report.pdf"])
    assert "배심원단 비교" in text and "사후 배심원단" in text and "카이제곱 검정, χ² = 4.09 (자유도 3)" in text


def test_the_live_figures_and_a_live_only_report_are_unchanged(judged, tmp_path):
    app, db_factory, people = judged
    with db_factory() as db:
        before = write_session_reports(db, db.get(VttSession, people.session_id), tmp_path / "before")
    assert before.juries is None
    assert not any((tmp_path / "before" / name).exists() for name in ("jury_detection.csv", "jury_tests.csv"))
    assert "Juries compared" not in pdf_text(before.written["report.pdf"])
    judge_by_other_juries(db_factory, people.session_id)
    with db_factory() as db:
        after = write_session_reports(db, db.get(VttSession, people.session_id), tmp_path / "after")
    assert after.juries is not None and list(after.juries.juries) == JURIES
    for name in ("rounds.csv", "tally.csv", "vote_summary.csv", "jurors.csv"):
        pd.testing.assert_frame_equal(
            pd.read_csv(tmp_path / "before" / name), pd.read_csv(tmp_path / "after" / name), check_exact=True
        )


def test_the_results_page_compares_the_juries(judged):
    app, db_factory, people = judged
    client = app.test_client()
    login(client)
    page = client.get(f"/host/sessions/{people.session_id}/results/").get_data(as_text=True)
    assert 'id="juries"' not in page
    judge_by_other_juries(db_factory, people.session_id)
    page = client.get(f"/host/sessions/{people.session_id}/results/").get_data(as_text=True)
    section = re.search(r'<section class="card" id="juries".*?</section>', page, re.S).group(0)
    rows = re.findall(r'<tr class="jury-pooled" data-jury="[^"]*">(.*?)</tr>', section, re.S)
    cells = [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<t[dh](?: [^>]*)?>(.*?)</t[dh]>", row, re.S)]
        for row in rows
    ]
    low, high = wilson(4, 7)
    assert cells[0][:5] == ["live jury", "7", "4", "57.1", f"{low:.1f}–{high:.1f}"]
    assert [row[0] for row in cells] == ["live jury", "displaced jury", "AI claude-y", "AI gpt-x"]
    assert cells[3][2:4] == ["2", "100.0"]
    assert "<svg" in section and "style=" not in section
    assert "chi-squared" in section
    agent = re.search(r'<tr class="jury-share ai" data-round="1" data-player="Agent">(.*?)</tr>', section, re.S)
    shares = [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", agent.group(1), re.S)]
    # live, displaced, ai:claude-y, ai:gpt-x, then chance
    assert shares[3:] == ["75.0 (3)", "50.0 (1)", "0.0 (0)", "100.0 (1)", "33.3"]
    # round 2: [[1, 2], [1, 1], [0, 1], [1, 0]], totals 3 and 4 of 7: chi² = 2.236 (df 3), p = 0.525
    live_round_2 = re.search(r'<tr class="jury-round starts" data-round="2" data-jury="live">(.*?)</tr>', section, re.S)
    low, high = wilson(1, 3)
    assert f"{low:.1f}–{high:.1f}" in live_round_2.group(1) and "chi-squared test, p = 0.525" in live_round_2.group(1)


@pytest.mark.browser
def test_the_results_pages_comparison_fits_a_phone_and_a_laptop(app, db_factory, served, browser, tmp_path):
    """Under the app's own CSP (no inline style: the figures are styled by attributes), without a horizontal scroll
    of the page; screenshots go to VTT_SCREENSHOTS."""
    people = play_session(app, db_factory)
    judge_by_other_juries(db_factory, people.session_id)
    shots = screenshot_dir(tmp_path)
    problems: list[str] = []
    host = browser.new_context(bypass_csp=False, viewport=LAPTOP)
    login_page = host.new_page()
    login_page.goto(f"{served.url}/host/login")
    login_page.fill("#password", HOST_PASSWORD)
    login_page.click("button[type=submit]")
    login_page.wait_for_url(f"{served.url}/host/")
    cookies = host.cookies()
    for viewport in (PHONE, LAPTOP):
        context = browser.new_context(bypass_csp=False, viewport=viewport)
        context.add_cookies(cookies)
        context.add_init_script(
            "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP ' + e.violatedDirective));"
        )
        page = context.new_page()
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.goto(f"{served.url}/host/sessions/{people.session_id}/results/")
        page.wait_for_selector("#juries figure.jury-chart svg")
        section = page.locator("#juries")
        section.screenshot(path=str(shots / f"juries-{viewport['width']}.png"))
        # the figures are drawn as in the PDF: the live jury's bars sky blue, the AI gpt-x jury's purple
        fills = page.evaluate(
            "() => [...document.querySelectorAll('#juries figure.jury-chart svg rect')]"
            ".map((r) => getComputedStyle(r).fill)"
        )
        assert {"rgb(86, 180, 233)", "rgb(204, 121, 167)"} <= set(fills)
        widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert widths[0] <= widths[1], (viewport, widths)
        svg_width = page.evaluate(
            "() => document.querySelector('#juries figure.jury-chart svg').getBoundingClientRect().width"
        )
        assert 0 < svg_width <= viewport["width"]
        context.close()
    host.close()
    assert problems == []


def test_the_study_report_pools_each_jury(judged, tmp_path):
    app, db_factory, people = judged
    judge_by_other_juries(db_factory, people.session_id)
    assert post(host_client(app), "/host/studies/", name="Pilot", session=[people.code]).status_code == 302
    with db_factory() as db:
        written = {path.name: path for path in write_study(db, "Pilot", tmp_path)}
    juries = pd.read_csv(written["juries.csv"])
    pooled = juries[juries["session"] == "all"].set_index("jury")
    assert list(pooled.index) == JURIES
    assert pooled[["ai_votes", "votes"]].to_dict("index") == {
        "live": {"ai_votes": 4, "votes": 7},
        "displaced": {"ai_votes": 2, "votes": 4},
        "ai:claude-y": {"ai_votes": 0, "votes": 2},
        "ai:gpt-x": {"ai_votes": 2, "votes": 2},
    }
    tests = pd.read_csv(written["juries_differ.csv"]).set_index("session")
    assert tests.loc["all", "statistic"] == pytest.approx(4.0944, abs=1e-4)  # one session: its own pooled test
    detection = pd.read_csv(written["detection.csv"]).set_index("session")
    assert (detection.loc["all", "ai_votes"], detection.loc["all", "votes"]) == (4, 7)  # the live jury's alone


def test_every_count_of_jurors_names_its_jury(judged, migrated_database_url, tmp_path):
    """Found: after a displaced jury and AI jurors judged a session, the report's cover counted them as the room's
    ("Jurors 8 · voters 4" for 4 live jurors), and `vtt session list` did too.  The cover, the results page, the
    study's sessions table and the session list count the live jury, and say beside it who judged afterwards."""
    app, db_factory, people = judged
    judge_by_other_juries(db_factory, people.session_id)
    with db_factory() as db, db.begin():  # a removed displaced juror counts nowhere
        db.add(Juror(session_id=people.session_id, label="D003", token="t-D003", jury=Jury.DISPLACED))
        db.flush()
        removed = db.scalar(select(Juror).where(Juror.session_id == people.session_id, Juror.label == "D003"))
        removed.removed_at = removed.joined_at
    with db_factory() as db:
        reports = write_session_reports(db, db.get(VttSession, people.session_id), tmp_path, language="ko")
    info = dict(pd.read_csv(tmp_path / "session_info.csv").itertuples(index=False))
    expected = "4 · voters 4 · judged afterwards: displaced jury 2 (voters 2), AI jurors 2 (claude-y, gpt-x)"
    assert info["Jurors"] == expected
    cover = pdf_text(reports.written["report.pdf"])
    assert "4명 · 투표자 4명 · 사후 판정: 사후 배심원단 2명 (투표자 2명), AI 배심원 2명 (claude-y, gpt-x)" in cover

    client = app.test_client()
    login(client)
    page = client.get(f"/host/sessions/{people.session_id}/results/").get_data(as_text=True)
    line = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", re.search(r'<p id="jurors">(.*?)</p>', page, re.S).group(1)))
    assert line.strip() == (
        "Live jury: 4 jurors, 4 voted. Judged afterwards: displaced jury 2 jurors (2 voted), "
        "AI jurors 2 (claude-y, gpt-x); the round cards count the live jury alone."
    )
    korean = client.get(f"/host/sessions/{people.session_id}/results/?lang=ko").get_data(as_text=True)
    assert "현장 배심원단: 배심원 4명, 투표 4명." in korean

    assert post(host_client(app), "/host/studies/", name="Counted", session=[people.code]).status_code == 302
    with db_factory() as db:
        written = {path.name: path for path in write_study(db, "Counted", tmp_path / "study")}
    study_page = host_client(app).get("/host/studies/").get_data(as_text=True)
    study_id = re.search(r'href="/host/studies/(\d+)"', study_page).group(1)
    member = host_client(app).get(f"/host/studies/{study_id}").get_data(as_text=True)
    cell = re.search(r'<td data-label="Jurors" class="num">(.*?)</td>', member, re.S).group(1)
    assert " ".join(re.sub(r"<[^>]+>", "", cell).split()) == "4 · afterwards: 2 displaced, 2 AI"
    sessions = pd.read_csv(written["sessions.csv"]).iloc[0]
    assert (sessions["jurors"], sessions["displaced_jurors"], sessions["ai_jurors"]) == (4, 2, 2)

    from click.testing import CliRunner

    from vtt.cli import main

    listed = CliRunner().invoke(main, ["session", "list"], env={"DATABASE_URL": migrated_database_url})
    header, row = listed.output.splitlines()[:2]
    assert header.split()[5:8] == ["jurors", "displaced", "ai_jurors"]
    assert row.split()[-6:-3] == ["4", "2", "2"]  # then the date and time
