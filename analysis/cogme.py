"""CogME profiles: per-player accuracy and weighted score for every story element.

Conventions (the CogME papers', plus the choices where they are silent):

* The questions table is the set *put to* every player who appears in the answers table.  A player
  without a row for one of those questions is wrong on it (no answer); answers to questions outside
  the table are ignored, so a profile can be computed on a subset (e.g. one round).
* ``accuracy_pct(e)`` = 100 * correct / questions over the questions tagged with element ``e``;
  ``score_pct(e)`` = the same with each question weighted by ``w(q, e)`` of the chosen method.
* A question without a THINKING tag has no basis for weighting: every one of its tags gets w = 1
  under every method (it counts as it would under ``uniform``).  A question with no tag at all counts
  towards a player's overall accuracy and towards no element.
* ``frontiers2022`` weighs TARGET tags as the paper does; CONTENT and THINKING tags get w = W_R
  (the paper defines no weights for them: our reading, to be stated in reports).
* Players are listed in order of first appearance in the answers table; elements in
  :func:`analysis.taxonomy.element_order` order, only those tagged on at least one question.
* ``element_sd`` is the sample SD (n - 1, as R's ``sd``) of ``accuracy_pct`` over the player's
  elements of all three modules; NaN with fewer than two elements.
* ``correct`` must be bool, pandas ``boolean`` or integers 0/1 (ValueError otherwise: a string such
  as ``"0"`` would be truthy).  A missing grade is an error too.
* Weighted sums of floats (2/3, 4/3, ...) can round a player who is right on every question of an
  element to 99.99999999999999: percentages within 1e-9 of 0 or 100 are snapped to them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .composition import composition
from .tables import PLAYER_KINDS, require_columns, tag_table
from .taxonomy import element_order

METHODS = ("uniform", "cogsci2024", "frontiers2022")

# Weight of a question by its THINKING level (W in cogsci2024, W_R in frontiers2022).
_THINKING_WEIGHTS: dict[str, dict[str, float]] = {
    "uniform": {"Recall": 1.0, "Recognition": 1.0, "Reasoning": 1.0},
    "cogsci2024": {"Recall": 1.0, "Recognition": 2.0, "Reasoning": 3.0},
    "frontiers2022": {"Recall": 1.0, "Recognition": 1.5, "Reasoning": 2.0},
}
_KEY_TARGET_WEIGHT = 2.0  # W_T of the key target in frontiers2022 (other targets: 1)

_ELEMENTS = pd.MultiIndex.from_tuples(
    [(module.value, element) for module, element in element_order()], names=["module", "element"]
)


@dataclass(frozen=True)
class Profiles:
    """CogME profiles of every player under one scoring method.

    ``elements``: player, kind, module, element, questions, correct, accuracy_pct, score_pct
    ``players``:  player, kind, questions, correct, accuracy_pct, element_sd
    """

    method: str
    elements: pd.DataFrame
    players: pd.DataFrame


def question_weights(questions: pd.DataFrame, method: str = "uniform") -> pd.DataFrame:
    """One row per (question, tag): ``qid, module, element, is_key, weight`` under ``method``.

    * ``uniform``: w = 1.
    * ``cogsci2024``: every tag of q gets W(q) = Recall 1, Recognition 2, Reasoning 3.
    * ``frontiers2022``: W_R = Recall 1, Recognition 1.5, Reasoning 2; SC = NT x W_R with NT the
      number of TARGET tags; TARGET tag i gets SC x W_T / T_sum (W_T = 2 for the key target, else 1;
      T_sum = NT + 1 with a key target, NT without); CONTENT and THINKING tags get W_R.
    * A question without a THINKING tag gets w = 1 on every tag, whatever the method.
    """
    if method not in METHODS:
        raise ValueError(f"unknown scoring method {method!r}; choose one of {', '.join(METHODS)}")
    tags = tag_table(questions)
    thinking = pd.Series(questions["thinking"].to_numpy(), index=_question_index(questions))
    level = tags["qid"].map(thinking)
    weight = level.map(_THINKING_WEIGHTS[method])
    unknown = level.notna() & weight.isna()
    if unknown.any():
        raise ValueError(f"unknown THINKING element(s): {', '.join(sorted(set(level[unknown])))}")

    if method == "frontiers2022":
        is_target = tags["module"] == "target"
        targets_of = tags[is_target].groupby("qid")
        target_count = tags["qid"].map(targets_of.size())
        has_key = tags["qid"].map(targets_of["is_key"].any()).astype(float)
        target_share = np.where(tags["is_key"], _KEY_TARGET_WEIGHT, 1.0) / (target_count + has_key)
        # SC x W_T / T_sum, with SC = NT x W_R
        weight = weight.where(~is_target, weight * target_count * target_share)

    return tags.assign(weight=weight.fillna(1.0).astype(float))


def profiles(questions: pd.DataFrame, answers: pd.DataFrame, method: str = "uniform") -> Profiles:
    """Per-player, per-element accuracy and ``method``-weighted score (see the module docstring)."""
    qids = _question_index(questions)
    tags = question_weights(questions, method)
    players, grid = _answer_grid(qids, answers)
    tagged = _element_matrix(qids, tags, 1.0)
    weights = _element_matrix(qids, tags, tags["weight"].to_numpy())

    asked = tagged.sum(axis=0)
    correct = grid @ tagged
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = 100.0 * correct / asked
        score = _snapped(100.0 * (grid @ weights) / weights.sum(axis=0))
    used = asked > 0

    elements = _per_player_elements(
        players,
        used,
        questions=np.broadcast_to(asked, correct.shape).astype(int),
        correct=correct.astype(int),
        accuracy_pct=accuracy,
        score_pct=score,
    )
    used_accuracy = accuracy[:, used]
    element_sd = used_accuracy.std(axis=1, ddof=1) if used.sum() >= 2 else np.full(len(players), np.nan)
    solved = grid.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        overall = 100.0 * solved / len(qids)
    summary = players.assign(
        questions=len(qids), correct=solved.astype(int), accuracy_pct=overall, element_sd=element_sd
    )
    return Profiles(method, elements, summary)


def element_frequencies(questions: pd.DataFrame, answers: pd.DataFrame | None = None) -> pd.DataFrame:
    """How often each element of the taxonomy is tagged in the set (zeros included).

    Without ``answers``: ``module, element, questions``.  With them, one block per player:
    ``player, module, element, questions, correct, missed`` (missed includes no answer), as
    :func:`profile_frequencies` gives for ``profiles(questions, answers)``.
    """
    if answers is None:
        return composition(questions).elements
    return profile_frequencies(profiles(questions, answers))


def profile_frequencies(result: Profiles) -> pd.DataFrame:
    """``player, module, element, questions, correct, missed`` for every player of ``result`` and every element
    of the taxonomy (zeros where none of the player's questions carries it): the counts behind the profiles, so
    a player profiled on the questions put to them is counted on those same questions."""
    every = pd.DataFrame(
        {"module": _ELEMENTS.get_level_values("module"), "element": _ELEMENTS.get_level_values("element")}
    )
    grid = result.players[["player"]].merge(every, how="cross")
    counted = result.elements[["player", "module", "element", "questions", "correct"]]
    table = grid.merge(counted, on=["player", "module", "element"], how="left")
    table = table.fillna({"questions": 0, "correct": 0}).astype({"questions": int, "correct": int})
    return table.assign(missed=table["questions"] - table["correct"])


def _question_index(questions: pd.DataFrame) -> pd.Index:
    require_columns(questions, ("qid",), "questions")
    qids = pd.Index(questions["qid"].astype(str), name="qid")
    if not qids.is_unique:
        raise ValueError(f"duplicate qid(s) in questions: {', '.join(qids[qids.duplicated()].unique())}")
    return qids


def _answer_grid(qids: pd.Index, answers: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """``players`` (player, kind; first-appearance order) and their players x questions 0/1 grid."""
    require_columns(answers, ("player", "qid", "correct", "kind"), "answers")
    if answers["correct"].isna().any():
        raise ValueError(f"{int(answers['correct'].isna().sum())} answer(s) are not graded (correct is missing)")
    check_correct(answers["correct"])
    bad_kind = ~answers["kind"].isin(PLAYER_KINDS)
    if bad_kind.any():
        raise ValueError(f"player kind must be human or ai, not {answers['kind'][bad_kind].iloc[0]!r}")
    kinds = answers.groupby("player", sort=False)["kind"].nunique()
    if (kinds > 1).any():
        raise ValueError(f"player(s) with both kinds: {', '.join(map(str, kinds.index[kinds > 1]))}")
    answer_qids = answers["qid"].astype(str)
    twice = answers.assign(qid=answer_qids).duplicated(["player", "qid"])
    if twice.any():
        first = answers[twice].iloc[0]
        raise ValueError(f"player {first['player']!r} answered question {first['qid']!r} more than once")

    players = answers.drop_duplicates("player")[["player", "kind"]].reset_index(drop=True)
    rows = pd.Index(players["player"]).get_indexer(answers["player"])
    cols = qids.get_indexer(answer_qids)
    put = cols >= 0  # answers to questions outside the set are not part of this profile
    grid = np.zeros((len(players), len(qids)))
    grid[rows[put], cols[put]] = answers["correct"].to_numpy(dtype=bool)[put]
    return players, grid


def check_correct(correct: pd.Series) -> None:
    """``correct`` holds bools (numpy, pandas boolean or Python) or the integers 0 and 1, nothing else."""
    dtype = correct.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return
    if pd.api.types.is_integer_dtype(dtype):
        bad = correct[~correct.isin([0, 1])]
    elif dtype is np.dtype(object):

        def plain(value) -> bool:
            return isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer)) and value in (0, 1))

        bad = correct[~correct.map(plain)]
    else:
        bad = correct
    if len(bad):
        raise ValueError(
            f"answers column 'correct' must be bool or 0/1 integers, not {bad.iloc[0]!r} ({dtype}); "
            "convert it first (a string such as '0' would count as right)"
        )


def _snapped(percent: np.ndarray) -> np.ndarray:
    """``percent`` with values within 1e-9 of 0 or 100 set to exactly 0 or 100 (float rounding noise)."""
    percent = np.where(np.abs(percent - 100.0) < 1e-9, 100.0, percent)
    return np.where(np.abs(percent) < 1e-9, 0.0, percent)


def _element_matrix(qids: pd.Index, tags: pd.DataFrame, values) -> np.ndarray:
    """questions x elements matrix holding ``values`` where a question carries the element's tag."""
    rows = qids.get_indexer(tags["qid"])
    cols = _ELEMENTS.get_indexer(pd.MultiIndex.from_frame(tags[["module", "element"]]))
    if (cols < 0).any():
        unknown = tags.loc[cols < 0, "element"].unique()
        raise ValueError(f"unknown CogME element(s) in questions: {', '.join(map(str, unknown))}")
    matrix = np.zeros((len(qids), len(_ELEMENTS)))
    matrix[rows, cols] = values
    return matrix


def _per_player_elements(players: pd.DataFrame, used: np.ndarray, **columns: np.ndarray) -> pd.DataFrame:
    """Long table: for each player (in order) one row per used element; ``columns`` are players x elements."""
    elements = _ELEMENTS[used]
    count = len(players)
    return pd.DataFrame(
        {
            "player": np.repeat(players["player"].to_numpy(), len(elements)),
            "kind": np.repeat(players["kind"].to_numpy(), len(elements)),
            "module": np.tile(elements.get_level_values("module").to_numpy(), count),
            "element": np.tile(elements.get_level_values("element").to_numpy(), count),
            **{name: values[:, used].ravel() for name, values in columns.items()},
        }
    )
