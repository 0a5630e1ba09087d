"""``vtt grade``: help for the graders of open answers."""

from __future__ import annotations

import json

import click

from .tools import MODEL_OPTIONS, ProgressBar, db_factory, fail, model_call_options, session_or_fail, with_option


@click.group()
def grade() -> None:
    """Grading open answers: a judge model's suggestions beside the graders' marks."""


@grade.command("suggest")
@click.argument("code")
@model_call_options(concurrency=4, timeout=60.0)  # JudgeSettings' defaults
@click.option(
    "--dimensions",
    default=None,
    help="Comma-separated, of verdict (correct/incorrect) and MovieCORE's accuracy, comprehensiveness, depth, "
    "evidence and coherence.  [default: all six]",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with the run's figures.")
def grade_suggest(
    code: str,
    spec: str,
    model: str,
    dimensions: str | None,
    temperature: float,
    concurrency: int,
    timeout: float,
    max_tokens: int | None,
    api_key: str | None,
    as_json: bool,
) -> None:
    """Ask a judge model to score every open answer of session CODE (join code), one call per dimension.

    The suggestions are stored apart from the graders' marks and count only when a grader takes them on the
    grading page. A second run asks only what is missing (a new model or prompt asks again). docs/grading.md.
    """
    from ..judge.rubric import DIMENSIONS
    from ..judge.suggest import JudgeError, JudgeSettings, suggest

    try:
        settings = JudgeSettings.from_spec(
            spec,
            model,
            temperature=temperature,
            api_key=api_key,
            timeout=timeout,
            concurrency=concurrency,
            max_tokens=max_tokens,
        )
    except JudgeError as error:
        fail(with_option(error.message, MODEL_OPTIONS.get(error.setting)))
    factory = db_factory()
    with factory() as db:
        session_id = session_or_fail(db, code).id
    with ProgressBar(f"{model}: {{total}} calls", as_json) as bar:
        try:
            summary = suggest(
                factory,
                session_id,
                settings,
                [name.strip() for name in dimensions.split(",") if name.strip()] if dimensions else DIMENSIONS,
                started=bar.started,
                progress=bar.progress,
            )
        except JudgeError as error:
            fail(with_option(error.message, MODEL_OPTIONS.get(error.setting)))
    if as_json:
        click.echo(json.dumps(summary.as_dict()))
    else:
        left_out = "; ".join(f"{count} left out: {reason}" for reason, count in summary.left_out.items())
        click.echo(
            f"{summary.answers} open answers: {summary.asked} calls made, {summary.scored} scored, "
            f"{summary.unread} replies without a score, {summary.failed} failed, {summary.already} done before"
            + (f"; {left_out}" if left_out else "")
        )
        for problem in summary.problems:
            click.echo(f"  {problem}", err=True)
    if summary.stopped:
        fail(f"the run stopped: {summary.stopped} (what was scored is kept: run again to go on)")
    if summary.nothing_scored:
        fail(f"{summary.nothing_scored} (run again once the endpoint answers)")
