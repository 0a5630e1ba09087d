"""The PDF reports and their CSVs: files, text, fonts, pages and numbers checked against the input.

The PDFs are read back with poppler (pdftotext, pdfinfo, pdffonts), which ``make test`` installs.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import analysis
from analysis import charts
from analysis.cogme import element_frequencies, profiles
from analysis.composition import composition
from analysis.fonts import BOLD, FONT_DIR, REGULAR, missing_glyphs
from analysis.judge_rows import JUDGE_AGREEMENT_COLUMNS, judge_rows
from analysis.pdf.text import markup
from analysis.session_report import write_reports
from analysis.session_report.csv_tables import CSV_FILES, QA_COLUMNS
from analysis.session_report.jurors import MAX_JUROR_ROWS
from analysis.session_report.qa_sheet import CORRECT_MARK, NO_ANSWER, UNGRADED_MARK, WRONG_MARK
from analysis.tables import QUESTION_COLUMNS
from analysis.votes import exposure, vote_stats

pytestmark = pytest.mark.usefixtures("poppler")

KOREAN_PLAYER = "민준"
MARKUP_ANSWER = "<b>bold</b> & co"
PLAYERS = pd.DataFrame(
    {"name": [KOREAN_PLAYER, "Kim & Lee", "Adult", "VTT agent"], "kind": ["human", "human", "human", "ai"]}
)
VOTE_CSVS = {"rounds.csv", "tally.csv", "ai_rounds.csv", "groups.csv", "jurors.csv", "vote_summary.csv"}
SHEET_CSVS = {"exposure.csv"}
JURY_CSVS = {"jury_detection.csv", "jury_tests.csv", "jury_shares.csv"}  # only with more than the live jury
JUDGE_CSVS = {"judge_agreement.csv", "judge_confusions.csv"}
PDFS = {"profiles.pdf", "tallies.pdf", "report.pdf"}


def _question(qid, text, kind, answer, clip, round_, targets, key, contents, thinking):
    return {
        "qid": qid,
        "question": text,
        "type": kind,
        "choices": ["A", "B", "C", "D", "E"] if kind == "mcq" else [],
        "answer": answer,
        "answer_index": 0 if kind == "mcq" else None,
        "clip": clip,
        "category": None,
        "round": round_,
        "targets": targets,
        "key_target": key,
        "contents": contents,
        "thinking": thinking,
    }


@pytest.fixture(scope="module")
def session():
    questions = pd.DataFrame(
        [
            _question(
                "q1",
                "What is Haeyoung1 wearing?",
                "mcq",
                "A",
                "shot",
                1,
                ("Character", "Object"),
                "Object",
                ("Identity",),
                "Recall",
            ),
            _question(
                "q2",
                "Who is looking at Dokyung? " + "A very long question that has to wrap. " * 6,
                "mcq",
                "A",
                "shot",
                1,
                ("Character", "Behavior"),
                "Character",
                ("Identity",),
                "Recognition",
            ),
            _question(
                "q3",
                "민준이는 왜 울었나요?",
                "open",
                "엄마가 보고 싶어서",
                "scene",
                1,
                ("Character", "Emotion"),
                "Emotion",
                ("Feature",),
                "Reasoning",
            ),
            _question(
                "q4",
                "What does <b>Dokyung</b> do after standing up?",
                "open",
                "He leaves & cries",
                "scene",
                2,
                ("Character", "Event"),
                "Event",
                ("Sequence",),
                "Recognition",
            ),
            _question(
                "q5",
                "Why does Heeran envy Haeyoung1?",
                "open",
                "Jealousy",
                None,
                2,
                ("Character", "Conversation", "Emotion"),
                "Conversation",
                ("Context", "Motivation"),
                "Reasoning",
            ),
            _question("q6", "An untagged question", "mcq", "A", "shot", 2, (), None, (), None),
        ]
    ).astype({"answer_index": "Int64", "round": "Int64"})[list(QUESTION_COLUMNS)]
    right = {KOREAN_PLAYER: "1100", "Kim & Lee": "101011", "Adult": "111101", "VTT agent": "110100"}
    rows = []
    for player, kind in zip(PLAYERS["name"], PLAYERS["kind"]):
        for qid, mark in zip(questions["qid"], right[player]):  # 민준 answers q1-q4 only
            said = MARKUP_ANSWER if (player, qid) == ("VTT agent", "q3") else f"{player} says {qid}"
            rows.append({"player": player, "qid": qid, "answer": said, "correct": mark == "1", "kind": kind})
    answers = pd.DataFrame(rows)
    votes = pd.DataFrame(
        [
            {"round": round_, "juror": juror, "vote": vote, "slot": 1, "confidence": confidence, "group": group}
            for round_, round_votes in (
                (1, ["VTT agent", "VTT agent", KOREAN_PLAYER, None]),
                (2, ["Adult", "VTT agent", "Adult", "Adult"]),
            )
            for juror, vote, confidence, group in zip(
                ["J1", "J2", "J3", "J4"],
                round_votes,
                [5.0, 4.0, 2.0, np.nan],
                ["expert", "expert", "non-expert", "non-expert"],
            )
        ]
    )
    return questions, answers, votes


@pytest.fixture(scope="module")
def results(session):
    questions, answers, votes = session
    return profiles(questions, answers, "frontiers2022"), vote_stats(votes, PLAYERS, "chance")


@pytest.fixture(scope="module")
def written(session, results, tmp_path_factory):
    questions, answers, _ = session
    profile, stats = results
    return write_reports(
        tmp_path_factory.mktemp("reports"),
        questions=questions,
        answers=answers,
        profiles=profile,
        stats=stats,
        title="Case study <2021> & co",
        session_info={"drama": "또 오해영"},
    )


def pdf_text(path: Path) -> str:
    """The PDF's text with runs of whitespace folded to one space."""
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True, check=True)
    return " ".join(text.stdout.split())


