"""A study: several VTT sessions read together, each keeping its own design, question bank and pass rule.

Every table of :class:`StudyData` is the long form of one session's table with a ``session`` column (the join
code) in front; the pooled rows of every result carry :data:`ALL` there.  Pooling never pretends the sessions are
one: a juror is ``(session, juror)``, a player ``(session, player)`` and a question ``(session, qid)`` (two
sessions share a question only when qid and text agree).  Profiles pool CogME elements, not questions, with
accuracy only (a weighted score has no meaning across banks; answers to a question outside their session's set are
ignored).  Detection, verdicts and p-values are each session's own :func:`analysis.votes.vote_stats`; the pooled
test is against the mixture of the sessions' chance levels.  What each table holds: docs/studies.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy.special import xlogy
from scipy.stats import binom, chi2

from .cogme import check_correct
from .composition import composition as question_set_composition
from .tables import (
    JUROR_FACETS,
    JURY_VOTE_COLUMNS,
    PLAYER_KINDS,
    QUESTION_COLUMNS,
    VOTE_COLUMNS,
    require_columns,
    tag_table,
)
from .taxonomy import element_order
from .votes import VoteStats, exposure, percent, vote_stats, wilson_interval

ALL = "all"  # the session label of pooled rows
NO_STAGE = "no stage"  # humans without a developmental stage
NO_PROGRAM = "no program recorded"  # AI answers without provenance
MONTE_CARLO_DRAWS = 10_000
MONTE_CARLO_SEED = 1

SESSION_COLUMNS = ("session", "name", "design_hash", "bank", "pass_rule", "alpha", "threshold_pct", "rounds")
PLAYER_COLUMNS = ("session", "player", "kind", "stage", "age", "program")
STUDY_ANSWER_COLUMNS = ("session", "player", "qid", "correct", "kind", "program")
SHEET_COLUMNS = ("session", "juror", "qid", "player", "looks_like_ai")

DETECTION_COLUMNS = (
    "session",
    "votes",
    "ai_votes",
    "detection_pct",
    "ci_low",
    "ci_high",
    "chance_pct",
    "p_value",
    "test",
)
VERDICT_COLUMNS = (
    "session",
    "pass_rule",
    "alpha",
    "threshold_pct",
    "rounds",
    "rounds_with_votes",
    "rounds_passed",
    "mean_detection_pct",
    "verdict",
)
STUDY_CSV_FILES = (
    "sessions.csv",
    "composition_players.csv",
    "composition_jurors.csv",
    "composition_questions.csv",
    "detection.csv",
    "sessions_differ.csv",
    "verdicts.csv",
    "profiles_by_stage.csv",
    "accuracy_by_stage.csv",
    "profiles_by_program.csv",
    "accuracy_by_program.csv",
    "juror_groups.csv",
    "exposure.csv",
    "shared_questions.csv",
    "qid_collisions.csv",
)

ELEMENT_RANK = {element: rank for rank, (_, element) in enumerate(element_order())}  # names unique across modules


@dataclass(frozen=True)
class StudyData:
    """The sessions of a study as long tables, each with ``session`` (the join code) in front.

    ``sessions``:  session, name, design_hash, bank, pass_rule, alpha, threshold_pct, rounds
    ``players``:   session, player, kind ("human" | "ai"), stage (str | None), age (Int64 | NA),
                   program (AI players: the label of the program(s) that answered for it; None for humans)
    ``questions``: session + :data:`analysis.tables.QUESTION_COLUMNS` (qid unique within a session)
    ``answers``:   session, player, qid, correct (bool), kind, program: one row per question put to a
                   player who took part (no answer = wrong), ungraded open answers left out; ``program``
                   is the answer's own program label (AI rows), None for humans
    ``votes``:     session + :data:`analysis.tables.VOTE_COLUMNS` + optional juror facets
    ``sheet``:     session, juror, qid, player, looks_like_ai (bool)
    ``jury_votes`` (optional): session + :data:`analysis.tables.JURY_VOTE_COLUMNS`: every jury's votes (live,
                   displaced, ai:<model>), compared by :mod:`analysis.study_juries`; ``votes`` stays the live jury's;
                   an optional bool ``cut_short`` marks a round cut short in the live session (never pooled)
    ``aliases`` (optional): session, round, player, alias: who played each round under which alias
    """

    name: str
    sessions: pd.DataFrame
    players: pd.DataFrame
    questions: pd.DataFrame
    answers: pd.DataFrame
    votes: pd.DataFrame
    sheet: pd.DataFrame
    jury_votes: pd.DataFrame | None = None
    aliases: pd.DataFrame | None = None

    def __post_init__(self) -> None:
        for table, columns, name in (
            (self.sessions, SESSION_COLUMNS, "sessions"),
            (self.players, PLAYER_COLUMNS, "players"),
            (self.questions, ("session", *QUESTION_COLUMNS), "questions"),
            (self.answers, STUDY_ANSWER_COLUMNS, "answers"),
            (self.votes, ("session", *VOTE_COLUMNS), "votes"),
            (self.sheet, SHEET_COLUMNS, "sheet"),
            *(
                [(self.jury_votes, ("session", *JURY_VOTE_COLUMNS), "jury_votes")]
                if self.jury_votes is not None
                else []
            ),
            *([(self.aliases, ("session", "round", "player", "alias"), "aliases")] if self.aliases is not None else []),
        ):
            require_columns(table, columns, name)
        codes = self.sessions["session"]
        if not codes.is_unique:
            raise ValueError(f"session(s) listed twice: {', '.join(map(str, codes[codes.duplicated()].unique()))}")
        for table, name in (
            (self.players, "players"),
            (self.questions, "questions"),
            (self.answers, "answers"),
            (self.votes, "votes"),
            (self.sheet, "sheet"),
        ):
            unknown = set(table["session"]) - set(codes)
            if unknown:
                raise ValueError(f"{name} name session(s) not in the study: {', '.join(map(str, sorted(unknown)))}")
        roster = pd.MultiIndex.from_frame(self.players[["session", "player"]])
        strangers = ~pd.MultiIndex.from_frame(self.answers[["session", "player"]]).isin(roster)
        if strangers.any():
            first = self.answers[strangers].iloc[0]
            raise ValueError(f"answers of {first['player']!r}, who is not a player of session {first['session']!r}")
        twice = self.questions.duplicated(["session", "qid"])
        if twice.any():
            first = self.questions[twice].iloc[0]
            raise ValueError(f"question {first['qid']!r} is listed twice in session {first['session']!r}")

    @property
    def codes(self) -> list[str]:
        """The sessions' join codes in the study's order."""
        return list(self.sessions["session"])

    def of(self, table: pd.DataFrame, session: str) -> pd.DataFrame:
        """The rows of one session of ``table``, without the ``session`` column."""
        return table[table["session"] == session].drop(columns="session").reset_index(drop=True)

    def roster(self, session: str) -> pd.DataFrame:
        """The session's players as ``analysis.votes`` reads them: ``name, kind``."""
        return self.of(self.players, session)[["player", "kind"]].rename(columns={"player": "name"})


