"""Studies: three sessions played by `vtt simulate` (different compositions; one on another bank with two AI programs)
grouped with `vtt study` and reported, per session and pooled. The pooled figures are checked against each
session's own export and against the long all-sessions files (the statistics themselves: tests/analysis/
test_study.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.support.paths import DATA
from tests.support.served import ServedApp

pytestmark = pytest.mark.slow

TWO_AI_DESIGN = {
    "name": "Spec bank, two AI programs",
    "bank": "Spec",
    "rounds": 1,
    "questions_per_round": 5,
    "seed": 11,
    "answer_seconds": 60,
    "vote_seconds": 120,
    "reveal_policy": "per-round",
    "pass_rule": "chance",
    "players": [
        {"name": "Ara", "kind": "human", "age": 5, "stage": "pre-operational"},
        {"name": "Bo", "kind": "human", "age": 9, "stage": "concrete operational"},
        {"name": "Cy", "kind": "human", "age": 30, "stage": "adult"},
        {"name": "Model One", "kind": "ai"},
        {"name": "Model Two", "kind": "ai"},
    ],
    "jurors": [{"label": f"J{n}", "expert": n % 2 == 0, "age_band": "20s" if n < 4 else "40s"} for n in range(1, 8)],
}


def simulated(run, url: str, *args: str) -> str:
    result = run("simulate", "--url", url, "--drive", "--pace", "0.05", "--timeout", "120", "--json", *args)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["phase"] == "finished" and figures["errors"] == 0, figures
    return figures["session"]


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """Three finished sessions on one database: their join codes (module-wide: playing them takes ~40 s)."""
    import os

    from click.testing import CliRunner

    from tests.support.apps import HOST_PASSWORD
    from vtt.cli import main
    from vtt.db import upgrade

    folder = tmp_path_factory.mktemp("study")
    instance = folder / "instance"
    url = f"sqlite:///{instance / 'vtt.db'}"
    env = {"VTT_INSTANCE_PATH": str(instance), "VTT_HOST_PASSWORD": HOST_PASSWORD, "DATABASE_URL": url}
    saved = {key: os.environ.get(key) for key in (*env, "REDIS_URL", "SECRET_KEY", "VTT_ASYNC_MODE")}
    os.environ.update(env, VTT_ASYNC_MODE="threading")
    for key in ("REDIS_URL", "SECRET_KEY"):
        os.environ.pop(key, None)
    instance.mkdir(parents=True)
    upgrade(url)
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(main, list(args), catch_exceptions=False)

    try:
        assert run("questions", "import", str(DATA / "spec_examples.csv"), "--bank", "Spec").exit_code == 0
        design = folder / "two_ai.json"
        design.write_text(json.dumps(TWO_AI_DESIGN), encoding="utf-8")
        created = run("session", "create", str(design), "--json")
        assert created.exit_code == 0, created.output
        two_ai = json.loads(created.stdout)["code"]
        with ServedApp(env) as served:
            codes = [
                simulated(
                    run,
                    served.url,
                    "--new",
                    "--players",
                    "4",
                    "--jurors",
                    "12",
                    "--rounds",
                    "2",
                    "--questions",
                    "3",
                    "--seed",
                    "1",
                ),
                simulated(
                    run,
                    served.url,
                    "--new",
                    "--players",
                    "2",
                    "--jurors",
                    "8",
                    "--rounds",
                    "1",
                    "--questions",
                    "4",
                    "--seed",
                    "2",
                ),
                simulated(run, served.url, "--session", two_ai, "--seed", "3"),
            ]
        assert "Traceback" not in served.output, served.output
        yield run, env, codes, folder
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_a_study_groups_sessions_and_its_report_pools_them(played, monkeypatch):
    run, env, codes, folder = played
    for key, value in env.items():  # each test's own instance folder (conftest) gives way to the played one
        monkeypatch.setenv(key, value)
    made = run("study", "create", "Pilot", *codes[:2], "--description", "two schools")
    assert made.exit_code == 0 and made.output.strip() == f"study 'Pilot': 2 sessions ({codes[0]}, {codes[1]})"
    assert run("study", "add", "Pilot", codes[2].lower()).output.strip() == f"added {codes[2]} to 'Pilot'"
    listed = run("study", "list").output
    assert listed.strip() == f"Pilot\t3 sessions\t{' '.join(codes)}"
    for args, problem in (
        (("study", "create", "Pilot", codes[0]), "a study called 'Pilot' exists already"),
        (("study", "add", "Pilot", codes[0]), f"{codes[0]} is in Pilot already"),
        (("study", "add", "Nope", codes[0]), "no study called 'Nope' (the studies: Pilot)"),
        (("study", "create", "Other", "ZZZZZZ"), "no session with join code 'ZZZZZZ'"),
        (("study", "create", "Other", codes[0], codes[0]), f"{codes[0]} named twice"),
    ):
        refused = run(*args)
        assert refused.exit_code != 0 and problem in refused.output, (args, refused.output)

    out = folder / "report"
    reported = run("study", "report", "Pilot", "--out", str(out))
    assert reported.exit_code == 0, reported.output
    exports = {}
    for code in codes:
        assert run("export", code, "--out", str(folder / code)).exit_code == 0
        exports[code] = {name: pd.read_csv(folder / code / name) for name in ("answers.csv", "votes.csv")}

    # the long files: every session's export rows, the join code in front, nothing lost or added
    for name in ("answers", "votes"):
        long = pd.read_csv(out / f"{name}_all.csv")
        assert list(long.columns[:2]) == ["session", "design_hash"]
        assert long["session"].drop_duplicates().tolist() == codes
        assert len(long) == sum(len(exports[code][f"{name}.csv"]) for code in codes)
        for code in codes:
            mine = long[long["session"] == code].reset_index(drop=True)
            pd.testing.assert_frame_equal(mine, exports[code][f"{name}.csv"], check_dtype=False)
    assert len(pd.read_csv(out / "answers_all.csv")) > 60

    # the pooled detection is the sum of the sessions' own, and counts every vote of votes_all.csv that names someone
    detection = pd.read_csv(out / "detection.csv").set_index("session")
    pooled, per_session = detection.loc["all"], detection.drop(index="all")
    assert list(per_session.index) == codes
    assert pooled["votes"] == per_session["votes"].sum() and pooled["ai_votes"] == per_session["ai_votes"].sum()
    votes = pd.read_csv(out / "votes_all.csv")
    players = pd.read_csv(out / "players_all.csv")
    named = votes.dropna(subset=["player"]).merge(players[["session", "player", "kind"]], on=["session", "player"])
    assert len(named) == pooled["votes"] and (named["kind"] == "ai").sum() == pooled["ai_votes"]
    assert per_session.loc[codes[2], "chance_pct"] == pytest.approx(40.0)  # two AI players of five

    # the pooled profile of each stage is the one computed from the long files: every question put to a player
    # who took part (no answer: wrong), open answers not graded yet left out, each answer counted on its own
    # session's tags (the banks differ)
    assert profile_from_long_files(out) == profile_rows(out / "profiles_by_stage.csv")

    # AI programs from the answers' provenance; each session's verdict under its own rule
    programs = pd.read_csv(out / "accuracy_by_program.csv")
    assert set(programs["program"]) == {
        "vtt simulate · bot Bot AI",
        "vtt simulate · bot Model One",
        "vtt simulate · bot Model Two",
    }
    groups = pd.read_csv(out / "juror_groups.csv")  # paper jurors against those on a device: none on paper here
    on_devices = groups[(groups["facet"] == "group") & (groups["session"] == "all")]
    assert list(on_devices["group"]) == ["phone or laptop"] and on_devices["votes"].item() == pooled["votes"]
    # exposure per question, with the chance baseline each session's own frames give
    exposure = pd.read_csv(out / "exposure.csv")
    assert exposure_of_session(env, codes[0]) == {
        row.qid: (row.marks, row.ai_marks, rounded(row.chance_pct))
        for row in exposure[exposure["session"] == codes[0]].itertuples()
    }
    verdicts = pd.read_csv(out / "verdicts.csv").set_index("session")
    assert list(verdicts.loc[codes, "pass_rule"]) == ["human-tie", "human-tie", "chance"]

    # questions shared by the two demo-bank sessions are named; the Spec bank's are shared with none
    shared = pd.read_csv(out / "shared_questions.csv")
    assert len(shared) and shared["session_codes"].str.contains(codes[2]).sum() == 0
    assert set(shared["qid"]) <= set(exports_qids(out, codes[0])) & set(exports_qids(out, codes[1]))

    # the PDF's cover names every session with its design hash; the same report in Korean
    cover = pdftext(out / "study_report.pdf")
    hashes = pd.read_csv(out / "sessions.csv").set_index("session")["design_hash"]
    for code in codes:
        assert code in cover and hashes[code][:12] in cover.replace("\n", "")
    korean = folder / "report-ko"
    assert run("study", "report", "Pilot", "--out", str(korean), "--lang", "ko").exit_code == 0
    assert any("\uac00" <= ch <= "\ud7a3" for ch in pdftext(korean / "study_report.pdf"))


def exposure_of_session(env: dict, code: str) -> dict[str, tuple[int, int, float]]:
    """A session's exposure as its own report computes it: ``analysis.votes.exposure`` on its frames."""
    from analysis.votes import exposure
    from vtt.db import make_db_factory, make_engine
    from vtt.results.session_rows import session_by_code
    from vtt.results.tables import session_tables

    engine = make_engine(env["DATABASE_URL"])
    try:
        with make_db_factory(engine)() as db:
            frames = session_tables(db, session_by_code(db, code))
    finally:
        engine.dispose()
    table = exposure(frames.sheet, frames.players, frames.answers)
    return {row.qid: (row.marks, row.ai_marks, rounded(row.chance_pct)) for row in table.itertuples()}


