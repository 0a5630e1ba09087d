"""``vtt plan``: design a case study before running it (what a jury of a given size can show).

Registered on the ``vtt`` group by ``vtt/cli/main.py``; imports ``vtt.cli.tools`` and lower modules only.
The figures come from :mod:`analysis.planner`, imported inside the command (it loads numpy, scipy and,
through ``analysis.votes``, pandas: too slow for start-up).
"""

from __future__ import annotations

import click

from .plan_displaced import displaced
from .tools import fail, pass_rule_options

CASE_STUDY_RATE_PCT = 48.6  # = 100 * analysis.planner.DEFAULT_RATE, repeated here: --help must not import numpy
CASE_STUDY_SOURCE = "the VTT case study's mean detection"
RULE_WORDS = {
    "human-tie": "the AI passes a round when some human draws at least as many votes as the (most-voted) AI",
    "chance": "the AI passes a round when a one-sided exact binomial test of detection against chance is not "
    "significant",
    "threshold": "the AI passes a round when detection is at or below the threshold",
}


@click.group("plan", invoke_without_command=True)
@click.option("--jurors", type=click.IntRange(1, 1_000_000), help="Jurors voting in every round (required).")
@click.option("--rounds", type=click.IntRange(1, 1_000), help="Rounds of the session (required).")
@click.option("--players", default=5, show_default=True, type=click.IntRange(2, 1_000), help="Players per round.")
@click.option("--ai", "ai_players", default=1, show_default=True, type=click.IntRange(1), help="AI players per round.")
@click.option(
    "--ai-votes",
    default=1,
    show_default=True,
    type=click.IntRange(1),
    help="Names each juror gives per round (more than 1 only with several AI players).",
)
@pass_rule_options
@click.option(
    "--rate",
    type=click.FloatRange(0, 100),
    help=f"Assumed detection %: the chance that a juror's vote names the AI [default: {CASE_STUDY_RATE_PCT}, "
    f"{CASE_STUDY_SOURCE}].",
)
@click.option(
    "--study",
    "study_name",
    metavar="NAME",
    help="Take the assumed detection from this study's pooled votes (the share of its cast votes that named an AI "
    "player); --rate still wins.",
)
@click.option(
    "--power",
    default=0.8,
    show_default=True,
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    help="The smallest jury must catch the AI in a round with at least this probability.",
)
@click.option("--seed", default=1, show_default=True, type=int, help="Seeds the simulations.")
@click.option(
    "--simulations",
    default=20_000,
    show_default=True,
    type=click.IntRange(100, 1_000_000),
    help="Simulated rounds per figure that has no exact computation.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with every figure to stdout.")
@click.pass_context
def plan(
    ctx: click.Context,
    jurors: int,
    rounds: int,
    players: int,
    ai_players: int,
    ai_votes: int,
    pass_rule: str,
    alpha: float,
    threshold_pct: float,
    rate: float | None,
    study_name: str | None,
    power: float,
    seed: int,
    simulations: int,
    as_json: bool,
) -> None:
    """What a candidate case study can show, at an assumed detection rate, before running it.

    The chance that the AI passes a round under the pass rule and over the rounds, how wide the
    detection interval will be, and the smallest jury that catches the AI with the chosen power:
    exact where that is cheap, else by seeded simulation.  ``vtt plan displaced``: a displaced jury's size.
    """
    if ctx.invoked_subcommand is not None:
        return
    for name, value in (("jurors", jurors), ("rounds", rounds)):
        if value is None:
            raise click.MissingParameter(ctx=ctx, param=next(p for p in ctx.command.params if p.name == name))
    default_rate_pct = default_rate_source = None
    if study_name is not None and rate is None:
        default_rate_pct, default_rate_source = study_rate(study_name)
    run_plan(
        jurors=jurors,
        rounds=rounds,
        players=players,
        ai_players=ai_players,
        ai_votes=ai_votes,
        pass_rule=pass_rule,
        alpha=alpha,
        threshold_pct=threshold_pct,
        rate_pct=rate,
        power=power,
        seed=seed,
        simulations=simulations,
        as_json=as_json,
        default_rate_pct=default_rate_pct,
        default_rate_source=default_rate_source,
    )


def study_rate(name: str) -> tuple[float, str]:
    """A study's pooled detection (percent) and words saying where it comes from; fails when it has no votes."""
    from ..studies import StudyProblem, pooled_detection, study_by_name
    from .tools import db_factory

    with db_factory()() as db:
        try:
            study = study_by_name(db, name)
        except StudyProblem as problem:
            fail(problem, "nothing was computed")
        pooled = pooled_detection(db, study)
    if pooled["rate_pct"] is None:
        fail(f"the study {name!r} has no cast votes yet: give --rate", "nothing was computed")
    return pooled["rate_pct"], (
        f"the pooled detection of the study {study.name!r} ({pooled['hits']} of {pooled['votes']} cast votes)"
    )