# ------------------------------------------------------------------------------------- sessions


def session_overview(data: StudyData) -> pd.DataFrame:
    """Per session its design facts and head counts: the sessions table plus players, humans,
    ai_players, jurors (distinct live jurors in the votes), displaced_jurors and ai_jurors (distinct jurors of the
    juries that judged the session afterwards, in ``jury_votes``), questions and untagged (questions without a tag)."""
    rows = []
    for code in data.codes:
        players = data.of(data.players, code)
        questions = data.of(data.questions, code)
        later = data.of(data.jury_votes, code) if data.jury_votes is not None else pd.DataFrame(columns=["jury"])
        ai_jury = later["jury"].astype(str).str.startswith("ai:")
        rows.append(
            {
                "players": len(players),
                "humans": int((players["kind"] == "human").sum()),
                "ai_players": int((players["kind"] == "ai").sum()),
                "jurors": data.of(data.votes, code)["juror"].nunique(),
                "displaced_jurors": later.loc[later["jury"] == "displaced", "juror"].nunique() if len(later) else 0,
                "ai_jurors": later.loc[ai_jury, "juror"].nunique() if len(later) else 0,
                "questions": len(questions),
                "untagged": len(question_set_composition(questions).untagged),
            }
        )
    return pd.concat([data.sessions[list(SESSION_COLUMNS)].reset_index(drop=True), pd.DataFrame(rows)], axis=1)


