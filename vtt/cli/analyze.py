"""``vtt analyze``: CogME profiles and vote statistics from files (no live session needed)."""

from __future__ import annotations

from pathlib import Path

import click

from .questions import FORMAT_CHOICES, read_bank_file
from .tools import fail, language_option, out_dir_option, pass_rule_options, warn_missing_glyphs


@click.command()
@click.option(
    "--questions",
    "questions_file",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Question bank file in any importable format (an optional round column groups votes).",
)
@click.option(
    "--answers",
    "answers_file",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="CSV player,qid,answer[,correct][,kind], or one model's predictions: JSON qid -> option, JSONL/CSV "
    "rows of qid + prediction, or MovieCORE prediction JSON (see --player).",
)
@click.option("--player", "player_name", help="The player of a predictions file (default: the file's name).")
@click.option(
    "--votes",
    "votes_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="CSV round,juror,vote[,confidence][,slot][,group][,expert][,age_band][,sex]; an empty vote abstains.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMAT_CHOICES),
    default="auto",
    show_default=True,
    help="Format of the questions file.",
)
@click.option(
    "--method",
    type=click.Choice(["uniform", "cogsci2024", "frontiers2022"]),
    default="cogsci2024",
    show_default=True,
    help="CogME scoring method.",
)
@pass_rule_options
@click.option("--ai", "ai_names", multiple=True, help="A player who is an AI (repeat for several).")
@click.option(
    "--sheet",
    "sheet_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="CSV juror,qid,player,looks_like_ai of the judgment sheets: adds exposure.csv and an exposure "
    "table to the PDFs (with --out).",
)
@click.option("--title", default="Video Turing Test report", show_default=True)
@out_dir_option("Write profiles.pdf, tallies.pdf, report.pdf and a CSV per table here.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with every figure to stdout.")
@language_option("The PDFs' language (with --out; the CSVs are the same in both).")
def analyze(
    questions_file: Path,
    answers_file: Path,
    player_name: str | None,
    votes_file: Path | None,
    fmt: str,
    method: str,
    pass_rule: str,
    alpha: float,
    threshold_pct: float,
    ai_names: tuple[str, ...],
    sheet_file: Path | None,
    title: str,
    out_dir: Path | None,
    as_json: bool,
    language: str,
) -> None:
    """CogME profiles and vote statistics from files (e.g. a model's predictions on a tagged benchmark)."""
    import json

    from analysis.cogme import profiles as cogme_profiles
    from analysis.inputs import AnalysisInputError, read_sheet, read_votes
    from analysis.predictions import PredictionsError
    from analysis.results import analysis_json
    from analysis.votes import exposure, vote_stats

    from ..banks import records_table
    from ..problems import InputError

    try:
        # A test split's questions may lack keys: answers to them then need a correct column (0/1).
        questions = records_table(read_bank_file(questions_file, fmt, strict=False, allow_missing_keys=True).records)
        answers = _answers(answers_file, questions, ai_names, player_name)
        players = answers.drop_duplicates("player")[["player", "kind"]].rename(columns={"player": "name"})
        if (votes_file or sheet_file) and not (players["kind"] == "ai").any():
            needs = " and the ".join(
                what for what, file in (("votes", votes_file), ("judgment sheet", sheet_file)) if file
            )
            fail(
                f"no AI player in {answers_file.name}, and the {needs} need one (detection is the share naming "
                "the AI): name the AI with --ai NAME or a kind column (human/ai) in the answers file"
            )
        votes = read_votes(votes_file, players) if votes_file else None
        sheet = read_sheet(sheet_file, questions, players) if sheet_file else None
    except (InputError, AnalysisInputError, PredictionsError) as error:
        fail(error)
    result = cogme_profiles(questions, answers, method)
    stats = vote_stats(votes, players, pass_rule, alpha, threshold_pct) if votes is not None else None
    if out_dir:
        from analysis.session_report import write_reports
        from analysis.words import report_language, t

        with report_language(language):
            info = _analysis_info(questions, questions_file, answers_file, votes_file, sheet_file)
            title = t(title)  # the default title in the PDFs' language; one of the user's own stays as given
        written = write_reports(
            out_dir,
            language=language,
            questions=questions,
            answers=answers,
            profiles=result,
            stats=stats,
            title=title,
            session_info=info,
            exposure=exposure(sheet, players, answers) if sheet is not None else None,
        )
        click.echo(f"wrote {len(written)} files to {out_dir}: {', '.join(sorted(written))}", err=as_json)
        warn_missing_glyphs(written)
    if as_json:
        click.echo(json.dumps(analysis_json(result, stats), ensure_ascii=False, allow_nan=False))
    elif not out_dir:
        _print_analysis(analysis_json(result, stats))


def _answers(path: Path, questions, ai_names: tuple[str, ...], player: str | None):
    """An answers CSV, or a predictions file (with what it holds beyond the set, and its coverage, on stderr)."""
    from analysis.inputs import check_answers, read_answers
    from analysis.predictions import coverage, is_predictions_file, read_predictions, split_unknown

    if not is_predictions_file(path):
        if player:
            fail(f"--player names the player of a predictions file; {path.name} has a player column")
        return read_answers(path, questions, ai_names)
    table, unknown = split_unknown(read_predictions(path, player), set(questions["qid"].astype(str)))
    if unknown:
        shown = ", ".join(map(repr, unknown[:10])) + (", ..." if len(unknown) > 10 else "")
        click.echo(
            f"warning: {len(unknown):,} prediction{'s' if len(unknown) != 1 else ''} in {path.name} name "
            f"questions not in the {len(questions):,}-question set, left out: {shown}",
            err=True,
        )
    answers = check_answers(table.reset_index(drop=True), path, questions, ai_names)
    for line in coverage(answers, len(questions)):
        click.echo(line, err=True)
    return answers


def _analysis_info(
    frame, questions: Path, answers: Path, votes: Path | None, sheet: Path | None = None
) -> dict[str, str]:
    from analysis.words import t

    from ..reports.session_info import unkeyed_info

    info = {t("Questions"): questions.name, t("Answers"): answers.name}
    if votes:
        info[t("Votes")] = votes.name
    if sheet:
        info[t("Judgment sheet")] = sheet.name
    return {**info, **unkeyed_info(frame)}


def _print_analysis(summary: dict) -> None:
    def pct(value) -> str:
        return "n/a" if value is None else f"{value:.1f}%"

    click.echo(f"CogME profiles (method {summary['method']})")
    for player in summary["players"]:
        sd = "n/a" if player["element_sd"] is None else f"{player['element_sd']:.2f}"
        click.echo(
            f"  {player['name']} ({player['kind']}): {player['correct']}/{player['questions']} correct, "
            f"accuracy {pct(player['accuracy_pct'])}, element SD {sd}"
        )
    if summary["rounds"]:
        click.echo(f"Votes (pass rule {summary['pass_rule']})")
        for row in summary["rounds"]:
            passed = {True: "AI passed", False: "AI detected", None: "no votes"}[row["ai_passed"]]
            click.echo(
                f"  round {row['round']}: {row['votes']} votes, {row['abstentions']} abstentions, "
                f"detection {pct(row['detection_pct'])}, {passed}"
            )
        judged = [row for row in summary["rounds"] if row["ai_passed"] is not None]
        silent = len(summary["rounds"]) - len(judged)
        silent_text = f" ({silent} round{'s' if silent != 1 else ''} without votes)" if silent else ""
        click.echo(
            f"  AI passed {sum(row['ai_passed'] for row in judged)} of {len(judged)} rounds{silent_text}, "
            f"mean detection {pct(summary['mean_detection_pct'])}"
        )