def rounded(percent: float) -> float | None:
    """None for NaN (an open question nobody graded has no answers the frames count), else 6 decimals."""
    return None if pd.isna(percent) else round(percent, 6)


def exports_qids(out: Path, code: str) -> list[str]:
    questions = pd.read_csv(out / "questions_all.csv")
    return list(questions.loc[questions["session"] == code, "qid"])


def pdftext(path: Path) -> str:
    import subprocess

    return subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True).stdout


def profile_rows(path: Path) -> dict[tuple[str, str, str], tuple[int, int]]:
    table = pd.read_csv(path)
    pooled = table[table["session"] == "all"]
    return {(r.stage, r.module, r.element): (int(r.attempts), int(r.correct)) for r in pooled.itertuples()}


def profile_from_long_files(out: Path) -> dict[tuple[str, str, str], tuple[int, int]]:
    answers = pd.read_csv(out / "answers_all.csv")
    players = pd.read_csv(out / "players_all.csv")
    questions = pd.read_csv(out / "questions_all.csv")
    took_part = answers[["session", "player"]].drop_duplicates()
    put = took_part.merge(questions[["session", "qid", "targets", "contents", "thinking"]], on="session")
    given = answers[["session", "player", "qid", "correct"]]
    put = put.merge(given, on=["session", "player", "qid"], how="left", indicator=True)
    put = put[~((put["_merge"] == "both") & put["correct"].isna())]  # answered, not graded yet: left out
    put = put.assign(correct=put["correct"].map({True: 1, False: 0}).fillna(0).astype(int))  # no answer: wrong
    put = put.merge(players[["session", "player", "kind", "stage"]], on=["session", "player"])
    counts: dict[tuple[str, str, str], list[int]] = {}
    for row in put[put["kind"] == "human"].itertuples():
        for module, cell in (("target", row.targets), ("content", row.contents), ("thinking", row.thinking)):
            for element in str(cell).split(";") if isinstance(cell, str) and cell else []:
                tally = counts.setdefault((row.stage, module, element.strip().rstrip("*")), [0, 0])
                tally[0] += 1
                tally[1] += row.correct
    return {key: (attempts, right) for key, (attempts, right) in counts.items()}