# ---------------------------------------------------------------------------------- composition


@dataclass(frozen=True)
class StudyComposition:
    """What each session is made of (long tables; rows with session :data:`ALL` are the study's totals).

    ``players``:   session, kind, stage, program, players (stage for humans, program for AI players)
    ``jurors``:    session, facet, group, jurors (jurors with each facet label, as ``vote_stats`` reads them)
    ``questions``: session, module, element, questions (a question asked in two sessions counts twice)
    """

    players: pd.DataFrame
    jurors: pd.DataFrame
    questions: pd.DataFrame


def composition(data: StudyData, stats: dict[str, VoteStats] | None = None) -> StudyComposition:
    """Players by kind and stage (humans) or program (AI), jurors by facet label, questions by CogME element;
    per session and for the whole study.  ``stats``: :func:`session_vote_stats`, computed when not given."""
    stats = session_vote_stats(data) if stats is None else stats
    human = data.players["kind"] == "human"
    players = data.players.assign(
        stage=np.where(human, data.players["stage"].fillna(NO_STAGE), None),
        program=np.where(human, None, data.players["program"].fillna(NO_PROGRAM)),
    )
    keys = ["kind", "stage", "program"]
    per_session = players.groupby(["session", *keys], dropna=False, sort=False).size().rename("players").reset_index()
    player_table = _sorted(
        _with_total(per_session, keys, ["players"]),
        data,
        ["session", *keys],
        stage=_stage_order(data),
        program=_program_order(players["program"].dropna()),
    )

    juror_blocks = [
        stats[code].groups[["facet", "group", "jurors"]].assign(session=code) for code in data.codes if code in stats
    ]
    jurors = _concat(juror_blocks, ["session", "facet", "group", "jurors"])
    juror_table = _sorted(_with_total(jurors, ["facet", "group"], ["jurors"]), data, ["session", "facet", "group"])

    question_blocks = [
        question_set_composition(data.of(data.questions, code)).elements.assign(session=code) for code in data.codes
    ]
    questions = _concat(question_blocks, ["session", "module", "element", "questions"])
    question_table = _sorted(_with_total(questions, ["module", "element"], ["questions"]), data, ["session", "element"])
    return StudyComposition(
        players=player_table.astype({"players": int}),
        jurors=juror_table[["session", "facet", "group", "jurors"]].astype({"jurors": int}),
        questions=question_table[["session", "module", "element", "questions"]].astype({"questions": int}),
    )


# ------------------------------------------------------------------------------ CogME profiles


@dataclass(frozen=True)
class GroupProfiles:
    """CogME accuracy of groups of players (stages of humans, or programs of AI answers).

    ``elements``: session, <by>, module, element, attempts, correct, accuracy_pct
    ``groups``:   session, <by>, players, attempts, correct, accuracy_pct (all questions, untagged included)
    ``order``:    the groups in report order
    """

    by: str
    elements: pd.DataFrame
    groups: pd.DataFrame
    order: list[str]


