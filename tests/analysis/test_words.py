"""The reports' own words (analysis/words.py): every English template has its Korean one."""

from __future__ import annotations

from pathlib import Path

import pytest

import analysis
from analysis.session_report import DEFAULT_TITLE
from analysis.session_report.judge import MEASURE_NAMES, UNDEFINED_REASONS
from analysis.session_report.jurors import FACET_TITLES, facet_label
from analysis.session_report.jury_votes import ai_rule_text, rule_text
from analysis.session_report.profiles import METHOD_NOTES
from analysis.words import KO, report_language, t
from tests.support.templates import t_templates

ANALYSIS = Path(analysis.__file__).parent


@pytest.mark.parametrize(
    "module",
    [
        "session_report",
        "study_report",
        "pdf",
        "charts.py",
        "jury_charts.py",
        "../vtt/reports/session.py",
        "../vtt/reports/session_info.py",
    ],
)
def test_every_template_of_the_pdfs_has_a_korean_one(module):
    templates = t_templates(ANALYSIS / module)
    assert templates
    assert [text for text in templates if text not in KO] == []


def test_the_words_kept_in_tables_are_translated_too():
    kept = [
        DEFAULT_TITLE,
        *METHOD_NOTES.values(),
        *FACET_TITLES.values(),
        *MEASURE_NAMES.values(),
        *UNDEFINED_REASONS.values(),
    ]
    assert [text for text in kept if text not in KO] == []
    with report_language("ko"):  # a juror's expertise is the program's word; the other labels are the host's
        assert [facet_label("expert", v) for v in ("expert", "non-expert")] == ["전문가", "비전문가"]
        assert facet_label("sex", "female") == "female"


def test_placeholders_match_and_korean_is_used_only_when_asked():
    for english, korean in KO.items():
        names = {part.split("}")[0] for part in english.split("{")[1:]}
        assert names == {part.split("}")[0] for part in korean.split("{")[1:]}, english
    assert t("Round {round}", round=2) == "Round 2"
    with report_language("ko"):
        assert t("Round {round}", round=2) == "2라운드"
        assert t("a user's own {words}") == "a user's own {words}"  # not in the table, no values: as written
    assert t("Jury votes") == "Jury votes"
    with pytest.raises(ValueError), report_language("fr"):
        pass


@pytest.mark.parametrize("rule", ["human-tie", "chance", "threshold"])
def test_the_pass_rules_are_explained_in_korean(rule):
    from types import SimpleNamespace

    import pandas as pd

    stats = SimpleNamespace(pass_rule=rule, alpha=0.05, threshold_pct=70.0, rounds=pd.DataFrame({"players": [3]}))
    english = (rule_text(stats), ai_rule_text(stats))
    with report_language("ko"):
        korean = (rule_text(stats), ai_rule_text(stats))
    for english_text, korean_text in zip(english, korean):
        assert korean_text != english_text and "통과" in korean_text