def page_count(path: Path) -> int:
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", info, re.M).group(1))


def page_size(path: Path, page: int) -> tuple[float, float]:
    info = subprocess.run(
        ["pdfinfo", "-f", str(page), "-l", str(page), str(path)], capture_output=True, text=True, check=True
    ).stdout
    width, height = re.search(rf"^Page\s+{page} size:\s+([\d.]+) x ([\d.]+)", info, re.M).groups()
    return float(width), float(height)


def read_csv(written, name) -> pd.DataFrame:
    return pd.read_csv(written[name], encoding="utf-8", keep_default_na=False, na_values=[""])


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


# ------------------------------------------------------------------------------------------- text


def test_profiles_pdf_names_players_and_method(written, results):
    text = pdf_text(written["profiles.pdf"])
    assert "Case study <2021> & co" in text
    assert "또 오해영" in text
    assert KOREAN_PLAYER in text and "Kim & Lee" in text and "VTT agent (AI)" in text
    assert "Scoring method: frontiers2022" in text
    assert (
        "CONTENT and THINKING tags weighted by W_R (our reading of the paper, which defines TARGET weights only)"
    ) in text
    assert "Player: 민준" in text
    accuracy = results[0].players.set_index("player").loc["Adult", "accuracy_pct"]
    assert f"overall accuracy {accuracy:.1f} %" in text
    for element in ("Character", "Identity", "Reasoning", "Weighted score %"):
        assert element in text


def test_uniform_profiles_do_not_carry_the_frontiers_note(session, tmp_path):
    questions, answers, _ = session
    written = write_reports(
        tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers, "uniform")
    )
    text = pdf_text(written["profiles.pdf"])
    assert "Scoring method: uniform" in text
    assert "our reading of the paper" not in text


def test_tallies_pdf_shows_detection_rule_and_groups(written, results):
    _, stats = results
    text = pdf_text(written["tallies.pdf"])
    round1 = stats.rounds.iloc[0]
    assert round1["detection_pct"] == pytest.approx(200 / 3)
    assert "66.7 %" in text  # the bar label of round 1
    assert f"{round1['ci_low']:.1f}–{round1['ci_high']:.1f}" in text
    assert "Pass rule: chance" in text and "α = 0.05" in text
    assert "Round 1" in text and "Round 2" in text
    assert "expert" in text and "non-expert" in text
    assert "Brier score" in text


def test_report_pdf_holds_question_set_and_qa_sheet(written):
    text = pdf_text(written["report.pdf"])
    assert "Question set" in text and "Q&A sheet" in text
    assert "1 untagged" in text
    assert MARKUP_ANSWER in text  # user markup is shown, not interpreted
    assert "What does <b>Dokyung</b> do after standing up?" in text
    assert "민준이는 왜 울었나요?" in text and "엄마가 보고 싶어서" in text
    assert CORRECT_MARK in text and WRONG_MARK in text and NO_ANSWER in text


def test_report_glyphs_exist_in_the_embedded_font():
    """Every non-ASCII character the report code prints must be in NanumGothic (else it prints blank)."""
    code = Path(analysis.__file__).parent
    for path in [*(code / "session_report").glob("*.py"), *(code / "pdf").glob("*.py"), code / "charts.py"]:
        source = path.read_text(encoding="utf-8")
        used = {ch for ch in source if ord(ch) > 127}
        assert not missing_glyphs("".join(used), REGULAR), path.name
        assert not missing_glyphs("".join(used), BOLD), path.name