def group_profiles(data: StudyData, by: Literal["stage", "program"]) -> GroupProfiles:
    """Per session and pooled (:data:`ALL`), each group's attempts, correct answers and accuracy per element.

    ``by="stage"``: human answers grouped by their player's developmental stage (:data:`NO_STAGE` without
    one), stages in order of their players' mean age (youngest first; stages without ages last).
    ``by="program"``: AI answers grouped by the answer's own ``program`` (:data:`NO_PROGRAM` without one),
    alphabetically.  Attempts are answer rows joined to their own session's tags and summed over sessions
    (elements pooled, not questions); a player (``session, player``) counts once per group.
    """
    if by not in ("stage", "program"):
        raise ValueError(f"group profiles are by 'stage' or 'program', not {by!r}")
    answers = _answers_put(data)
    if by == "stage":
        answers = answers[answers["kind"] == "human"].drop(columns="program")
        stages = data.players[["session", "player", "stage"]]
        answers = answers.merge(stages, on=["session", "player"], how="left")
        answers = answers.assign(stage=answers["stage"].fillna(NO_STAGE))
        order = [stage for stage in _stage_order(data) if stage in set(answers["stage"])]
    else:
        answers = answers[answers["kind"] == "ai"]
        answers = answers.assign(program=answers["program"].fillna(NO_PROGRAM))
        order = _program_order(answers["program"])

    tagged = answers.merge(_tags(data), on=["session", "qid"])
    elements = _with_total(
        tagged.groupby(["session", by, "module", "element"], sort=False)
        .agg(attempts=("correct", "size"), correct=("correct", "sum"))
        .reset_index(),
        [by, "module", "element"],
        ["attempts", "correct"],
    )
    tallies = {"players": ("player", "nunique"), "attempts": ("correct", "size"), "correct": ("correct", "sum")}
    per_session = answers.groupby(["session", by], sort=False).agg(**tallies).reset_index()
    # pooled players: a player is (session, player), so the sum of the sessions' distinct players
    groups = _with_total(per_session, [by], ["players", "attempts", "correct"])

    def finished(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
        table = table.astype({"attempts": int, "correct": int})
        table = table.assign(accuracy_pct=percent(table["correct"], table["attempts"]))
        return _sorted(table, data, keys, **{by: order})

    return GroupProfiles(
        by=by,
        elements=finished(elements, ["session", by, "element"]),
        groups=finished(groups, ["session", by]),
        order=order,
    )


def _answers_put(data: StudyData) -> pd.DataFrame:
    """The answers to questions of their own session's set, ``correct`` checked and made bool."""
    answers = data.answers
    if answers["correct"].isna().any():
        raise ValueError(f"{int(answers['correct'].isna().sum())} answer(s) are not graded (correct is missing)")
    check_correct(answers["correct"])
    answers = answers.assign(qid=answers["qid"].astype(str), correct=answers["correct"].astype(bool))
    asked = data.questions[["session", "qid"]].astype({"qid": str})
    return answers.merge(asked, on=["session", "qid"])


def _tags(data: StudyData) -> pd.DataFrame:
    """``session, qid, module, element``: every session's tags, from its own questions."""
    blocks = [tag_table(data.of(data.questions, code)).assign(session=code) for code in data.codes]
    return _concat(blocks, ["session", "qid", "module", "element"])


def _stage_order(data: StudyData) -> list[str]:
    """Stages by their human players' mean age (youngest first), stages without ages after them by name."""
    humans = data.players[data.players["kind"] == "human"]
    stages = humans.assign(
        stage=humans["stage"].fillna(NO_STAGE), age=pd.to_numeric(humans["age"], errors="coerce").astype(float)
    )
    mean_age = stages.groupby("stage")["age"].mean()
    return sorted(mean_age.index, key=lambda stage: (pd.isna(mean_age[stage]), mean_age.fillna(0)[stage], stage))


def _program_order(labels: pd.Series) -> list[str]:
    """Program labels alphabetically, :data:`NO_PROGRAM` last."""
    found = set(labels)
    return sorted(found - {NO_PROGRAM}) + ([NO_PROGRAM] if NO_PROGRAM in found else [])


# ----------------------------------------------------------------------------------- detection


def session_vote_stats(data: StudyData) -> dict[str, VoteStats]:
    """:func:`analysis.votes.vote_stats` of every session with votes, under the session's own pass rule."""
    found = {}
    for session in data.sessions.itertuples(index=False):
        votes = data.of(data.votes, session.session)
        if len(votes):
            found[session.session] = vote_stats(
                votes, data.roster(session.session), session.pass_rule, session.alpha, session.threshold_pct
            )
    return found


def detection(data: StudyData, stats: dict[str, VoteStats] | None = None) -> pd.DataFrame:
    """Per session and pooled: ``session, votes, ai_votes, detection_pct, ci_low, ci_high, chance_pct,
    p_value, test``.

    A session's row is its ``vote_stats`` summary (chance = AI players / players; p: exact one-sided
    binomial against it).  The pooled row counts every cast vote; its chance is the vote-weighted mean of
    the sessions' chance levels and its p the exact Poisson-binomial tail (:func:`pooled_binomial_p`).
    """
    stats = session_vote_stats(data) if stats is None else stats
    rows = []
    for code in data.codes:
        session = stats.get(code)
        if session is None or not session.summary["overall_votes"]:
            rows.append({"session": code, "votes": 0, "ai_votes": 0})
            continue
        summary = session.summary
        rows.append(
            {
                "session": code,
                "votes": summary["overall_votes"],
                "ai_votes": int(session.rounds["ai_votes"].sum()),
                "detection_pct": summary["overall_detection_pct"],
                "ci_low": summary["overall_ci"][0],
                "ci_high": summary["overall_ci"][1],
                "chance_pct": float(session.rounds["chance_pct"].iloc[0]),
                "p_value": summary["overall_p_value"],
                "test": "exact binomial",
            }
        )
    table = pd.DataFrame(rows, columns=list(DETECTION_COLUMNS))
    voted = table[table["votes"] > 0]
    votes, hits = int(voted["votes"].sum()), int(voted["ai_votes"].sum())
    low, high = wilson_interval(np.array([hits]), np.array([votes]))
    chances = voted["chance_pct"].to_numpy(dtype=float) / 100
    pooled = {
        "session": ALL,
        "votes": votes,
        "ai_votes": hits,
        "detection_pct": percent(hits, votes).item(),
        "ci_low": low[0],
        "ci_high": high[0],
        "chance_pct": percent((voted["votes"] * chances).sum(), votes).item(),
        "p_value": pooled_binomial_p(hits, voted["votes"].to_numpy(), chances),
        "test": "exact Poisson-binomial",
    }
    return pd.concat([table, pd.DataFrame([pooled])], ignore_index=True).astype({"votes": int, "ai_votes": int})


def pooled_binomial_p(hits: int, trials: Sequence[int], chances: Sequence[float]) -> float:
    """P(X >= hits) for X the sum of independent Binomial(trials[i], chances[i]) (NaN without trials).

    The distribution of X (Poisson-binomial over blocks of equal p) is the convolution of the blocks'
    binomial pmfs, summed exactly rather than approximated; with one common chance it is the binomial tail.
    """
    trials = [int(n) for n in trials]
    if not sum(trials):
        return float("nan")
    if hits <= 0:
        return 1.0
    pmf = np.ones(1)
    for count, chance in zip(trials, chances):
        pmf = np.convolve(pmf, binom.pmf(np.arange(count + 1), count, chance))
    return float(min(pmf[hits:].sum(), 1.0))


def g_statistic(hits: np.ndarray, votes: np.ndarray) -> np.ndarray:
    """The G statistic 2 sum O ln(O / E) of the sessions x (hit, miss) table, per row of ``hits``.

    ``hits``: one row per table (a 1-d array is one table), one column per session; ``votes``: the
    sessions' cast votes.  E is the table's expected count under one common rate (0 ln 0 = 0).
    """
    hits = np.atleast_2d(np.asarray(hits, dtype=float))
    votes = np.asarray(votes, dtype=float)
    misses = votes - hits
    rate = hits.sum(axis=1, keepdims=True) / votes.sum()
    observed = xlogy(hits, hits) + xlogy(misses, misses)
    expected = xlogy(hits, votes * rate) + xlogy(misses, votes * (1 - rate))
    return 2 * (observed - expected).sum(axis=1)


def sessions_differ(
    hits: Sequence[int], votes: Sequence[int], *, draws: int = MONTE_CARLO_DRAWS, seed: int = MONTE_CARLO_SEED
) -> pd.DataFrame:
    """Whether the sessions' detection rates differ: ``test, method, statistic, df, p_value, draws, seed``.

    Row ``likelihood-ratio``: the G-test of homogeneity (= the likelihood-ratio test of a logistic model with
    session as a factor against one common rate), p from chi-squared with sessions - 1 df.  Row
    ``monte-carlo``: the same G against its distribution under the common rate given the margins, drawn
    ``draws`` times by permuting the hits over all votes (multivariate hypergeometric, ``numpy`` seeded with
    ``seed``); p = (1 + draws with G >= observed) / (1 + draws).  Sessions without votes are left out; with
    fewer than two left, both p-values are NaN.
    """
    votes = np.asarray(votes, dtype=np.int64)
    hits = np.asarray(hits, dtype=np.int64)[votes > 0]
    votes = votes[votes > 0]
    observed = float(g_statistic(hits, votes)[0]) if len(votes) else float("nan")
    df = max(len(votes) - 1, 0)
    chi2_p = mc_p = float("nan")
    if df > 0:
        chi2_p = float(chi2.sf(observed, df))
        rng = np.random.default_rng(seed)
        simulated = g_statistic(rng.multivariate_hypergeometric(votes, int(hits.sum()), size=draws), votes)
        mc_p = float((1 + np.sum(simulated >= observed - 1e-9)) / (1 + draws))  # tolerance: float ties count
    return pd.DataFrame(
        [
            {
                "test": "likelihood-ratio",
                "method": "G-test of homogeneity (logistic model: session factor vs one common rate), chi-squared p",
                "statistic": observed,
                "df": df,
                "p_value": chi2_p,
                "draws": 0,
                "seed": pd.NA,
            },
            {
                "test": "monte-carlo",
                "method": "Monte-Carlo exact p of G: hits permuted over votes (margins fixed)",
                "statistic": observed,
                "df": df,
                "p_value": mc_p,
                "draws": draws,
                "seed": seed,
            },
        ]
    ).astype({"seed": "Int64"})


def verdicts(data: StudyData, stats: dict[str, VoteStats] | None = None) -> pd.DataFrame:
    """Each session judged under its own rule by ``vote_stats``: ``session, pass_rule, alpha, threshold_pct,
    rounds, rounds_with_votes, rounds_passed, mean_detection_pct, verdict`` (sessions with votes only)."""
    stats = session_vote_stats(data) if stats is None else stats
    rows = []
    for code in data.codes:
        if code not in stats:
            continue
        session, summary = stats[code], stats[code].summary
        judged = summary["rounds_with_votes"]
        rows.append(
            {
                "session": code,
                "pass_rule": session.pass_rule,
                "alpha": session.alpha,
                "threshold_pct": session.threshold_pct,
                "rounds": summary["rounds"],
                "rounds_with_votes": judged,
                "rounds_passed": summary["rounds_passed"],
                "mean_detection_pct": summary["mean_detection_pct"],
                "verdict": f"AI passed {summary['rounds_passed']} of {judged} rounds" if judged else "no votes",
            }
        )
    return pd.DataFrame(rows, columns=list(VERDICT_COLUMNS))


def juror_groups(data: StudyData, stats: dict[str, VoteStats] | None = None) -> pd.DataFrame:
    """Detection per juror facet label, per session (``vote_stats``' groups) and pooled over sessions:
    ``session, facet, group, jurors, votes, ai_votes, detection_pct, ci_low, ci_high``."""
    stats = session_vote_stats(data) if stats is None else stats
    blocks = [stats[code].groups.assign(session=code) for code in data.codes if code in stats]
    columns = ["session", "facet", "group", "jurors", "votes", "ai_votes"]
    table = _with_total(_concat(blocks, columns)[columns], ["facet", "group"], ["jurors", "votes", "ai_votes"])
    table = table.astype({"jurors": int, "votes": int, "ai_votes": int})
    low, high = wilson_interval(table["ai_votes"].to_numpy(), table["votes"].to_numpy())
    table = table.assign(detection_pct=percent(table["ai_votes"], table["votes"]), ci_low=low, ci_high=high)
    return _sorted(table, data, ["facet", "group", "session"])


# ---------------------------------------------------------------------------- questions shared


def study_exposure(data: StudyData) -> pd.DataFrame:
    """The judgment sheets' exposure per question, session by session (``analysis.votes.exposure``), and
    pooled (session :data:`ALL`) for a question in several sessions' sheets (same qid and text):
    ``session, qid, question, marks, ai_marks, exposure_pct, chance_pct``; rows of one question together.

    ``chance_pct`` is the share blind marks would give the AI: its answers among the answers the jury read, when the
    answers carry their text (an ``answer`` column), else NaN; pooled, the sessions' chance weighted by their marks
    (the AI marks blind marking would give, summed, over all marks)."""
    blocks = []
    asked = _question_keys(data)
    has_text = "answer" in data.answers.columns
    for code in data.codes:
        sheet = data.of(data.sheet, code)
        if len(sheet):
            texts = asked[asked["session"] == code].set_index("qid")["question"]
            answers = data.of(data.answers, code) if has_text else None
            per_question = exposure(sheet, data.roster(code), answers)
            if not has_text:
                per_question = per_question.assign(chance_pct=np.nan)
            blocks.append(per_question.assign(session=code, question=per_question["qid"].map(texts)))
    columns = ["session", "qid", "question", "marks", "ai_marks", "exposure_pct", "chance_pct"]
    table = _concat(blocks, columns)[columns]
    question = table.groupby(["qid", "question"], sort=False, dropna=False)  # a question is its qid and its text
    several = table[question["session"].transform("size") > 1]
    blind = several.assign(blind_ai_marks=several["marks"] * several["chance_pct"] / 100)
    pooled = (
        blind.groupby(["qid", "question"], sort=False, dropna=False)[["marks", "ai_marks", "blind_ai_marks"]]
        .sum(min_count=1)
        .reset_index()
        .assign(session=ALL)
    )
    pooled = pooled.assign(
        exposure_pct=percent(pooled["ai_marks"], pooled["marks"]),
        chance_pct=percent(pooled["blind_ai_marks"], pooled["marks"]),
    )[columns]
    table = pd.concat([table, pooled], ignore_index=True)
    first_seen = table.groupby(["qid", "question"], sort=False, dropna=False).ngroup()  # numbered as first seen
    table = table.iloc[first_seen.argsort(kind="stable")].reset_index(drop=True)
    return table.astype({"marks": int, "ai_marks": int})


def shared_questions(data: StudyData) -> pd.DataFrame:
    """The questions of more than one session (same qid and same text): ``qid, question, sessions, session_codes``
    (codes in the study's order, comma-separated); in order of first appearance."""
    asked = _question_keys(data)
    shared = asked.groupby(["qid", "question"], sort=False)["session"].agg(list).reset_index()
    shared = shared[shared["session"].map(len) > 1]
    return pd.DataFrame(
        {
            "qid": shared["qid"].to_numpy(),
            "question": shared["question"].to_numpy(),
            "sessions": shared["session"].map(len).to_numpy(dtype=int),
            "session_codes": shared["session"].map(", ".join).to_numpy(),
        }
    )


def qid_collisions(data: StudyData) -> pd.DataFrame:
    """The qids that name different questions (different texts) in different sessions: ``qid, session,
    question``, one row per session asking it; these are never pooled."""
    asked = _question_keys(data)
    texts = asked.groupby("qid")["question"].nunique()
    return asked[asked["qid"].map(texts) > 1].sort_values("qid", kind="stable", ignore_index=True)[
        ["qid", "session", "question"]
    ]


def _question_keys(data: StudyData) -> pd.DataFrame:
    """``session, qid, question``: every question of every session, qid as text, the text trimmed."""
    return pd.DataFrame(
        {
            "session": data.questions["session"].to_numpy(),
            "qid": data.questions["qid"].astype(str).to_numpy(),
            "question": data.questions["question"].fillna("").astype(str).str.strip().to_numpy(),
        }
    )


# -------------------------------------------------------------------------------- all the tables


def study_tables(
    data: StudyData, *, draws: int = MONTE_CARLO_DRAWS, seed: int = MONTE_CARLO_SEED
) -> dict[str, pd.DataFrame]:
    """Every table of the study report, by CSV file name (see :data:`STUDY_CSV_FILES`)."""
    stats = session_vote_stats(data)
    made = composition(data, stats)
    stages, programs = group_profiles(data, "stage"), group_profiles(data, "program")
    detected = detection(data, stats)
    voted = detected[(detected["session"] != ALL) & (detected["votes"] > 0)]
    tables = {
        "sessions.csv": session_overview(data),
        "composition_players.csv": made.players,
        "composition_jurors.csv": made.jurors,
        "composition_questions.csv": made.questions,
        "detection.csv": detected,
        "sessions_differ.csv": sessions_differ(voted["ai_votes"], voted["votes"], draws=draws, seed=seed),
        "verdicts.csv": verdicts(data, stats),
        "profiles_by_stage.csv": stages.elements,
        "accuracy_by_stage.csv": stages.groups,
        "profiles_by_program.csv": programs.elements,
        "accuracy_by_program.csv": programs.groups,
        "juror_groups.csv": juror_groups(data, stats),
        "exposure.csv": study_exposure(data),
        "shared_questions.csv": shared_questions(data),
        "qid_collisions.csv": qid_collisions(data),
    }
    return tables


# ------------------------------------------------------------------------------------ helpers


def _concat(blocks: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    """The blocks one after another; an empty table with ``columns`` when there are none."""
    return pd.concat(blocks, ignore_index=True) if blocks else pd.DataFrame(columns=columns)


def _with_total(per_session: pd.DataFrame, keys: list[str], counts: list[str]) -> pd.DataFrame:
    """``per_session`` followed by the study's totals: ``counts`` summed over sessions per ``keys`` (session
    :data:`ALL`); keys that are None stay one group of their own."""
    total = per_session.groupby(keys, dropna=False, sort=False)[counts].sum().reset_index().assign(session=ALL)
    return pd.concat([per_session, total[per_session.columns]], ignore_index=True)


def _sorted(table: pd.DataFrame, data: StudyData, keys: list[str], **orders: list[str]) -> pd.DataFrame:
    """``table`` sorted by ``keys`` in report order: sessions in the study's order then :data:`ALL`, kinds
    human then AI, facets in :data:`analysis.tables.JUROR_FACETS` order, elements in taxonomy order, the
    columns named in ``orders`` in the order given; other keys as they sort; missing values last."""
    orders = {"session": [*data.codes, ALL], "kind": list(PLAYER_KINDS), "facet": list(JUROR_FACETS), **orders}
    ranks = pd.DataFrame(index=table.index)
    for key in keys:
        if key == "element":
            ranks[key] = table[key].map(ELEMENT_RANK)
        elif key in orders:
            ranks[key] = table[key].map({label: index for index, label in enumerate(orders[key])})
        else:
            ranks[key] = table[key]
    return table.loc[ranks.sort_values(keys, kind="stable", na_position="last").index].reset_index(drop=True)
