"""The analysis tests' fixtures: the PDF reports' case-study session, its results, and its reports written once per
module (``tests/support/reports.py`` builds them)."""

from __future__ import annotations

import pytest

from analysis.cogme import profiles
from analysis.session_report import write_reports
from analysis.votes import vote_stats
from tests.support.reports import PLAYERS, case_study_session


@pytest.fixture(scope="module")
def session():
    return case_study_session()


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