def test_markup_escapes_user_text():
    assert markup("<b>a & b</b>\nnext") == "&lt;b&gt;a &amp; b&lt;/b&gt;<br/>next"
    assert markup(None) == "" and markup(float("nan")) == ""


# ------------------------------------------------------------------------------------------- CSVs


def test_profile_csvs_match_the_profiles(written, results):
    profile, _ = results
    players = read_csv(written, "profile_players.csv")
    assert list(players.columns) == list(profile.players.columns) + ["method"]
    assert (players["method"] == "frontiers2022").all()
    assert list(players["player"]) == [KOREAN_PLAYER, "Kim & Lee", "Adult", "VTT agent"]
    assert np.allclose(players["accuracy_pct"], profile.players["accuracy_pct"])
    elements = read_csv(written, "profile_elements.csv")
    assert list(elements.columns) == list(profile.elements.columns) + ["method"]
    assert np.allclose(elements["score_pct"], profile.elements["score_pct"])
    assert list(elements["element"]) == list(profile.elements["element"])


def test_vote_csvs_match_the_statistics(written, results):
    _, stats = results
    rounds = read_csv(written, "rounds.csv")
    assert list(rounds.columns) == list(stats.rounds.columns)
    assert list(rounds["votes"]) == [3, 4] and list(rounds["abstentions"]) == [1, 0]
    assert np.allclose(rounds["detection_pct"], [200 / 3, 25.0])
    tally = read_csv(written, "tally.csv")
    assert list(tally.columns) == ["round", "player", "kind", "votes", "share_pct"]
    assert tally.set_index(["round", "player"]).loc[(2, "Adult"), "votes"] == 3
    assert len(tally) == 2 * len(PLAYERS)
    groups = read_csv(written, "groups.csv").set_index("group")
    assert groups.loc["expert", "votes"] == 4 and groups.loc["expert", "ai_votes"] == 3
    jurors = read_csv(written, "jurors.csv").set_index("juror")
    assert list(jurors.columns) == list(stats.jurors.columns)[1:]
    assert jurors.loc["J1", "hits"] == 1 and jurors.loc["J2", "hits"] == 2
    summary = read_csv(written, "vote_summary.csv").iloc[0]
    assert summary["pass_rule"] == "chance" and summary["rounds"] == 2
    assert summary["overall_detection_pct"] == pytest.approx(300 / 7)  # 2 of 3, then 1 of 4
    assert summary["brier"] == pytest.approx(stats.confidence["brier"])


def test_question_set_csvs_match_the_questions(written, session):
    questions, _, _ = session
    counts = read_csv(written, "composition.csv")
    expected = composition(questions).elements
    assert list(counts.columns) == ["module", "element", "questions"]
    assert list(counts["questions"]) == list(expected["questions"])
    assert counts.set_index("element").loc["Character", "questions"] == 5
    facets = read_csv(written, "question_set.csv").set_index(["facet", "value"])["questions"]
    assert facets[("all", "questions")] == 6 and facets[("type", "open")] == 3
    assert facets[("clip", "shot")] == 3 and facets[("clip", "none")] == 1 and facets[("tags", "untagged")] == 1


def test_qa_sheet_csv_lists_every_answer(written, session):
    questions, answers, _ = session
    sheet = read_csv(written, "qa_sheet.csv")
    assert list(sheet.columns) == QA_COLUMNS
    assert len(sheet) == len(questions) * len(PLAYERS)
    by_key = sheet.set_index(["qid", "player"])
    for row in answers.itertuples(index=False):
        assert by_key.loc[(row.qid, row.player), "answer"] == row.answer
        assert bool(by_key.loc[(row.qid, row.player), "correct"]) == row.correct
    missing = by_key.loc[("q5", KOREAN_PLAYER)]
    assert not missing["answered"] and not missing["correct"] and pd.isna(missing["answer"])
    assert by_key.loc[("q1", "Adult"), "targets"] == "Character;Object*"
    assert by_key.loc[("q3", "Adult"), "question"] == "민준이는 왜 울었나요?"
    assert pd.isna(by_key.loc[("q6", "Adult"), "thinking"])


# ----------------------------------------------------------------------------------- odd sessions


def test_reports_survive_abstaining_rounds_and_two_ai_players(session, tmp_path):
    questions, answers, votes = session
    answers = answers.assign(kind=np.where(answers["player"] == "Adult", "ai", answers["kind"]))
    players = PLAYERS.assign(kind=np.where(PLAYERS["name"] == "Adult", "ai", PLAYERS["kind"]))
    silent = pd.DataFrame(
        {"round": 3, "juror": ["J1", "J2"], "vote": [None, None], "slot": 1, "confidence": np.nan, "group": None}
    )
    stats = vote_stats(pd.concat([votes, silent], ignore_index=True), players, "threshold", threshold_pct=70)
    written = write_reports(
        tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers, "cogsci2024"), stats=stats
    )
    text = pdf_text(written["tallies.pdf"])
    assert "no votes" in text and "Adult (AI)" in text and "threshold 70 %" in text