def run_plan(
    *,
    jurors: int,
    rounds: int,
    players: int = 5,
    ai_players: int = 1,
    ai_votes: int = 1,
    pass_rule: str = "human-tie",
    alpha: float = 0.05,
    threshold_pct: float = 70.0,
    rate_pct: float | None = None,
    power: float = 0.8,
    seed: int = 1,
    simulations: int = 20_000,
    as_json: bool = False,
    default_rate_pct: float | None = None,
    default_rate_source: str | None = None,
) -> None:
    """Print the plan of a design; ``rate_pct`` (given with --rate) wins over ``default_rate_pct``.

    ``default_rate_pct`` / ``default_rate_source``: the hook for a caller that knows a better default
    than the case study's 48.6 % (e.g. a study's pooled detection), and words saying where it comes from.
    """
    if players <= ai_players:
        raise click.BadParameter(
            f"{players} players leave no human beside {ai_players} AI player(s): --players must exceed --ai",
            param_hint="'--players'",
        )
    if ai_votes > ai_players:
        raise click.BadParameter(
            f"{ai_votes} names per juror but only {ai_players} AI player(s): --ai-votes cannot exceed --ai",
            param_hint="'--ai-votes'",
        )
    if rate_pct is not None:
        rate, source = rate_pct, "--rate"
    elif default_rate_pct is not None:
        rate, source = default_rate_pct, default_rate_source or "the default rate"
    else:
        rate, source = CASE_STUDY_RATE_PCT, CASE_STUDY_SOURCE
    if not 0 <= rate <= 100:
        raise click.BadParameter(f"{rate} is not a percentage between 0 and 100 ({source})", param_hint="'--rate'")

    import json  # after the checks: a refused option answers at once

    from analysis.planner import Design
    from analysis.planner import plan as make_plan

    try:
        design = Design(jurors, rounds, players, ai_players, ai_votes, pass_rule, alpha, threshold_pct)
        result = make_plan(design, rate / 100, power=power, simulations=simulations, seed=seed)
    except ValueError as error:
        fail(error, "nothing was computed")
    if as_json:
        data = {**result.to_dict(), "rate_source": source}
        click.echo(json.dumps(data, ensure_ascii=False, allow_nan=False))
    else:
        _print_plan(result, source)


def _pct(probability: float) -> str:
    """A probability as a percentage, with more digits the smaller it is (down to 0.0001 %)."""
    value = 100 * probability
    if value == 0 or value >= 10:
        return f"{value:.1f}%"
    if value >= 0.1:
        return f"{value:.2f}%"
    return f"{value:.2g}%" if value >= 1e-4 else "<0.0001%"


def _with_method(estimate, result) -> str:
    if estimate.method == "exact":
        return "exact"
    return f"simulated, {result.simulations:,} rounds, seed {result.seed}"


def _estimate(estimate, percent: bool = True) -> str:
    """An estimate's value (a probability as a percentage, else a number), with its standard error when simulated."""
    show = _pct if percent else (lambda value: f"{value:.2f}")
    if estimate.std_error is None:
        return show(estimate.value)
    return f"{show(estimate.value)}, SE {_pct(estimate.std_error) if percent else f'{estimate.std_error:.2g}'}"


def _print_plan(result, rate_source: str) -> None:
    design, echo = result.design, click.echo
    humans = design.players - design.ai_players
    echo("Case study plan")
    echo(
        f"Design: {design.jurors:,} jurors, {design.rounds} rounds, {design.players} players per round "
        f"({humans} human{'s' if humans != 1 else ''}, {design.ai_players} AI), "
        f"{design.ai_votes} AI vote{'s' if design.ai_votes != 1 else ''} per juror and round"
    )
    rule = {"chance": f"chance, alpha {design.alpha:g}", "threshold": f"threshold {design.threshold_pct:g}%"}
    echo(f"Pass rule: {rule.get(design.pass_rule, design.pass_rule)}: {RULE_WORDS[design.pass_rule]}")
    echo(
        f"Assumed detection: {100 * result.rate:g}% of votes name an AI ({rate_source}); "
        f"chance {100 * design.chance:.1f}%"
    )
    if abs(result.detection - result.rate) > 1e-12:
        echo(
            f"  with {humans} human{'s' if humans != 1 else ''} and {design.ai_votes} names per juror, jurors run "
            f"out of humans: the model's detection is {100 * result.detection:.1f}%"
        )
    echo("Assumptions:")
    for assumption in result.assumptions:
        echo(f"  - {assumption}")

    passed, over = result.round_pass, result.rounds_passed
    echo(f"One round: P(the AI passes) = {_estimate(passed)} [{_with_method(passed, result)}]")
    echo(
        f"Over {design.rounds} rounds (independent: Binomial({design.rounds}, p)): expected rounds passed "
        f"{_estimate(over.expected, percent=False)}; P(passes at least {over.half} of {design.rounds}) = "
        f"{_estimate(over.at_least_half)}; P(passes all {design.rounds}) = {_estimate(over.every_round)}"
    )
    echo("  rounds passed: " + ", ".join(f"{r}: {_pct(p)}" for r, p in enumerate(over.distribution)))

    echo("Detection interval (Wilson 95%), width in percentage points:")
    for label, interval in (("all rounds pooled", result.pooled_interval), ("one round", result.round_interval)):
        low, high = interval.at_rate
        echo(
            f"  {label}, {interval.votes:,} votes: expected width {_estimate(interval.mean, percent=False)} "
            f"(median {interval.median:.2f}) [{_with_method(interval.mean, result)}]; "
            f"at {100 * result.detection:.1f}% detection: {low:.1f}% to {high:.1f}%"
        )

    power = result.smallest_juries[0].power
    echo(f"Smallest jury for {100 * power:g}% power (P(the AI fails the rule in a round) >= {100 * power:g}%):")
    for jury in result.smallest_juries:
        name = {"chance": f"chance (alpha {design.alpha:g})", "threshold": f"threshold ({design.threshold_pct:g}%)"}
        label = name.get(jury.pass_rule, jury.pass_rule)
        if jury.jurors is None:
            echo(f"  {label}: {jury.note}")
            continue
        steady = ""
        if jury.steady_from is not None and jury.steady_from != jury.jurors:
            steady = f"; every jury from {jury.steady_from:,} to {jury.cap:,} jurors reaches it"
        echo(f"  {label}: {jury.jurors:,} jurors (caught {_estimate(jury.caught)}{steady}) [{jury.method}]")


plan.add_command(displaced)
