"""The CogME taxonomy: canonical names, aliases, and the annotation rules."""

from __future__ import annotations

import pytest

from analysis.taxonomy import (
    ELEMENTS,
    Module,
    TagProblem,
    TagSet,
    UnknownElement,
    all_elements,
    canonical,
    element_order,
    highest_thinking,
    lookup,
    parse_tags,
)


def test_modules_and_elements_are_the_papers():
    assert ELEMENTS[Module.TARGET] == (
        "Character",
        "Object",
        "Place",
        "Conversation",
        "Behavior",
        "Event",
        "Emotion",
        "Commonsense",
    )
    assert ELEMENTS[Module.CONTENT] == (
        "Identity",
        "Feature",
        "Relationship",
        "Means",
        "Context",
        "Sequence",
        "Causality",
        "Motivation",
    )
    assert ELEMENTS[Module.THINKING] == ("Recall", "Recognition", "Reasoning")
    assert all_elements(Module.TARGET)[-2:] == ("Time", "Humor")
    assert all_elements(Module.TARGET, extensions=False) == ELEMENTS[Module.TARGET]
    assert len(element_order()) == 10 + 8 + 3


@pytest.mark.parametrize("spelling", ["Recognition", "recognition", "GRASPING", "Recognize", " grasping "])
def test_recognition_aliases(spelling):
    assert lookup(spelling) == (Module.THINKING, "Recognition")


def test_other_spellings_and_wrong_modules():
    assert canonical("behaviour", Module.TARGET) == "Behavior"
    assert canonical("Common  sense", Module.TARGET) == "Commonsense"
    assert canonical("humour", Module.TARGET) == "Humor"
    with pytest.raises(UnknownElement, match="'Identity' is a CONTENT element, not TARGET"):
        canonical("identity", Module.TARGET)
    with pytest.raises(UnknownElement, match="unknown CogME element 'Colour'"):
        lookup("Colour")


def test_a_valid_tag_set_with_key_target():
    tags = parse_tags("Character;Conversation*;emotion", "Context|Motivation", "reasoning")
    assert tags == TagSet(
        ("Character", "Conversation", "Emotion"), "Conversation", ("Context", "Motivation"), "Reasoning"
    )
    assert tags.problems == ()
    assert tags.as_text() == {
        "targets": "Character;Conversation*;Emotion",
        "contents": "Context;Motivation",
        "thinking": "Reasoning",
    }
    assert parse_tags(["Place", "Character"], ["Identity"], "Recall", key_target="place").key_target == "Place"


def test_annotation_rules():
    def problems(*args, **kwargs) -> tuple[TagProblem, ...]:
        return parse_tags(*args, **kwargs).problems

    target, content, thinking = Module.TARGET, Module.CONTENT, Module.THINKING
    assert problems(None, None, None) == ()  # untagged is allowed; importers count it
    assert problems("Character", "", "Recall") == (TagProblem(content, "needs 1-3 CONTENT tags, has 0"),)
    assert problems("", "Identity", "Recall") == (TagProblem(target, "needs 1-3 TARGET tags, has 0"),)
    assert problems("Character;Object;Place;Event", "Identity", "Recall") == (
        TagProblem(target, "needs 1-3 TARGET tags, has 4"),
    )
    assert problems("Character", "Identity;Feature;Means;Context", "Recall") == (
        TagProblem(content, "needs 1-3 CONTENT tags, has 4"),
    )
    assert problems("Character", "Identity", "") == (TagProblem(thinking, "needs exactly one THINKING tag, has 0"),)
    assert problems("Character", "Identity", "Recall;Grasping") == (
        TagProblem(thinking, "needs exactly one THINKING tag, has 2 (keep only the highest: Recognition)"),
    )
    assert problems("Character*;Object*", "Identity", "Recall") == (
        TagProblem(target, "more than one key target (Character, Object); mark at most one with '*'"),
    )
    assert problems("Character", "Identity", "Recall", key_target="Object") == (
        TagProblem(target, "key target Object is not among the TARGET tags"),
    )
    assert problems("Character;character", "Identity", "Recall") == (TagProblem(target, "Character is tagged twice"),)


def test_a_problem_names_the_module_of_the_field_it_came_from():
    found = parse_tags("Character;Recall", "Identiy", None).problems
    assert found == (
        TagProblem(Module.TARGET, "'Recall' is a THINKING element, not TARGET"),
        TagProblem(Module.CONTENT, "unknown CogME element 'Identiy'"),
        TagProblem(Module.CONTENT, "needs 1-3 CONTENT tags, has 0"),
        TagProblem(Module.THINKING, "needs exactly one THINKING tag, has 0"),
    )
    assert str(found[1]) == "unknown CogME element 'Identiy'"


def test_highest_thinking():
    assert highest_thinking(["Recall", "Reasoning", "Recognition"]) == "Reasoning"
    assert highest_thinking(["Recall"]) == "Recall"
    assert highest_thinking([]) is None


def test_an_unknown_separate_key_target_is_reported():
    tags = parse_tags("Character", "Identity", "Recall", key_target="Villain")
    assert [str(p) for p in tags.problems] == ["key target: unknown CogME element 'Villain'"]
    assert tags.key_target is None