def test_large_sessions_split_the_qa_sheet_and_cut_the_juror_list(session, tmp_path):
    questions, answers, votes = session
    clones = [answers[answers["player"] == "Adult"].assign(player=f"Clone {i}") for i in range(1, 5)]
    answers = pd.concat([answers, *clones], ignore_index=True)  # 8 players
    players = pd.concat([PLAYERS, pd.DataFrame({"name": [f"Clone {i}" for i in range(1, 5)], "kind": "human"})])
    crowd = pd.DataFrame(
        {
            "round": 1,
            "juror": [f"S{i:03d}" for i in range(MAX_JUROR_ROWS)],
            "vote": "VTT agent",
            "slot": 1,
            "confidence": np.nan,
            "group": "stream",
        }
    )
    stats = vote_stats(pd.concat([votes, crowd], ignore_index=True), players, "human-tie")
    written = write_reports(
        tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers, "uniform"), stats=stats
    )
    text = pdf_text(written["report.pdf"])
    assert "Players 1–4 of 8" in text and "Players 5–8 of 8" in text
    assert f"First {MAX_JUROR_ROWS} of {MAX_JUROR_ROWS + 4} jurors; all are in jurors.csv." in text
    assert len(read_csv(written, "jurors.csv")) == MAX_JUROR_ROWS + 4
    assert "top human" in text  # the human-tie statistic


# ----------------------------------------------------------------------------------------- charts


def test_player_styles_set_ai_players_apart():
    styles = charts.player_styles([("a", "human"), ("b", "human"), ("bot", "ai"), ("a", "human")])
    assert list(styles) == ["a", "b", "bot"]
    assert styles["bot"].is_ai and styles["bot"].colour == charts.VERMILLION and styles["bot"].dash
    assert styles["a"].colour != styles["b"].colour and not styles["a"].dash
    assert styles["bot"].width > styles["a"].width


@pytest.mark.parametrize("axes", [["Recall"], ["Recall", "Reasoning"], ["Recall", "Recognition", "Reasoning"]])
def test_radar_is_round_and_bounded_for_any_number_of_axes(axes):
    style = charts.player_styles([("p", "human")])["p"]
    drawing = charts.radar_chart(
        "THINKING",
        axes,
        [charts.RadarSeries("p", [50.0] * len(axes), style)],
        width=240,
        height=400,
        legend=False,
        axis_notes=["n = 1"] * len(axes),
    )
    assert drawing.height < 400  # shrinks to the plot instead of leaving an empty band
    x0, y0, x1, y1 = drawing.getBounds()
    assert x0 >= 0 and y0 >= 0 and x1 <= drawing.width + 1 and y1 <= drawing.height + 1


# ---------------------------------------------------------------------------------- review fixes

EMOJI_PLAYER = "Agent_😀"


def test_characters_the_font_cannot_show_are_listed_and_returned(session, tmp_path):
    questions, answers, votes = session
    rename = {"VTT agent": EMOJI_PLAYER}
    questions = questions.assign(
        question=questions["question"].replace({"An untagged question": "An untagged question about ά"})
    )
    answers = answers.replace({"player": rename})
    players = PLAYERS.replace({"name": rename})
    stats = vote_stats(votes.replace({"vote": rename}), players, "chance")
    written = write_reports(
        tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers), stats=stats
    )
    assert written.missing_characters == ("ά", "😀")
    assert written["report.pdf"] == tmp_path / "report.pdf"  # still a {name: path} dict
    note = "characters the embedded font cannot show:"
    for name in ("profiles.pdf", "tallies.pdf"):  # the Greek question is in report.pdf only
        assert f"{note} U+1F600 GRINNING FACE." in pdf_text(written[name])
    assert f"{note} U+03AC GREEK SMALL LETTER ALPHA WITH TONOS, U+1F600 GRINNING FACE." in pdf_text(
        written["report.pdf"]
    )


def test_reports_without_such_characters_carry_no_note(written):
    assert written.missing_characters == ()
    assert "cannot show" not in pdf_text(written["report.pdf"])


def test_profiles_pdf_says_how_many_questions_are_untagged(written, session, tmp_path):
    text = pdf_text(written["profiles.pdf"])
    assert "1 of 6 questions carries no CogME tag: counted in overall accuracy only." in text
    questions, answers, _ = session
    tagged = questions[questions["qid"] != "q6"]
    clean = write_reports(tmp_path, questions=tagged, answers=answers, profiles=profiles(tagged, answers))
    assert "no CogME tag" not in pdf_text(clean["profiles.pdf"])


