"""``vtt plan displaced``: how many people a displaced jury needs, each judging some rounds of a finished session, for
a target Wilson interval width on its pooled detection, or a power to tell its detection from chance or from the live
jury's (:mod:`analysis.displaced_planner`; formulas: docs/planning.md, "A displaced jury's size")."""

from __future__ import annotations

import click

from .tools import fail

CASE_STUDY_RATE_PCT = 48.6  # analysis.planner.DEFAULT_RATE in percent (--help must not import numpy)


@click.command("displaced")
@click.option(
    "--rounds-per-juror", required=True, type=click.IntRange(1, 1_000), help="Rounds each displaced juror judges."
)
@click.option(
    "--rate",
    default=CASE_STUDY_RATE_PCT,
    show_default=True,
    type=click.FloatRange(0, 100),
    help="Assumed detection % of the displaced jury (default: the VTT case study's mean detection).",
)
@click.option(
    "--width",
    type=click.FloatRange(0, 100, min_open=True, max_open=True),
    help="Target width of the pooled detection's Wilson 95 % interval, in percentage points.",
)
@click.option(
    "--power",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    help="Target power to tell the displaced jury's detection from chance or from the live jury's (--against).",
)
@click.option(
    "--against",
    type=click.Choice(["chance", "live"]),
    default="chance",
    show_default=True,
    help="With --power: chance (one-sided, as the chance pass rule) or the live jury (two-sided, as the reports' test "
    "across juries).",
)
@click.option("--players", default=5, show_default=True, type=click.IntRange(2, 1_000), help="Players per round.")
@click.option("--ai", "ai_players", default=1, show_default=True, type=click.IntRange(1), help="AI players per round.")
@click.option(
    "--alpha",
    default=0.05,
    show_default=True,
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    help="Significance level of the test.",
)
@click.option("--live-rate", type=click.FloatRange(0, 100), help="The live jury's detection % (--against live).")
@click.option("--live-votes", type=click.IntRange(1), help="The live jury's cast votes, all rounds (--against live).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per target to stdout.")
def displaced(
    rounds_per_juror: int,
    rate: float,
    width: float | None,
    power: float | None,
    against: str,
    players: int,
    ai_players: int,
    alpha: float,
    live_rate: float | None,
    live_votes: int | None,
    as_json: bool,
) -> None:
    """The displaced jury's size for a target width (--width) and/or a target power (--power).

    A displaced juror casts one vote per round judged; the votes are treated as independent.
    """
    if width is None and power is None:
        raise click.UsageError("give --width, --power or both: the target the jury's size is for")
    if power is not None and against == "live" and (live_rate is None or live_votes is None):
        raise click.UsageError("--against live needs the live jury's --live-rate and --live-votes")
    if players <= ai_players:
        raise click.BadParameter(
            f"{players} players leave no human beside {ai_players} AI player(s)", param_hint="'--players'"
        )

    import json

    from analysis.displaced_planner import against_chance, against_live, for_width

    sizes = []
    try:
        if width is not None:
            sizes.append(for_width(rate / 100, width / 100, rounds_per_juror))
        if power is not None and against == "chance":
            sizes.append(against_chance(rate / 100, ai_players / players, power, alpha, rounds_per_juror))
        elif power is not None:
            sizes.append(against_live(rate / 100, live_rate / 100, live_votes, power, alpha, rounds_per_juror))
    except ValueError as error:
        fail(error, "nothing was computed")
    for size in sizes:
        if as_json:
            click.echo(json.dumps(size.to_dict(), allow_nan=False))
            continue
        click.echo(_line(size, width, power, alpha, ai_players / players, live_rate, live_votes))


def _line(size, width, power, alpha, chance, live_rate, live_votes) -> str:
    if size.target == "width":
        goal = f"Wilson 95% interval at most {width:g} points wide at {100 * size.rate:g}% detection"
        reached = f"width {100 * size.achieved:.2f} points" if size.achieved is not None else ""
    elif size.target == "chance":
        goal = (
            f"{100 * power:g}% power to tell {100 * size.rate:g}% detection from chance {100 * chance:.1f}% "
            f"(one-sided, alpha {alpha:g})"
        )
        reached = f"power {100 * size.achieved:.1f}%" if size.achieved is not None else ""
    else:
        goal = (
            f"{100 * power:g}% power to tell {100 * size.rate:g}% detection from the live jury's {live_rate:g}% "
            f"over {live_votes} votes (two-sided, alpha {alpha:g})"
        )
        reached = f"power {100 * size.achieved:.1f}%" if size.achieved is not None else ""
    if size.jurors is None:
        return f"{goal}: no displaced jury reaches it ({size.note})"
    return (
        f"{goal}: {size.jurors:,} displaced jurors x {size.rounds_per_juror} rounds = "
        f"{size.jurors * size.rounds_per_juror:,} votes (the target needs {size.votes:,}: {reached})"
    )
