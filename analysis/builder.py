"""Build a balanced session set from a question bank and deal it into rounds.

Pure: a questions table (``analysis.tables``) in, a :class:`BuiltSet` out; the same bank and seed give the same set.
:func:`build_set` picks the questions whose CogME elements come closest to even targets (greedy picks, then swaps),
keeps the type and clip quotas exact at every step and takes untagged questions only when it must (the set's
``notes`` say so); the dealing then makes each round look like the whole set in miniature.  Sets are session-sized;
banks may be benchmark-sized (DramaQA's 16k questions take well under a second).  The targets, the distance and the
dealing: docs/analysis.md, "The set builder".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .composition import Composition, composition
from .tables import require_columns
from .taxonomy import ELEMENTS, Module, element_order
from .votes import percent

# Dealt round-robin in this order, the mcq questions and the shot questions each form one unbroken run.
_DEAL_ORDER: tuple[tuple[str, str | None], ...] = (
    ("mcq", "scene"),
    ("mcq", None),
    ("mcq", "shot"),
    ("open", "shot"),
    ("open", None),
    ("open", "scene"),
)
_ELEMENTS: tuple[tuple[Module, str], ...] = tuple(element_order())
_TIE = 1e-9  # values closer than this count as equal (float noise)


@dataclass(frozen=True, eq=False)
class BuiltSet:
    """A session set: the chosen questions dealt into rounds, and what it was built from.

    ``questions`` holds the chosen bank rows with ``round`` (1..rounds) and ``position`` (1.. within
    the round), sorted by both.  ``notes`` says what a reader of the set should know (e.g. that
    untagged questions had to be used).
    """

    questions: pd.DataFrame
    seed: int
    bank_composition: Composition
    notes: tuple[str, ...] = ()

    @property
    def set_composition(self) -> Composition:
        return composition(self.questions)

    def comparison(self) -> pd.DataFrame:
        """Element counts of the bank beside the set's: ``module, element, bank, set, bank_pct, set_pct``.

        Counts are questions carrying the element; percentages are of the tagged questions of each
        (so an element on every tagged question is 100 %).
        """
        chosen = self.set_composition
        table = self.bank_composition.elements.rename(columns={"questions": "bank"})
        table["set"] = chosen.elements["questions"].to_numpy()
        table["bank_pct"] = percent(table["bank"], _tagged(self.bank_composition))
        table["set_pct"] = percent(table["set"], _tagged(chosen))
        return table


def element_skew(questions: pd.DataFrame) -> float:
    """How unevenly a question set covers CogME: 0 when every element appears equally often.

    The coefficient of variation (population SD / mean) of the number of questions carrying each
    core element, computed per module (modules differ in tags per question) and averaged.
    """
    elements = composition(questions).elements
    spreads = []
    for module in Module:
        counts = elements.loc[elements["element"].isin(ELEMENTS[module]), "questions"].to_numpy(dtype=float)
        if counts.mean() > 0:
            spreads.append(counts.std() / counts.mean())
    return float(np.mean(spreads)) if spreads else float("nan")


def build_set(
    bank: pd.DataFrame, count: int, rounds: int, *, mcq: int | None = None, shot: int | None = None, seed: int = 0
) -> BuiltSet:
    """Choose ``count`` questions from ``bank`` spreading CogME elements evenly and deal them into ``rounds``.

    ``mcq`` and ``shot``, when given, are exact quotas: that many multiple-choice questions (the
    rest open) and that many shot clips (the rest scene; questions without a clip kind are then
    left out).  Raises ``ValueError`` naming what is short when the bank cannot meet a quota or
    the size.  The same bank and seed give the same set.  The algorithm is in the module docstring.
    """
    require_columns(bank, ("qid", "type", "clip", "targets", "key_target", "contents", "thinking"), "questions")
    if bank["qid"].duplicated().any():
        duplicates = sorted(set(bank.loc[bank["qid"].duplicated(), "qid"].astype(str)))
        raise ValueError(f"bank has duplicate qid(s): {', '.join(duplicates)}")
    if not 1 <= rounds <= count:
        raise ValueError(f"rounds must be between 1 and the set size ({count}), got {rounds}")
    if count > len(bank):
        raise ValueError(f"bank has {len(bank)} questions, the set needs {count}")

    pool = bank if shot is None else bank[bank["clip"].isin(["shot", "scene"])]
    pool = pool.reset_index(drop=True)
    rng = np.random.default_rng(seed)
    _check_quotas(pool, count, mcq, shot)
    chosen, notes = _choose(pool, count, mcq, shot, rng)
    questions = _deal(pool.iloc[chosen].reset_index(drop=True), rounds, rng)
    return BuiltSet(questions, seed, composition(bank), tuple(notes))


# --- choosing ----------------------------------------------------------------------------------


def _check_quotas(pool: pd.DataFrame, count: int, mcq: int | None, shot: int | None) -> None:
    """Raise ``ValueError`` naming every quota the bank cannot meet."""
    needs = []
    if mcq is not None:
        if not 0 <= mcq <= count:
            raise ValueError(f"mcq quota must be between 0 and {count}, got {mcq}")
        needs += [
            ("mcq questions", pool["type"] == "mcq", mcq),
            ("open questions", pool["type"] == "open", count - mcq),
        ]
    if shot is not None:
        if not 0 <= shot <= count:
            raise ValueError(f"shot quota must be between 0 and {count}, got {shot}")
        needs += [
            ("questions on shot clips", pool["clip"] == "shot", shot),
            ("questions on scene clips", pool["clip"] == "scene", count - shot),
        ]
    short = [
        f"bank has {int(rows.sum())} {what}, the set needs {need}" for what, rows, need in needs if rows.sum() < need
    ]
    if short:
        raise ValueError("; ".join(short))
    is_mcq, is_shot = _quota_classes(pool, mcq, shot)
    available = _class_counts(is_mcq, is_shot, np.ones(len(pool), dtype=bool))
    if not _quotas_feasible(available, count, _need(mcq, count), _need(shot, count)):
        cells = ", ".join(
            f"{available[m, s]} {'mcq' if m else 'open'}/{'shot' if s else 'scene'}" for m in (1, 0) for s in (1, 0)
        )
        raise ValueError(
            f"bank cannot meet both quotas ({mcq} mcq and {shot} shot of {count}) at once: it has {cells} questions"
        )


def _choose(
    pool: pd.DataFrame, count: int, mcq: int | None, shot: int | None, rng: np.random.Generator
) -> tuple[list[int], list[str]]:
    """Greedy chi-square descent under the quotas, then swaps; returns the chosen row positions and notes."""
    incidence = _incidence(pool)
    tagged = incidence.any(axis=1)
    targets = _even_targets(incidence, count)
    weights = _chi_square_weights(targets)
    is_mcq, is_shot = _quota_classes(pool, mcq, shot)
    mcq_left, shot_left = _need(mcq, count), _need(shot, count)

    remaining = np.ones(len(pool), dtype=bool)
    counts = np.zeros(incidence.shape[1])
    chosen: list[int] = []
    for step in range(1, count + 1):
        allowed = remaining & _keeps_feasible(is_mcq, is_shot, remaining, count - step, mcq_left, shot_left)
        if (allowed & tagged).any():
            allowed &= tagged  # untagged questions only once the tagged ones cannot fill the quotas
        expected = targets * step / count
        # Change in chi-square when one more question carries element e: (2 (count - expected) + 1) / target.
        cost = incidence @ ((2 * (counts - expected) + 1) * weights)
        pick = _random_argmin(np.where(allowed, cost, np.inf), rng)
        chosen.append(pick)
        remaining[pick] = False
        counts += incidence[pick]
        mcq_left -= int(is_mcq[pick])
        shot_left -= int(is_shot[pick])

    chosen = _swap_towards_targets(chosen, incidence, targets, weights, tagged, 2 * is_mcq + is_shot, rng)
    untagged = [str(pool.at[i, "qid"]) for i in chosen if not tagged[i]]
    notes = []
    if untagged:
        notes.append(
            f"{len(untagged)} untagged question(s) used because the bank's tagged questions ran out "
            f"under the quotas: {', '.join(untagged)}"
        )
    return chosen, notes


def _swap_towards_targets(
    chosen: list[int],
    incidence: np.ndarray,
    targets: np.ndarray,
    weights: np.ndarray,
    tagged: np.ndarray,
    quota_class: np.ndarray,
    rng: np.random.Generator,
) -> list[int]:
    """Swap a chosen question for an unchosen tagged one of the same quota class while chi-square drops.

    The greedy pass commits early; swapping repairs what it could not foresee (e.g. the thinking
    levels drifting while it chased rare TARGET elements).  Same-class swaps keep the quotas exact.
    """
    chosen = list(chosen)
    in_set = np.zeros(len(incidence), dtype=bool)
    in_set[chosen] = True
    while True:
        counts = incidence[chosen].sum(axis=0)
        now = (weights * (counts - targets) ** 2).sum()
        change = np.full((len(chosen), len(incidence)), np.inf)
        for slot, out in enumerate(chosen):
            comes_in = ~in_set & tagged & (quota_class == quota_class[out])
            without = counts - incidence[out] - targets
            after = (weights * without**2).sum() + incidence[comes_in] @ (weights * (2 * without + 1))
            change[slot, comes_in] = after - now
        if not change.min() < -_TIE:
            return chosen
        slot, incoming = np.unravel_index(_random_argmin(change, rng), change.shape)
        in_set[chosen[slot]], in_set[incoming] = False, True
        chosen[slot] = int(incoming)


def _random_argmin(values: np.ndarray, rng: np.random.Generator) -> int:
    """Flat index of a smallest finite value, ties (within float noise) broken by ``rng``."""
    flat = values.ravel()
    return int(rng.choice(np.flatnonzero(flat <= flat.min() + _TIE)))


def _incidence(questions: pd.DataFrame) -> np.ndarray:
    """A 0/1 matrix: one row per question, one column per CogME element (``_ELEMENTS`` order)."""
    column = {name: i for i, (_, name) in enumerate(_ELEMENTS)}
    incidence = np.zeros((len(questions), len(_ELEMENTS)))
    rows = zip(questions["qid"], questions["targets"], questions["contents"], questions["thinking"])
    for row, (qid, targets, contents, thinking) in enumerate(rows):
        for name in [*_names(targets), *_names(contents), *_names(thinking)]:
            if name not in column:
                raise ValueError(f"question {qid} has tag {name!r}, not a canonical CogME element name")
            incidence[row, column[name]] = 1.0
    return incidence


def _names(value) -> tuple[str, ...]:
    """Tag names from a table cell: a tuple/list of names, one name, or missing."""
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) if isinstance(value, str) and value else ()


def _even_targets(incidence: np.ndarray, count: int) -> np.ndarray:
    """Per element, how many set questions should carry it: equal shares per module, capped by the bank."""
    tagged = incidence[incidence.any(axis=1)]
    targets = np.zeros(len(_ELEMENTS))
    if not len(tagged):
        return targets
    offered = tagged.sum(axis=0)
    for module in Module:
        columns = np.array([i for i, (owner, _) in enumerate(_ELEMENTS) if owner is module])
        tags_expected = count * tagged[:, columns].sum() / len(tagged)
        targets[columns] = _water_fill(offered[columns], tags_expected)
    return targets


def _chi_square_weights(targets: np.ndarray) -> np.ndarray:
    """Per element 1 / (target x its module's total target): chi-square on shares, each module counting alike."""
    module_total = np.zeros(len(_ELEMENTS))
    for module in Module:
        columns = [i for i, (owner, _) in enumerate(_ELEMENTS) if owner is module]
        module_total[columns] = targets[columns].sum()
    scale = targets * module_total
    return np.divide(1.0, scale, out=np.zeros_like(scale), where=scale > 0)


def _water_fill(capacities: np.ndarray, total: float) -> np.ndarray:
    """Share ``total`` equally among slots, none above its capacity (the excess goes to the others)."""
    filled = np.zeros(len(capacities))
    left = total
    open_slots = [i for i in np.argsort(capacities, kind="stable") if capacities[i] > 0]
    for taken, i in enumerate(open_slots):
        filled[i] = min(capacities[i], left / (len(open_slots) - taken))
        left -= filled[i]
    return filled


def _quota_classes(pool: pd.DataFrame, mcq: int | None, shot: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Per question: does it count towards the mcq quota, towards the shot quota?

    A quota that is not set is treated as "every question counts and the set needs them all",
    which lets one feasibility test (:func:`_quotas_feasible`) serve every combination.
    """
    everyone = np.ones(len(pool), dtype=bool)
    is_mcq = (pool["type"] == "mcq").to_numpy(dtype=bool) if mcq is not None else everyone
    is_shot = (pool["clip"] == "shot").to_numpy(dtype=bool) if shot is not None else everyone
    return is_mcq, is_shot


def _need(quota: int | None, count: int) -> int:
    return count if quota is None else quota


def _class_counts(is_mcq: np.ndarray, is_shot: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``available[is_mcq, is_shot]``: how many of ``rows`` fall in each quota class."""
    available = np.zeros((2, 2), dtype=int)
    np.add.at(available, (is_mcq[rows].astype(int), is_shot[rows].astype(int)), 1)
    return available


def _quotas_feasible(available: np.ndarray, size: int, mcq_need: int, shot_need: int) -> bool:
    """Can ``size`` questions drawn from ``available`` hold exactly ``mcq_need`` mcq and ``shot_need`` shot?

    With t mcq/shot questions the other cells are forced (mcq/scene = mcq_need - t, open/shot =
    shot_need - t, open/scene = size - mcq_need - shot_need + t); feasible iff some t keeps all four
    between 0 and what the bank has.
    """
    mcq_shot, mcq_scene = available[1, 1], available[1, 0]
    open_shot, open_scene = available[0, 1], available[0, 0]
    low = max(0, mcq_need - mcq_scene, shot_need - open_shot, mcq_need + shot_need - size)
    high = min(mcq_shot, mcq_need, shot_need, open_scene - size + mcq_need + shot_need)
    return low <= high


def _keeps_feasible(
    is_mcq: np.ndarray, is_shot: np.ndarray, remaining: np.ndarray, size_after: int, mcq_left: int, shot_left: int
) -> np.ndarray:
    """Per question: would the quotas stay reachable after picking it?"""
    available = _class_counts(is_mcq, is_shot, remaining)
    keeps = np.zeros((2, 2), dtype=bool)
    for m in (0, 1):
        for s in (0, 1):
            if available[m, s]:
                after = available.copy()
                after[m, s] -= 1
                keeps[m, s] = _quotas_feasible(after, size_after, mcq_left - m, shot_left - s)
    return keeps[is_mcq.astype(int), is_shot.astype(int)]


# --- dealing -----------------------------------------------------------------------------------


def _deal(chosen: pd.DataFrame, rounds: int, rng: np.random.Generator) -> pd.DataFrame:
    """Assign ``round`` and ``position`` to the chosen questions (see the module docstring)."""
    cells = [(kind, clip if clip in ("shot", "scene") else None) for kind, clip in zip(chosen["type"], chosen["clip"])]
    cell_ids = np.array([_DEAL_ORDER.index(cell) for cell in cells])
    # A stable sort of a seeded shuffle: cells in _DEAL_ORDER, questions within a cell in seeded order.
    laid_out = sorted(rng.permutation(len(chosen)), key=lambda i: cell_ids[i])
    round_of = np.zeros(len(chosen), dtype=int)
    round_of[laid_out] = np.arange(len(chosen)) % rounds
    features, weights = _round_features(chosen, cell_ids)
    round_of = _swap_towards_alike_rounds(round_of, features, weights, rounds, rng)

    position = np.zeros(len(chosen), dtype=int)
    for r in range(rounds):
        members = np.flatnonzero(round_of == r)
        position[rng.permutation(members)] = np.arange(1, len(members) + 1)
    dealt = chosen.assign(round=pd.array(round_of + 1, dtype="Int64"), position=pd.array(position, dtype="Int64"))
    return dealt.sort_values(["round", "position"]).reset_index(drop=True)


def _round_features(chosen: pd.DataFrame, cell_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What each round should hold in proportion: 0/1 features per question, and each feature's weight.

    Type and clip kind weigh most (a round one mcq short is plainly visible to the host), then the
    type-clip cells, then the CogME elements.  Each weight is divided by how many set questions have
    the feature, so rare features are not drowned by common ones.
    """
    margins = np.column_stack(
        [(chosen["type"] == "mcq"), (chosen["type"] == "open"), (chosen["clip"] == "shot"), (chosen["clip"] == "scene")]
    ).astype(float)
    cells = (cell_ids[:, None] == np.arange(len(_DEAL_ORDER))[None, :]).astype(float)
    elements = _incidence(chosen)
    features = np.hstack([margins, cells, elements])
    importance = np.concatenate(
        [np.full(margins.shape[1], 100.0), np.full(cells.shape[1], 10.0), np.ones(elements.shape[1])]
    )
    in_set = features.sum(axis=0)
    weights = np.divide(importance, in_set, out=np.zeros_like(in_set), where=in_set > 0)
    return features, weights


def _swap_towards_alike_rounds(
    round_of: np.ndarray, features: np.ndarray, weights: np.ndarray, rounds: int, rng: np.random.Generator
) -> np.ndarray:
    """Swap two questions between rounds while the rounds grow more alike; sizes never change.

    The measure is ``sum over rounds r, features f of weight_f * (count_rf - expected_rf)**2`` with
    ``expected_rf`` the feature's share of the set scaled to the round's size: every round should
    look like the whole set in miniature.
    """
    round_of = round_of.copy()
    sizes = np.bincount(round_of, minlength=rounds)
    expected = np.outer(sizes / len(round_of), features.sum(axis=0))
    # Question i leaves round r for s and j comes the other way: r's counts move by a_j - a_i and s's
    # by the opposite, so the measure changes by 2 (a_j - a_i).(excess_r - excess_s + a_j - a_i), weighted.
    moved = features[None, :, :] - features[:, None, :]
    while True:
        per_round = np.zeros((rounds, features.shape[1]))
        np.add.at(per_round, round_of, features)
        excess = (per_round - expected)[round_of]  # per question: its round's excess of each feature
        change = 2 * (moved * (excess[:, None, :] - excess[None, :, :] + moved) * weights).sum(axis=2)
        change[round_of[:, None] == round_of[None, :]] = np.inf
        if not change.min() < -_TIE:
            return round_of
        i, j = np.unravel_index(_random_argmin(change, rng), change.shape)
        round_of[i], round_of[j] = round_of[j], round_of[i]


def _tagged(made: Composition) -> int:
    return made.total - len(made.untagged)