def test_tallies_pdf_says_the_pooled_test_treats_votes_as_independent(written):
    text = pdf_text(written["tallies.pdf"])
    assert (
        "both pool the rounds and treat the votes as independent, which one juror's votes are not, so read "
        "them as approximate"
    ) in text


def test_rounds_without_votes_are_not_counted_as_passed_or_without_majority(session, tmp_path):
    questions, answers, votes = session
    silent = pd.DataFrame(
        {"round": 3, "juror": ["J1", "J2"], "vote": [None, None], "slot": 1, "confidence": np.nan, "group": None}
    )
    stats = vote_stats(pd.concat([votes, silent], ignore_index=True), PLAYERS, "chance")
    written = write_reports(
        tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers), stats=stats
    )
    text = pdf_text(written["tallies.pdf"])
    # round 1: 2 of 3 on the AI (p = 0.26, passed); round 2: 1 of 4 (passed); round 3: nobody voted
    assert "The AI passed 2 of 2 rounds (1 round without votes)." in text
    assert "voting jurors in 2 of 2 rounds." in text  # the AI 2 of 3, Adult 3 of 4
    summary = read_csv(written, "vote_summary.csv").iloc[0]
    assert (summary["rounds"], summary["rounds_with_votes"], summary["rounds_without_votes"]) == (3, 2, 1)


def test_vote_summary_csv_has_hit_rate_and_confidence_votes(written):
    summary = read_csv(written, "vote_summary.csv").iloc[0]
    # hit rates: J1 1 of 2, J2 2 of 2, J3 0 of 2, J4 0 of 1 -> mean (50 + 100 + 0 + 0) / 4
    assert summary["mean_hit_rate_pct"] == pytest.approx(37.5)
    # 7 cast votes, J4's round-2 vote has no confidence
    assert summary["confidence_votes"] == 6
    text = pdf_text(written["tallies.pdf"])
    assert "Mean hit rate 37.5 %" in text
    assert re.search(r"Brier score Votes with a confidence \d\.\d{2} \d\.\d{2} \d\.\d{3} 6 ", text)


def test_element_frequencies_csv(written, session):
    questions, answers, _ = session
    table = read_csv(written, "element_frequencies.csv")
    expected = element_frequencies(questions, answers)
    assert list(table.columns) == ["player", "module", "element", "questions", "correct", "missed"]
    assert table.equals(expected.astype({"questions": int, "correct": int, "missed": int}))
    adult = table[(table["player"] == "Adult") & (table["element"] == "Character")].iloc[0]
    # Adult: right on q1-q4, wrong on q5 (Character is on q1-q5)
    assert (adult["questions"], adult["correct"], adult["missed"]) == (5, 4, 1)


def test_exposure_table_and_csv_with_a_judgment_sheet(session, results, tmp_path):
    questions, answers, _ = session
    sheet = pd.DataFrame(
        {
            "juror": ["J1", "J2", "J1", "J2", "J3"],
            "qid": ["q1", "q1", "q2", "q2", "q2"],
            "player": ["VTT agent", "Adult", "VTT agent", "VTT agent", KOREAN_PLAYER],
            "looks_like_ai": [True, True, True, True, False],
        }
    )
    table = exposure(sheet, PLAYERS, answers)
    profile, stats = results
    written = write_reports(
        tmp_path / "with", questions=questions, answers=answers, profiles=profile, stats=stats, exposure=table
    )
    csv = read_csv(written, "exposure.csv")
    assert list(csv.columns) == ["qid", "marks", "ai_marks", "exposure_pct", "chance_pct"]
    assert csv["marks"].tolist() == [2, 2] and csv["ai_marks"].tolist() == [1, 2]
    assert csv["exposure_pct"].tolist() == [50.0, 100.0]
    assert csv["chance_pct"].tolist() == [25.0, 25.0]  # 1 AI answer of 4 on each question
    for name in ("tallies.pdf", "report.pdf"):
        text = pdf_text(written[name])
        assert "Judgment sheet: exposure" in text
        assert "q1 2 1 50.0 25.0" in text and "q2 2 2 100.0 25.0" in text
    # without votes the exposure still gets tallies.pdf; without a sheet there is no exposure at all
    alone = write_reports(tmp_path / "alone", questions=questions, answers=answers, profiles=profile, exposure=table)
    assert "Judgment sheet: exposure" in pdf_text(alone["tallies.pdf"]) and "rounds.csv" not in alone


