"""The study report: several sessions read together (:mod:`analysis.study`), as CSVs and one PDF.

:func:`write_study_report` writes every table of :func:`analysis.study.study_tables` as a UTF-8 CSV
(English, whatever the PDF's language) and ``study_report.pdf``: the sessions with their design hashes,
what they are made of, the AI's detection per session and pooled (with the test of whether the sessions
differ, and each session's verdict under its own rule), CogME radars overlaid per developmental stage
and per AI program, the juror facets pooled, the judgment sheets' exposure per question and the
questions the sessions share.  The PDF is built from the one-session report's pieces (fonts, styles,
tables, footer, radars) so the two read alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from reportlab.graphics.shapes import Drawing, Line, Rect
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.platypus import Flowable, PageBreak, Spacer

from . import charts
from .fonts import BOLD
from .report import (
    FACET_TITLES,
    _block_starts,
    _build_pdf,
    _Column,
    _cover,
    _facet_value,
    _FitOnPage,
    _frame_width,
    _interval,
    _Look,
    _missing_characters,
    _number,
    _p_equation,
    _p_value,
    _paragraph_styles,
    _radar_grid,
    _rule_text,
    _table,
    _texts,
    markup,
)
from .report_text import REPORT_LANGUAGES, report_language, t
from .study import _ELEMENT_RANK, ALL, NO_PROGRAM, NO_STAGE, StudyData, group_profiles, study_tables
from .taxonomy import Module, all_elements

PDF_NAME = "study_report.pdf"
RADAR_MIN_SCALE = 0.7  # as the session report's overview: radars shrink this far to stay with their table
OUR_LABELS = (NO_STAGE, NO_PROGRAM, ALL)  # the study's own words among the labels: translated, not user text
CELL_PADDING = 8.0  # a table column's side paddings (3 + 3 in analysis.report) and a little room
MAX_COUNT_SHARE = 0.8  # the count columns of the composition tables take at most this much of the width
GROUPS_PER_TABLE = 5  # per-element tables: more groups side by side squeeze each cell to a word per line


def write_study_report(data: StudyData, out_dir: Path, *, language: str = "en") -> list[Path]:
    """Write the study's CSVs (one per :func:`analysis.study.study_tables` table) and ``study_report.pdf``
    into ``out_dir`` (created if needed); return their paths.  ``language``: the PDF's words (``en``, ``ko``)."""
    if language not in REPORT_LANGUAGES:
        raise ValueError(f"unknown report language {language!r}; one of {', '.join(REPORT_LANGUAGES)}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tables = study_tables(data)
    written = []
    for name, table in tables.items():
        written.append(out_dir / name)
        table.to_csv(written[-1], index=False, encoding="utf-8")
    stages, programs = group_profiles(data, "stage"), group_profiles(data, "program")
    with report_language(language):
        title = t("{name} - Video Turing Test study", name=data.name)
        look = _Look(_paragraph_styles(), {})
        missing = _missing_characters(_user_texts(data, tables) | {title})
        story = (
            _cover(title, None, look, missing)
            + _sessions_section(tables, look)
            + _composition_section(tables, look)
            + _detection_section(tables, look)
            + _profiles_section(stages.elements, stages.groups, "stage", stages.order, look)
            + _profiles_section(programs.elements, programs.groups, "program", programs.order, look)
            + _juror_section(tables["juror_groups.csv"], look)
            + _exposure_section(tables["exposure.csv"], look)
            + _shared_section(tables["shared_questions.csv"], tables["qid_collisions.csv"], look)
        )
        written.append(out_dir / PDF_NAME)
        _build_pdf(written[-1], story, title)
    return written


def _user_texts(data: StudyData, tables: dict[str, pd.DataFrame]) -> set[str]:
    """The text users wrote that the PDF prints (to list what the font cannot draw)."""
    return _texts(
        data.sessions["session"],
        data.sessions["name"],
        data.sessions["bank"],
        data.players["stage"],
        data.answers["program"],
        tables["juror_groups.csv"]["group"],
        tables["exposure.csv"]["question"],
        tables["shared_questions.csv"]["question"],
        tables["qid_collisions.csv"]["question"],
    )


# ----------------------------------------------------------------------------------- helpers


def _label(value) -> str:
    """A group label as markup: the study's own words translated, the users' escaped."""
    return t(value) if value in OUR_LABELS else markup(value)


def _session_label(code: str) -> str:
    return f"<b>{t('all')}</b>" if code == ALL else markup(code)


def _rule_short(row) -> str:
    """The pass rule and its parameter in a few words: ``chance (α 0.05)``, ``threshold (≤ 70 %)``."""
    if row.pass_rule == "chance":
        return f"chance (α {row.alpha:g})"
    if row.pass_rule == "threshold":
        return f"threshold (≤ {row.threshold_pct:g} %)"
    return markup(row.pass_rule)


def _pivot(table: pd.DataFrame, keys: list[str], value: str, sessions: Sequence[str]) -> pd.DataFrame:
    """``table`` (long, one row per session and key) as one row per key with a column per session and ``all``,
    the keys in the order of the study's total rows (the report order :mod:`analysis.study` sorted them in)."""
    wide = table.pivot_table(index=keys, columns="session", values=value, aggfunc="sum", fill_value=0)
    wide = wide.reindex(columns=[*sessions, ALL], fill_value=0).reset_index()
    return table.loc[table["session"] == ALL, keys].merge(wide, on=keys, how="left")


def _count_columns(sessions: Sequence[str], width: float, look: _Look) -> tuple[list[_Column], float]:
    """One numeric column per session and a last one for the study's total, and the share of ``width`` left
    for the label columns: together they take at least 60 %, more when a join code needs it to fit on one line."""
    headers = [markup(code) for code in sessions] + [f"<b>{t('all')}</b>"]
    size = look.text["head"].fontSize
    widest = max(stringWidth(str(code), BOLD, size) for code in [*sessions, t("all")]) + CELL_PADDING
    each = min(max(0.6 / len(headers), widest / width), MAX_COUNT_SHARE / len(headers))
    return [_Column(header, each, True) for header in headers], 1 - each * len(headers)


def _nothing(look: _Look, text: str) -> list[Flowable]:
    return [look.para(f"<font color='#{charts.GREY.hexval()[2:]}'>{text}</font>")]


# ---------------------------------------------------------------------------------- sessions


def _sessions_section(tables: dict[str, pd.DataFrame], look: _Look) -> list[Flowable]:
    """The cover's table of the sessions, then their design hashes in full."""
    width = _frame_width()
    overview = tables["sessions.csv"]
    rows = [
        [
            f"<b>{markup(row.session)}</b>",
            markup(row.name),
            markup(row.bank),
            _rule_short(row),
            t("{players} ({ai} AI)", players=row.players, ai=row.ai_players),
            str(row.jurors),
            str(row.rounds),
            str(row.questions),
        ]
        for row in overview.itertuples(index=False)
    ]
    return [
        look.para(t("Sessions"), "h1"),
        look.para(
            t(
                "{count} sessions read together. Each keeps its own design, question bank and pass rule: a player, "
                "a juror and a question belong to their session (a question is shared only when its qid and its "
                "text agree), and each session is judged under its own rule.",
                count=len(overview),
            )
        ),
        _table(
            look,
            [
                _Column(t("Join code"), 0.1),
                _Column(t("Name"), 0.2),
                _Column(t("Bank"), 0.14),
                _Column(t("Pass rule"), 0.16),
                _Column(t("Players"), 0.11, True),
                _Column(t("Jurors"), 0.09, True),
                _Column(t("Rounds"), 0.09, True),
                _Column(t("Questions"), 0.11, True),
            ],
            rows,
            width,
        ),
        Spacer(1, 8),
        look.para(t("Design hashes"), "h2"),
        _table(
            look,
            [_Column(t("Join code"), 0.14), _Column(t("Design hash"), 0.86)],
            [[markup(row.session), markup(row.design_hash) or "–"] for row in overview.itertuples(index=False)],
            width,
        ),
        look.para(
            t("The design hash identifies each session's design (questions, rounds, players, rules) as it was run."),
            "caption",
        ),
    ]


def _composition_section(tables: dict[str, pd.DataFrame], look: _Look) -> list[Flowable]:
    """Players by kind and stage or program, jurors by facet label, questions by CogME element: a column per
    session and the study's total."""
    width = _frame_width()
    sessions = list(tables["sessions.csv"]["session"])
    numbers, rest = _count_columns(sessions, width, look)
    label_shares = (0.45 * rest, 0.55 * rest)  # the key (kind, facet, module) and its value

    players = tables["composition_players.csv"]
    wide = _pivot(players.fillna({"stage": "", "program": ""}), ["kind", "stage", "program"], "players", sessions)
    kind_starts = _block_starts(list(wide["kind"]))
    player_rows = [
        [
            ("<b>AI</b>" if row["kind"] == "ai" else t("human")) if start else "",
            _label(row["stage"] or row["program"]),
        ]
        + [str(row[code]) for code in [*sessions, ALL]]
        for row, start in zip(wide.to_dict("records"), kind_starts)
    ]
    story: list[Flowable] = [
        look.para(t("Composition"), "h1"),
        look.para(t("Players"), "h2"),
        _table(
            look,
            [_Column(t("Kind"), label_shares[0]), _Column(t("Stage or program"), label_shares[1]), *numbers],
            player_rows,
            width,
            block_starts=kind_starts,
        ),
        look.para(t("Humans by developmental stage; AI players by the program(s) that answered for them."), "caption"),
        look.para(t("Jurors"), "h2"),
    ]

    jurors = tables["composition_jurors.csv"]
    overview = tables["sessions.csv"]
    all_jurors = [t("all"), t("jurors")] + [str(n) for n in overview["jurors"]] + [str(overview["jurors"].sum())]
    if len(jurors):
        wide = _pivot(jurors, ["facet", "group"], "jurors", sessions)
        starts = _block_starts(list(wide["facet"]))
        facet_rows = [
            [t(FACET_TITLES[row["facet"]]) if start else "", _facet_value(row["facet"], row["group"])]
            + [str(row[code]) for code in [*sessions, ALL]]
            for row, start in zip(wide.to_dict("records"), starts)
        ]
    else:
        facet_rows, starts = [], []
    story += [
        _table(
            look,
            [_Column(t("Facet"), label_shares[0]), _Column(t("Group"), label_shares[1]), *numbers],
            [all_jurors, *facet_rows],
            width,
            block_starts=[True, *starts],
        ),
        look.para(
            t(
                "A juror belongs to one session: J1 of two sessions are two jurors. Jurors without a label are "
                "left out."
            ),
            "caption",
        ),
        look.para(t("Questions by CogME element"), "h2"),
    ]

    questions = tables["composition_questions.csv"]
    wide = _pivot(questions, ["module", "element"], "questions", sessions)
    wide = wide[wide[ALL] > 0]
    starts = _block_starts(list(wide["module"]))
    element_rows = [
        [row["module"].upper() if start else "", markup(row["element"])] + [str(row[c]) for c in [*sessions, ALL]]
        for row, start in zip(wide.to_dict("records"), starts)
    ]
    totals = [t("all"), t("questions")] + [str(n) for n in overview["questions"]] + [str(overview["questions"].sum())]
    story += [
        _table(
            look,
            [_Column(t("Module"), label_shares[0]), _Column(t("Element"), label_shares[1]), *numbers],
            [totals, *element_rows],
            width,
            block_starts=[True, *starts],
        ),
        look.para(
            t(
                "Questions tagged with each element in each session's own set (elements no session tagged are left "
                "out); a question asked in two sessions counts in both."
            ),
            "caption",
        ),
    ]
    return story


# --------------------------------------------------------------------------------- detection


def _detection_section(tables: dict[str, pd.DataFrame], look: _Look) -> list[Flowable]:
    """Detection per session and pooled (chart and table), whether the sessions differ, and the verdicts."""
    width = _frame_width()
    detected = tables["detection.csv"]
    story: list[Flowable] = [PageBreak(), look.para(t("AI detection"), "h1")]
    pooled = detected[detected["session"] == ALL].iloc[0]
    if not pooled["votes"]:
        return story + _nothing(look, t("No session has votes."))
    story += [
        look.para(
            t(
                "Pooled over the sessions, <b>{detection} %</b> of {votes} cast votes named an AI player (95 % "
                "Wilson CI {ci} %) where blind votes would reach {chance} %: exact {p} (one-sided, against the "
                "sessions' own chance levels).",
                detection=_number(pooled["detection_pct"]),
                votes=pooled["votes"],
                ci=_interval(pooled["ci_low"], pooled["ci_high"]),
                chance=_number(pooled["chance_pct"]),
                p=_p_equation(pooled["p_value"]),
            )
        ),
        _study_detection_chart(detected, width=width),
        look.para(
            t(
                "Detection = share of cast votes naming an AI player; whiskers: 95 % Wilson interval; dashed: each "
                "session's chance level (AI players / players), for all sessions the vote-weighted mean of them. "
                "Sessions without votes are left out."
            ),
            "caption",
        ),
    ]
    rows = [
        [
            _session_label(row.session),
            str(row.votes),
            str(row.ai_votes),
            _number(row.detection_pct),
            _interval(row.ci_low, row.ci_high),
            _number(row.chance_pct),
            _p_value(row.p_value),
        ]
        for row in detected.itertuples(index=False)
    ]
    story += [
        _table(
            look,
            [
                _Column(t("Session"), 0.16),
                _Column(t("Votes"), 0.12, True),
                _Column(t("AI votes"), 0.12, True),
                _Column(t("Detection %"), 0.15, True),
                _Column(t("95 % CI"), 0.16, True),
                _Column(t("Chance %"), 0.14, True),
                _Column("p", 0.15, True),
            ],
            rows,
            width,
            block_starts=[code == ALL for code in detected["session"]],
        ),
        look.para(
            t(
                "p: one-sided exact binomial test of a session's AI votes against its chance level; for all "
                "sessions, the exact tail of the sum of the sessions' binomials, each at its own chance level "
                "(Poisson-binomial, by convolution). Both treat votes as independent, which one juror's votes are "
                "not: read them as approximate."
            ),
            "caption",
        ),
    ]
    return story + _differ_table(tables["sessions_differ.csv"], look, width) + _verdicts(tables, look, width)


def _differ_table(differ: pd.DataFrame, look: _Look, width: float) -> list[Flowable]:
    """The G-test of homogeneity and its Monte-Carlo p."""
    rows = [
        [
            t("Monte-Carlo exact p of G ({draws} draws, seed {seed})", draws=row.draws, seed=row.seed)
            if row.test == "monte-carlo"
            else t("Likelihood-ratio (G) test, chi-squared p"),
            _number(row.statistic, 2),
            str(row.df),
            _p_value(row.p_value),
        ]
        for row in differ.itertuples(index=False)
    ]
    return [
        look.para(t("Do the sessions differ?"), "h2"),
        _table(
            look,
            [
                _Column(t("Test"), 0.55),
                _Column("G", 0.15, True),
                _Column("df", 0.1, True),
                _Column("p", 0.2, True),
            ],
            rows,
            width * 0.8,
        ),
        look.para(
            t(
                "Whether detection differs between the sessions: the likelihood-ratio test of a logistic model with "
                "the session as a factor against one common rate (the G-test of homogeneity on the sessions × "
                "(named an AI, did not) table). The Monte-Carlo p draws the same statistic with the hits spread at "
                "random over all votes (the margins kept): it holds when counts are small."
            ),
            "caption",
        ),
    ]


def _verdicts(tables: dict[str, pd.DataFrame], look: _Look, width: float) -> list[Flowable]:
    """Each session's verdict under its own rule, then the rules used, explained."""
    verdicts = tables["verdicts.csv"]
    rows = [
        [
            markup(row.session),
            _rule_short(row),
            t("{passed} of {judged}", passed=row.rounds_passed, judged=row.rounds_with_votes),
            _number(row.mean_detection_pct),
        ]
        for row in verdicts.itertuples(index=False)
    ]
    rules = verdicts.drop_duplicates(["pass_rule", "alpha", "threshold_pct"])
    return [
        look.para(t("Verdicts, each session under its own rule"), "h2"),
        _table(
            look,
            [
                _Column(t("Session"), 0.2),
                _Column(t("Pass rule"), 0.3),
                _Column(t("Rounds the AI passed"), 0.25, True),
                _Column(t("Mean detection %"), 0.25, True),
            ],
            rows,
            width * 0.8,
        ),
        *(look.para(_rule_text(rule), "caption") for rule in rules.itertuples(index=False)),
    ]


def _study_detection_chart(detected: pd.DataFrame, *, width: float, height: float = 200) -> Drawing:
    """One bar per session with votes and one for all of them (set apart, darker): detection with its 95 %
    Wilson whisker and the chance level; under each bar its join code and votes."""
    drawing = charts._new_drawing(width, height)
    x0, y0 = 34, 42
    plot_w, plot_h = width - x0 - 4, height - y0 - 12  # room above 100 % for a value label
    charts._y_axis(drawing, x0, y0, plot_w, plot_h, 100, 25, " %", t("detection"))
    rows = detected[detected["votes"] > 0].reset_index(drop=True)
    slot = plot_w / (len(rows) + 0.5)  # half a slot of space before the pooled bar

    def y_of(pct: float) -> float:
        return y0 + plot_h * pct / 100

    for index, row in enumerate(rows.itertuples(index=False)):
        is_pooled = row.session == ALL
        centre = x0 + slot * (index + 0.5 + 0.5 * is_pooled)
        if is_pooled:
            gap = centre - slot * 0.75
            drawing.add(Line(gap, y0, gap, y0 + plot_h, strokeColor=charts.GRID, strokeWidth=0.5))
        bar_w = min(slot * 0.55, 50)
        drawing.add(
            Rect(
                centre - bar_w / 2,
                y0,
                bar_w,
                y_of(row.detection_pct) - y0,
                fillColor=charts.BLUE if is_pooled else charts.SKY,
                strokeColor=None,
            )
        )
        chance = y_of(row.chance_pct)
        drawing.add(
            Line(
                centre - slot * 0.42,
                chance,
                centre + slot * 0.42,
                chance,
                strokeColor=charts.BLACK,
                strokeWidth=1,
                strokeDashArray=(3, 2),
            )
        )
        low, high = y_of(row.ci_low), y_of(row.ci_high)
        drawing.add(Line(centre, low, centre, high, strokeColor=charts.BLACK, strokeWidth=0.9))
        for y in (low, high):
            drawing.add(Line(centre - 4, y, centre + 4, y, strokeColor=charts.BLACK, strokeWidth=0.9))
        drawing.add(
            charts._text(
                centre, high + 3, f"{row.detection_pct:.1f} %", size=charts.SMALL_SIZE, bold=True, anchor="middle"
            )
        )
        name = t("all sessions") if is_pooled else row.session
        drawing.add(charts._text(centre, y0 - 10, charts.fit_text(name, slot - 4), bold=is_pooled, anchor="middle"))
        drawing.add(
            charts._text(
                centre, y0 - 19, f"n = {row.votes}", size=charts.SMALL_SIZE, colour=charts.GREY, anchor="middle"
            )
        )
    charts._detection_legend(drawing, x0, 6, None)
    return drawing


# ------------------------------------------------------------------------------ CogME profiles


def _group_styles(order: Sequence[str], by: str) -> dict[str, charts.PlayerStyle]:
    """Stages in the human colours; programs in the AI's (dashed, square-marked), then, beyond its two
    colours, in the other palette colours, square-marked too, so each program stays apart."""
    if by == "stage":
        return charts.player_styles((label, "human") for label in order)
    colours = charts.AI_COLOURS + charts.HUMAN_COLOURS
    dashes = (charts.AI_DASH, charts.HUMAN_REPEAT_DASH)  # a second round of the colours is dotted
    return {
        label: charts.PlayerStyle(colours[index % len(colours)], True, dashes[index // len(colours) % len(dashes)], 2.0)
        for index, label in enumerate(order)
    }


def _profiles_section(
    elements: pd.DataFrame, groups: pd.DataFrame, by: str, order: list[str], look: _Look
) -> list[Flowable]:
    """One group kind (stages or programs): the groups' overall accuracy per session and pooled, the pooled
    radars overlaid (a polygon per group), and the per-element counts behind them."""
    width = _frame_width()
    heading = t("CogME profiles by developmental stage") if by == "stage" else t("CogME profiles by AI program")
    story: list[Flowable] = [PageBreak(), look.para(heading, "h1")]
    if not order:
        return story + _nothing(look, t("No answers to profile."))
    story.append(
        look.para(
            t(
                "Accuracy = correct / attempts, where an attempt is one answer (no answer counts as wrong) to a "
                "question tagged with the element. Elements are pooled, not questions: each answer counts under its "
                "own session's tags, so sessions with other banks add up. The radars plot accuracy, unweighted: the "
                "sessions' own reports may score with a weighted method."
            )
            if by == "stage"
            else t(
                "AI answers grouped by the program that gave them (from each answer's provenance), whichever AI "
                "player they answered for. Accuracy = correct / attempts; elements pooled over the sessions, each "
                "answer under its own session's tags. The radars plot accuracy, unweighted: the sessions' own "
                "reports may score with a weighted method."
            )
        )
    )
    by_group = groups.assign(rank=groups[by].map({label: index for index, label in enumerate(order)}))
    by_group = by_group.sort_values("rank", kind="stable")
    starts = _block_starts(list(by_group[by]))
    rows = [
        [
            _label(row[by]) if start else "",
            _session_label(row["session"]),
            str(row["players"]),
            str(row["attempts"]),
            str(row["correct"]),
            _number(row["accuracy_pct"]),
        ]
        for row, start in zip(by_group.to_dict("records"), starts)
    ]
    story.append(
        _table(
            look,
            [
                _Column(t("Stage") if by == "stage" else t("Program"), 0.3),
                _Column(t("Session"), 0.14),
                _Column(t("Players"), 0.12, True),
                _Column(t("Attempts"), 0.14, True),
                _Column(t("Correct"), 0.14, True),
                _Column(t("Accuracy %"), 0.16, True),
            ],
            rows,
            width,
            block_starts=starts,
        )
    )
    pooled = elements[elements["session"] == ALL]
    styles = _group_styles(order, by)
    radars = [_module_radar(pooled, module, by, order, styles, width / 2) for module in Module]
    radars = [radar for radar in radars if radar is not None]
    key = [
        charts.legend_chart([_plain_label(label) for label in order], _renamed(styles), width=width / 2 - 30),
        Spacer(1, 8),
        look.para(
            t(
                "Accuracy % per element, all sessions pooled; rings at 0, 25, 50, 75 and 100 %; n = attempts of "
                "all the groups on the element."
            ),
            "caption",
        ),
    ]
    story += [Spacer(1, 10), _FitOnPage(_radar_grid(radars, key, width), min_scale=RADAR_MIN_SCALE)]
    return story + _element_counts(pooled, by, order, look, width)


def _plain_label(label: str) -> str:
    """A group label as drawn in a chart (plain text: charts escape nothing): ours translated."""
    return t(label) if label in OUR_LABELS else label


def _renamed(styles: dict[str, charts.PlayerStyle]) -> dict[str, charts.PlayerStyle]:
    return {_plain_label(label): style for label, style in styles.items()}


def _module_radar(
    pooled: pd.DataFrame, module: Module, by: str, order: list[str], styles: dict, width: float
) -> Drawing | None:
    """The radar of one module: one polygon per group (its pooled accuracy), None when no question carried it."""
    rows = pooled[pooled["module"] == module.value]
    if rows.empty:
        return None
    axes = [element for element in all_elements(module) if element in set(rows["element"])]
    accuracy = rows.set_index([by, "element"])["accuracy_pct"]
    attempts = rows.groupby("element")["attempts"].sum()
    series = [
        charts.RadarSeries(_plain_label(label), [accuracy.get((label, axis)) for axis in axes], styles[label])
        for label in order
        if label in set(rows[by])
    ]
    return charts.radar_chart(
        module.value.upper(),
        axes,
        series,
        width=width,
        height=225,
        legend=False,
        axis_notes=[f"n = {int(attempts[axis])}" for axis in axes],
    )


def _element_counts(pooled: pd.DataFrame, by: str, order: list[str], look: _Look, width: float) -> list[Flowable]:
    """The numbers behind the radars: per element and group, accuracy and correct / attempts (all sessions);
    a table per :data:`GROUPS_PER_TABLE` groups."""
    cells = pooled.set_index([by, "element"])
    elements = pooled.drop_duplicates("element")
    elements = elements.assign(rank=elements["element"].map(_ELEMENT_RANK)).sort_values("rank")
    starts = _block_starts(list(elements["module"]))
    story: list[Flowable] = [look.para(t("Per element, all sessions"), "h2")]
    for first in range(0, len(order), GROUPS_PER_TABLE):
        block = order[first : first + GROUPS_PER_TABLE]
        rows = [
            [element.module.upper() if start else "", markup(element.element)]
            + [_element_cell(cells, label, element.element) for label in block]
            for element, start in zip(elements.itertuples(index=False), starts)
        ]
        each = 0.72 / len(block)
        columns = [_Column(t("Module"), 0.12), _Column(t("Element"), 0.16)]
        story += [
            _table(
                look,
                columns + [_Column(_label(label), each, True) for label in block],
                rows,
                width,
                block_starts=starts,
            ),
            Spacer(1, 6),
        ]
    return story + [look.para(t("Accuracy % (correct / attempts); – where the group had no attempt."), "caption")]


def _element_cell(cells: pd.DataFrame, label: str, element: str) -> str:
    if (label, element) not in cells.index:
        return "–"
    cell = cells.loc[(label, element)]
    return f"{_number(cell['accuracy_pct'])} ({cell['correct']}/{cell['attempts']})"


# ------------------------------------------------------------------------- jurors, sheets, bank


def _juror_section(groups: pd.DataFrame, look: _Look) -> list[Flowable]:
    """Detection per juror facet label: each session's, and pooled over the sessions."""
    width = _frame_width()
    story: list[Flowable] = [PageBreak(), look.para(t("Juror groups across sessions"), "h1")]
    if groups.empty:
        return story + _nothing(look, t("No juror carried a group label."))
    label_keys = list(zip(groups["facet"], groups["group"]))
    facet_starts = _block_starts(list(groups["facet"]))
    label_starts = _block_starts(label_keys)
    rows = [
        [
            t(FACET_TITLES[row.facet]) if facet_start else "",
            _facet_value(row.facet, row.group) if label_start else "",
            _session_label(row.session),
            str(row.jurors),
            str(row.votes),
            str(row.ai_votes),
            _number(row.detection_pct),
            _interval(row.ci_low, row.ci_high),
        ]
        for row, facet_start, label_start in zip(groups.itertuples(index=False), facet_starts, label_starts)
    ]
    return story + [
        _table(
            look,
            [
                _Column(t("Facet"), 0.13),
                _Column(t("Group"), 0.17),
                _Column(t("Session"), 0.12),
                _Column(t("Jurors"), 0.1, True),
                _Column(t("Votes"), 0.1, True),
                _Column(t("AI votes"), 0.11, True),
                _Column(t("Detection %"), 0.13, True),
                _Column(t("95 % CI"), 0.14, True),
            ],
            rows,
            width,
            block_starts=label_starts,
        ),
        look.para(
            t(
                "Per label of each juror facet: the jurors of each session carrying it and their cast votes (all "
                "rounds), then all sessions together (a juror belongs to one session). Detection = share of those "
                "votes naming an AI player, with its 95 % Wilson interval."
            ),
            "caption",
        ),
    ]


def _exposure_section(exposure: pd.DataFrame, look: _Look) -> list[Flowable]:
    """The judgment sheets' marks per question and session; a question of several sessions pooled."""
    width = _frame_width()
    story: list[Flowable] = [look.para(t("Judgment sheets: exposure per question"), "h1")]
    if exposure.empty:
        return story + _nothing(look, t("No judgment sheet was filled in."))
    keys = list(zip(exposure["qid"], exposure["question"].fillna("")))
    starts = _block_starts(keys)
    rows = [
        [
            f"<b>{markup(row.qid)}</b> {markup(row.question)}" if start else "",
            _session_label(row.session),
            str(row.marks),
            str(row.ai_marks),
            _number(row.exposure_pct),
            _number(row.chance_pct),
        ]
        for row, start in zip(exposure.itertuples(index=False), starts)
    ]
    return story + [
        _table(
            look,
            [
                _Column(t("Question"), 0.4),
                _Column(t("Session"), 0.12),
                _Column(t("Marks"), 0.1, True),
                _Column(t("Marks on the AI"), 0.14, True),
                _Column(t("Exposure %"), 0.12, True),
                _Column(t("Chance %"), 0.12, True),
            ],
            rows,
            width,
            block_starts=starts,
        ),
        look.para(
            t(
                "Exposure = share of the question's \"looks like the AI\" marks that fell on an AI player's answer; "
                "chance = the share blind marks would give it (its answers among those the jury read). A question "
                "asked in several sessions (same qid and text) gets a row for all of them, its chance weighted by "
                "each session's marks."
            ),
            "caption",
        ),
    ]


def _shared_section(shared: pd.DataFrame, collisions: pd.DataFrame, look: _Look) -> list[Flowable]:
    """The questions of several sessions, and the qids that mean different questions in different sessions."""
    width = _frame_width()
    story: list[Flowable] = [look.para(t("Shared questions"), "h1")]
    if shared.empty:
        story += _nothing(look, t("No question is asked in more than one session."))
    else:
        story += [
            _table(
                look,
                [_Column("qid", 0.1), _Column(t("Question"), 0.65), _Column(t("Sessions"), 0.25)],
                [
                    [markup(row.qid), markup(row.question), markup(row.session_codes)]
                    for row in shared.itertuples(index=False)
                ],
                width,
                zebra=True,
            ),
            look.para(t("A question is shared when its qid and its text are the same in both sessions."), "caption"),
        ]
    if not collisions.empty:
        starts = _block_starts(list(collisions["qid"]))
        story += [
            look.para(t("The same qid, another question"), "h2"),
            _table(
                look,
                [_Column("qid", 0.1), _Column(t("Session"), 0.15), _Column(t("Question"), 0.75)],
                [
                    [markup(row.qid) if start else "", markup(row.session), markup(row.question)]
                    for row, start in zip(collisions.itertuples(index=False), starts)
                ],
                width,
                block_starts=starts,
            ),
            look.para(
                t("These qids name different questions in different sessions (other banks): they are never pooled."),
                "caption",
            ),
        ]
    return story
