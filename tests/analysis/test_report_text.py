"""The reports' own words (analysis/report_text.py): every English template has its Korean one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from analysis import report
from analysis.report_text import KO, report_language, t

ANALYSIS = Path(report.__file__).parent


def t_templates(path: Path) -> list[str]:
    """The string literals handed to ``t(...)`` in a module (both arms of ``t(a if x else b)``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "t" and node.args:
            arg = node.args[0]
            for case in [arg.body, arg.orelse] if isinstance(arg, ast.IfExp) else [arg]:
                if isinstance(case, ast.Constant) and isinstance(case.value, str):
                    found.append(case.value)
    return found


@pytest.mark.parametrize("module", ["report.py", "charts.py", "../vtt/cli/reports.py"])
def test_every_template_of_the_pdfs_has_a_korean_one(module):
    templates = t_templates(ANALYSIS / module)
    assert templates
    assert [text for text in templates if text not in KO] == []


def test_the_words_kept_in_tables_are_translated_too():
    kept = [
        report.DEFAULT_TITLE,
        *report.METHOD_NOTES.values(),
        *report.FACET_TITLES.values(),
        *report.MEASURE_NAMES.values(),
        *report.UNDEFINED_REASONS.values(),
    ]
    assert [text for text in kept if text not in KO] == []
    with report_language("ko"):  # a juror's expertise is the program's word; the other labels are the host's
        assert [report._facet_value("expert", v) for v in ("expert", "non-expert")] == ["전문가", "비전문가"]
        assert report._facet_value("sex", "female") == "female"


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
    english = (report._rule_text(stats), report._ai_rule_text(stats))
    with report_language("ko"):
        korean = (report._rule_text(stats), report._ai_rule_text(stats))
    for english_text, korean_text in zip(english, korean):
        assert korean_text != english_text and "통과" in korean_text