def judge_tables(grader: str = "Ana") -> tuple[pd.DataFrame, pd.DataFrame]:
    """A judge against one grader and the final marks on four answers, as vtt.judge.agreement passes them.

    The grader gives every answer accuracy 3 (so rho is undefined: one grade throughout) and scores no depth or
    evidence (folded into one "undefined" line); the final marks score nothing but the verdict."""
    from analysis.agreement import FINAL_MARKS, judge_agreement, judge_confusions

    judge = "judge: m-1"
    rows = [
        {"item": item, "rater": judge, "correct": verdict, "accuracy": score, "depth": 2, "evidence": 2}
        for item, verdict, score in [(1, True, 4), (2, True, 3), (3, False, 1), (4, False, 2)]
    ]
    rows += [
        {"item": item, "rater": grader, "correct": verdict, "accuracy": 3, "depth": None, "evidence": None}
        for item, verdict in [(1, True), (2, False), (3, False), (4, False)]
    ]
    rows += [
        {"item": item, "rater": FINAL_MARKS, "correct": verdict, "accuracy": None, "depth": None, "evidence": None}
        for item, verdict in [(1, True), (2, True), (3, False)]
    ]
    marks = pd.DataFrame(rows).astype({d: "Float64" for d in ("accuracy", "depth", "evidence")})
    table = judge_agreement(marks, judge, ["accuracy", "depth", "evidence"]).assign(model="m-1")
    confusions = pd.DataFrame(
        [
            {"model": "m-1", "rater": rater, "rater_verdict": theirs, "judge_verdict": judges, "answers": int(n)}
            for rater, matrix in judge_confusions(marks, judge).items()
            for theirs in (True, False)
            for judges in (True, False)
            for n in [matrix.loc[theirs, judges]]
        ]
    )
    return table[list(JUDGE_AGREEMENT_COLUMNS)], confusions


def test_the_judge_beside_the_graders_section_and_csvs(session, results, tmp_path):
    from analysis.agreement import FINAL_MARKS

    questions, answers, _ = session
    agreement, confusions = judge_tables()
    lines = judge_rows(agreement)["m-1"]
    assert [(line.rater, line.measures, line.items) for line in lines] == [
        ("Ana", ("correct",), 4),
        ("Ana", ("accuracy",), 4),
        ("Ana", ("depth", "evidence"), 0),  # neither has an answer both marked: one line
        (FINAL_MARKS, ("correct",), 3),
        (FINAL_MARKS, ("accuracy", "depth", "evidence"), 0),
    ]
    # Ana against the judge on correct: p_o = 3/4, p_e = (1/4)(2/4) + (3/4)(2/4) = 1/2, kappa = 0.5
    assert lines[0].kappa == pytest.approx(0.5) and lines[0].spearman is None
    assert lines[1].spearman_reason == "constant" and lines[1].kappa_reason is None
    written = write_reports(
        tmp_path,
        questions=questions,
        answers=answers,
        profiles=results[0],
        judge_agreement=agreement,
        judge_confusions=confusions,
    )
    assert read_csv(written, "judge_agreement.csv").shape == (8, 8)  # 2 raters x 4 measures
    assert read_csv(written, "judge_confusions.csv")["answers"].tolist() == [1, 0, 1, 2, 2, 0, 0, 1]
    layout = subprocess.run(
        ["pdftotext", "-layout", "-enc", "UTF-8", str(written["report.pdf"]), "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    text = " ".join(layout.stdout.split())  # row by row, as the tables read
    assert "The judge beside the graders" in text and "Judge: m-1" in text
    assert "Ana Correct/incorrect 4 0.50" in text and "undefined: one grade throughout" in text
    assert "Depth, Evidence 0 undefined: no answer both marked" in text
    assert "Final marks" in text and "Cohen, 1968" in text
    assert text.index("The judge beside the graders") < text.index("Question set")
    assert "The judge beside" not in pdf_text(written["profiles.pdf"])
    with_emoji = write_reports(
        tmp_path / "emoji",
        questions=questions,
        answers=answers,
        profiles=results[0],
        judge_agreement=judge_tables(EMOJI_PLAYER)[0],
    )
    assert with_emoji.missing_characters == ("😀",)  # a grader's name goes through the missing-glyph check
    assert "judge_confusions.csv" in with_emoji  # no confusions passed: an empty table


def test_qa_sheet_shows_the_chosen_option_and_the_no_answer_mark(tmp_path):
    choices = ["Kyungsu", "Deogi", "Haeyoung1", "Heeran", "Jinsang"]
    questions = pd.DataFrame(
        [
            {
                **_question(
                    "q1",
                    "Who is looking at Dokyung?",
                    "mcq",
                    "Kyungsu",
                    "shot",
                    1,
                    ("Character",),
                    None,
                    ("Identity",),
                    "Recognition",
                ),
                "choices": choices,
            },
            _question("q2", "Why?", "open", "Because", "scene", 1, ("Character",), None, ("Motivation",), "Reasoning"),
        ]
    ).astype({"answer_index": "Int64", "round": "Int64"})[list(QUESTION_COLUMNS)]
    answers = pd.DataFrame(
        {
            "player": ["P1", "P1", "P2", "P2", "P3", "P3"],
            "qid": ["q1", "q2", "q1", "q2", "q1", "q2"],
            "answer": ["1", "", "a", "Because", "deogi", "  "],
            "correct": [False, False, True, True, False, False],
            "kind": ["human", "human", "human", "human", "ai", "ai"],
        }
    )
    written = write_reports(tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers))
    sheet = read_csv(written, "qa_sheet.csv").set_index(["qid", "player"])
    assert sheet.loc[("q1", "P1"), "option"] == "B · Deogi"
    assert sheet.loc[("q1", "P2"), "option"] == "A · Kyungsu"
    assert sheet.loc[("q1", "P3"), "option"] == "B · Deogi"
    assert pd.isna(sheet.loc[("q2", "P2"), "option"])  # open question
    assert sheet.loc[("q1", "P1"), "answer"] == "1" and sheet.loc[("q1", "P1"), "answered"]  # raw answer kept
    assert not sheet.loc[("q2", "P1"), "answered"] and not sheet.loc[("q2", "P3"), "answered"]  # empty = no answer
    text = pdf_text(written["report.pdf"])
    qa = text[text.index("Q&A sheet") :]
    assert f"{WRONG_MARK} B · Deogi" in qa and f"{CORRECT_MARK} A · Kyungsu" in qa
    # q2: P1 and P3 said nothing -> the no-answer mark alone, P2 right
    assert re.search(rf"Th: Reasoning {NO_ANSWER} {CORRECT_MARK} Because {NO_ANSWER} ", qa)
    assert f"{WRONG_MARK} {NO_ANSWER}" not in qa


def test_qa_sheet_marks_open_answers_not_graded_yet_apart_from_no_answer(tmp_path):
    questions = pd.DataFrame(
        [
            _question("q1", "Why?", "open", "Because", "scene", 1, ("Character",), None, ("Motivation",), "Reasoning"),
            _question("q2", "How?", "open", "Slowly", "scene", 1, ("Character",), None, ("Motivation",), "Reasoning"),
        ]
    ).astype({"answer_index": "Int64", "round": "Int64"})[list(QUESTION_COLUMNS)]
    answers = pd.DataFrame(
        {
            "player": ["P1", "P2"],
            "qid": ["q1", "q1"],
            "answer": ["Because", "no idea"],
            "correct": [True, False],
            "kind": ["human", "ai"],
        }
    )
    ungraded = pd.DataFrame({"player": ["P1"], "qid": ["q2"], "round": [1], "answer": ["she was late"]})
    written = write_reports(
        tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers), ungraded=ungraded
    )
    sheet = read_csv(written, "qa_sheet.csv").set_index(["qid", "player"])
    assert sheet.loc[("q2", "P1"), "ungraded"] and sheet.loc[("q2", "P1"), "answer"] == "she was late"
    assert not sheet.loc[("q2", "P2"), "ungraded"] and not sheet.loc[("q2", "P2"), "answered"]  # no answer at all
    assert not sheet.loc[("q1", "P1"), "ungraded"] and sheet.loc[("q1", "P1"), "correct"]
    qa = pdf_text(written["report.pdf"])
    qa = qa[qa.index("Q&A sheet") :]
    assert f"{UNGRADED_MARK} not graded yet" in qa
    assert re.search(rf"{re.escape(UNGRADED_MARK)} she was late {NO_ANSWER}", qa)


def test_several_slots_are_explained_in_the_tallies(session, tmp_path):
    questions, answers, _ = session
    players = PLAYERS.assign(kind=np.where(PLAYERS["name"] == "Adult", "ai", PLAYERS["kind"]))
    answers = answers.assign(kind=np.where(answers["player"] == "Adult", "ai", answers["kind"]))
    votes = pd.DataFrame(
        {
            "round": 1,
            "juror": ["J1", "J1", "J2", "J2"],
            "vote": ["Adult", "VTT agent", "Adult", "민준"],
            "slot": [1, 2, 1, 2],
        }
    )
    written = write_reports(
        tmp_path,
        questions=questions,
        answers=answers,
        profiles=profiles(questions, answers),
        stats=vote_stats(votes, players),
    )
    text = pdf_text(written["tallies.pdf"])
    assert "a player's share and the majority are counted out of the jurors who voted" in text
    assert "2 (100.0 %)" in text  # Adult: named by both jurors
    assert read_csv(written, "rounds.csv")["voters"].tolist() == [2]


# ------------------------------------------------------------------------------ facets, several AIs


def pdf_rows(path: Path) -> list[str]:
    """The PDF's lines as laid out (table rows stay rows), runs of whitespace folded to one space."""
    text = subprocess.run(
        ["pdftotext", "-layout", "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def test_groups_and_jurors_by_every_facet(session, tmp_path):
    """J1 1 of 2 votes on the AI, J2 2 of 2, J3 0 of 2, J4 0 of 1 (abstained in round 1)."""
    questions, answers, votes = session
    votes = votes.assign(
        expert=["yes", "1", "no", ""] + ["true", "yes", "0", "No"],  # J4 blank, then No
        age_band=["20s", "30s", "20s", None] * 2,
    )
    stats = vote_stats(votes, PLAYERS, "chance")
    written = write_reports(
        tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers), stats=stats
    )
    groups = read_csv(written, "groups.csv")
    assert list(groups.columns) == [
        "facet",
        "group",
        "jurors",
        "votes",
        "ai_votes",
        "detection_pct",
        "ci_low",
        "ci_high",
    ]
    assert groups[["facet", "group", "jurors", "votes", "ai_votes", "detection_pct"]].values.tolist() == [
        ["group", "expert", 2, 4, 3, 75.0],
        ["group", "non-expert", 2, 3, 0, 0.0],
        ["expert", "expert", 2, 4, 3, 75.0],
        ["expert", "non-expert", 2, 3, 0, 0.0],
        ["age_band", "20s", 2, 4, 1, 25.0],
        ["age_band", "30s", 1, 2, 2, 100.0],
    ]
    jurors = read_csv(written, "jurors.csv")
    assert list(jurors.columns) == ["juror", "group", "expert", "age_band", "rounds", "votes", "hits", "hit_rate_pct"]
    assert jurors["expert"].tolist() == ["expert", "expert", "non-expert", "non-expert"]
    rows = pdf_rows(written["tallies.pdf"])
    for row in (
        "Group expert 2 4 3 75.0 ",
        "non-expert 2 3 0 0.0 ",
        "Expertise expert 2 4 3 75.0 ",
        "Age band 20s 2 4 1 25.0 ",
        "30s 1 2 2 100.0 ",
    ):
        assert any(line.startswith(row) for line in rows), row
    assert "Juror Group Expertise Age band Rounds Votes Hits Hit rate %" in rows
    assert "J4 non-expert non-expert 1 1 0 0.0" in rows  # no age band


def test_verdict_per_ai_player_with_two_ai_players(session, tmp_path):
    """Adult and VTT agent are both AI; threshold 70 %.

    Round 1: VTT agent 2 of 3 cast votes (66.7 %, passed), Adult 0; round 2: Adult 3 of 4 (75 %,
    detected), VTT agent 1 (25 %).  Pooled, round 1 (66.7 %) passes and round 2 (100 %) does not.
    """
    questions, answers, votes = session
    answers = answers.assign(kind=np.where(answers["player"] == "Adult", "ai", answers["kind"]))
    players = PLAYERS.assign(kind=np.where(PLAYERS["name"] == "Adult", "ai", PLAYERS["kind"]))
    stats = vote_stats(votes, players, "threshold", threshold_pct=70)
    written = write_reports(
        tmp_path, questions=questions, answers=answers, profiles=profiles(questions, answers), stats=stats
    )
    ai_rounds = read_csv(written, "ai_rounds.csv")
    assert list(ai_rounds.columns) == ["round", "player", "votes", "share_pct", "detection_pct", "passed"]
    assert ai_rounds[["round", "player", "votes", "passed"]].values.tolist() == [
        [1, "Adult", 0, True],
        [1, "VTT agent", 2, True],
        [2, "Adult", 3, False],
        [2, "VTT agent", 1, True],
    ]
    assert ai_rounds["detection_pct"].tolist() == pytest.approx([0.0, 200 / 3, 75.0, 25.0])
    assert read_csv(written, "rounds.csv")["ai_passed"].tolist() == [True, False]
    rows = pdf_rows(written["tallies.pdf"])
    table = rows[rows.index("Verdict per AI player") :]
    assert table[1:6] == [
        "Round AI player Votes Share % Detection % Result",
        "1 Adult (AI) 0 0.0 0.0 passed",
        "VTT agent (AI) 2 66.7 66.7 passed",
        "2 Adult (AI) 3 75.0 75.0 detected",
        "VTT agent (AI) 1 25.0 25.0 passed",
    ]
    assert "it passes a round when its detection ≤ 70 %." in pdf_text(written["tallies.pdf"])


def test_one_ai_player_gets_ai_rounds_csv_but_no_verdict_table(written):
    assert read_csv(written, "ai_rounds.csv")[["round", "player", "votes"]].values.tolist() == [
        [1, "VTT agent", 2],
        [2, "VTT agent", 1],
    ]
    assert "Verdict per AI player" not in pdf_text(written["tallies.pdf"])
