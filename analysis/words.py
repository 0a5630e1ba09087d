"""The words of the PDF reports, in English and Korean.

``analysis`` does not use vtt's Flask-Babel catalogs (it imports nothing of ``vtt``), so the report's own
words live here: :func:`t` returns the English template, or its Korean one while :func:`report_language`
says ``ko``, and fills in its ``{placeholders}``.  A template missing from :data:`KO` stays English.
What users wrote (names, questions, answers, themes) is never translated, and the CSVs stay in English
whatever the PDFs' language (their column names and values are read by programs).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

REPORT_LANGUAGES = ("en", "ko")
_language: ContextVar[str] = ContextVar("report_language", default="en")


@contextmanager
def report_language(language: str) -> Iterator[None]:
    """Inside the block, :func:`t` speaks ``language`` (``en`` or ``ko``)."""
    if language not in REPORT_LANGUAGES:
        raise ValueError(f"unknown report language {language!r}; one of {', '.join(REPORT_LANGUAGES)}")
    token = _language.set(language)
    try:
        yield
    finally:
        _language.reset(token)


def current_language() -> str:
    return _language.get()


def t(text: str, **values: object) -> str:
    """``text`` in the current report language, its ``{name}`` placeholders filled from ``values``."""
    template = KO.get(text, text) if _language.get() == "ko" else text
    return template.format(**values) if values else template


# English template -> Korean template.  Terms follow the web pages' catalog (vtt/translations/ko):
# 참가자 player, 배심원 juror, 라운드 round, 탐지율 detection, 통과 규칙 pass rule, 판정지 judgment sheet.
KO: dict[str, str] = {
    # titles, cover, footer
    "Video Turing Test - session report": "비디오 튜링 테스트 - 세션 보고서",
    "Video Turing Test report": "비디오 튜링 테스트 보고서",
    "{name} - Video Turing Test report": "{name} - 비디오 튜링 테스트 보고서",
    "page {number} of ": "{number} / ",
    "<font color='#{colour}'><b>Note:</b></font> characters the embedded font cannot show: {names}. They print as "
    "blanks or boxes in this PDF; the CSV files hold the exact text.": "<font color='#{colour}'><b>참고:</b></font> 내장 글꼴로 표시할 수 없는 문자: {names}. 이 PDF에서는 빈칸이나 "
    "네모로 인쇄되며, CSV 파일에는 정확한 텍스트가 들어 있습니다.",
    # the cover's session facts (vtt/cli/reports.py, vtt/cli/main.py)
    "Session": "세션",
    "Join code": "참여 코드",
    "Date": "일시",
    "Seed": "시드",
    "Players": "참가자",
    "Scoring method": "채점 방식",
    "Pass rule": "통과 규칙",
    "Design hash": "설계 해시",
    "Ungraded open answers": "채점하지 않은 서술형 답변",
    "Questions without a key": "정답 없는 문항",
    "Answers": "답변",
    "Judgment sheet": "판정지",
    "AI players' programs": "AI 참가자의 프로그램",
    " (model {model})": " (모델 {model})",
    "{name}: {count} answer": "{name}: 답변 {count}개",
    "{name}: {count} answers": "{name}: 답변 {count}개",
    "no provenance recorded: {count}": "프로그램 기록 없음: {count}개",
    "entered by the host: {count}": "진행자가 입력: {count}개",
    "no answers": "답변 없음",
    "not started": "시작 전",
    "none recorded": "기록 없음",
    "{rounds} x {per_round} questions ({placed} placed)": "{rounds}라운드 x {per_round}문항 ({placed}문항 배치)",
    "round {number}: {theme}": "{number}라운드: {theme}",
    "Questions shown": "제시된 문항",
    "{shown} of {placed} questions shown": "{placed}문항 중 {shown}문항 제시",
    "stopped after round {round} of {rounds}": "{rounds}라운드 중 {round}라운드 후 중단",
    "in progress, round {round} of {rounds}": "진행 중, {rounds}라운드 중 {round}라운드",
    "round {round} cut short after {shown} of {placed} questions": "{round}라운드는 {placed}문항 중 {shown}문항 후 중단",
    "round {round} not played": "{round}라운드는 진행하지 않음",
    "rounds {first}-{last} not played": "{first}-{last}라운드는 진행하지 않음",
    "{round} (cut short)": "{round} (중간에 끊김)",
    "(cut short)": "(중간에 끊김)",
    "Cut short: round {rounds} began in the live session but stopped before its vote opened, so the live jury "
    "never judged it; the host offered it to the other juries all the same. It is shown here alone and left out "
    "of every pooled figure.": "중간에 끊김: {rounds}라운드는 현장 세션에서 시작되었지만 투표가 열리기 전에 중단되어 현장 "
    "배심원단이 판정하지 않았습니다. 진행자가 그래도 다른 배심원단에 제공했습니다. 여기에는 따로 표시하며 어떤 합산 "
    "수치에도 넣지 않습니다.",
    " (alpha {alpha})": " (α {alpha})",
    " (AI passes at detection <= {threshold} %)": " (탐지율 {threshold} % 이하이면 AI 통과)",
    "{count}, left out of accuracy (ungraded.csv lists them): {names}{more}": "{count}개, 정답률에서 제외 (ungraded.csv에 목록이 있습니다): {names}{more}",
    ", ... ({count} more)": ", ... (외 {count}개)",
    "{count} ({qids}): answers graded by hand or left out of accuracy": "{count}개 ({qids}): 답변은 직접 채점하거나 정답률에서 제외",
    "{age} y": "{age}세",
    # CogME profiles
    "CogME profiles": "CogME 프로필",
    "Scoring method: <b>{method}</b> — {note}": "채점 방식: <b>{method}</b> — {note}",
    "every tag weighs 1, so the weighted score equals the accuracy.": "모든 태그의 가중치가 1이므로 가중 점수는 정답률과 같습니다.",
    "every tag of a question weighs its THINKING level W: Recall 1, Recognition 2, Reasoning 3 (CogME, 2024).": "문항의 모든 태그에 그 문항의 THINKING 수준 가중치 W를 줍니다: Recall 1, Recognition 2, Reasoning 3 "
    "(CogME, 2024).",
    "TARGET tag i weighs T<sub>i</sub> = SC × W<sub>T</sub> / T<sub>sum</sub> with SC = NT × W<sub>R</sub> "
    "(W<sub>R</sub>: Recall 1, Recognition 1.5, Reasoning 2; W<sub>T</sub> = 2 for the key target, else 1) "
    "(CogME, Frontiers 2022). CONTENT and THINKING tags weighted by W_R (our reading of the paper, which defines "
    "TARGET weights only).": "TARGET 태그 i의 가중치는 T<sub>i</sub> = SC × W<sub>T</sub> / T<sub>sum</sub>, SC = NT × W<sub>R</sub>"
    "입니다 (W<sub>R</sub>: Recall 1, Recognition 1.5, Reasoning 2; W<sub>T</sub>는 핵심 대상이면 2, 아니면 1) "
    "(CogME, Frontiers 2022). CONTENT와 THINKING 태그는 W_R로 가중합니다 (TARGET 가중치만 정의한 논문에 대한 "
    "우리의 해석).",
    "Weighted score % per element under <b>{method}</b>, every player overlaid; rings at 0, 25, 50, 75 and 100 %; "
    "n = questions tagged with the element.": "<b>{method}</b> 방식의 요소별 가중 점수 %, 모든 참가자를 겹쳐 표시; 원은 0, 25, 50, 75, 100 %; "
    "n = 해당 요소가 태그된 문항 수.",
    "{untagged} of {total} questions carries no CogME tag: counted in overall accuracy only.": "{total}개 문항 중 {untagged}개에 CogME 태그가 없습니다: 전체 정답률에만 반영됩니다.",
    "{untagged} of {total} questions carry no CogME tag: counted in overall accuracy only.": "{total}개 문항 중 {untagged}개에 CogME 태그가 없습니다: 전체 정답률에만 반영됩니다.",
    "Accuracy = correct / questions tagged with the element (no answer counts as wrong); weighted score = the same "
    "with each question weighted by the method. Element SD = sample standard deviation (n - 1) of a player's "
    "element accuracies over all elements asked.": "정답률 = 정답 수 / 해당 요소가 태그된 문항 수 (무응답은 오답으로 셈); 가중 점수 = 같은 계산에 문항마다 채점 "
    "방식의 가중치를 준 값. 요소 표준편차 = 출제된 모든 요소에 걸친 참가자의 요소별 정답률의 표본 표준편차 (n - 1).",
    "Player": "참가자",
    "Kind": "유형",
    "Questions": "문항",
    "Correct": "정답",
    "Accuracy %": "정답률 %",
    "Element SD": "요소 표준편차",
    "human": "인간",
    "ai": "AI",
    "AI": "AI",
    "Shaded: weighted score % per element of {player} under <b>{method}</b>; rings at 0, 25, 50, 75 and 100 %; "
    "n = questions tagged with the element.": "음영: <b>{method}</b> 방식에서 {player}의 요소별 가중 점수 %; 원은 0, 25, 50, 75, 100 %; "
    "n = 해당 요소가 태그된 문항 수.",
    "Player: {player}": "참가자: {player}",
    "AI player · overall accuracy <b>{accuracy} %</b> ({correct} of {questions} questions) · element SD "
    "<b>{sd}</b>": "AI 참가자 · 전체 정답률 <b>{accuracy} %</b> ({questions}문항 중 {correct}문항) · 요소 표준편차 "
    "<b>{sd}</b>",
    "Human player · overall accuracy <b>{accuracy} %</b> ({correct} of {questions} questions) · element SD "
    "<b>{sd}</b>": "인간 참가자 · 전체 정답률 <b>{accuracy} %</b> ({questions}문항 중 {correct}문항) · 요소 표준편차 "
    "<b>{sd}</b>",
    "Module": "모듈",
    "Element": "요소",
    "Attempts": "출제 수",
    "Weighted score %": "가중 점수 %",
    # the jury
    "Jury": "배심원단",
    "Jury votes": "배심원 투표",
    "Pass rule: {rule}": "통과 규칙: {rule}",
    " ({silent} round without votes)": " (투표 없는 라운드 {silent}개)",
    " ({silent} rounds without votes)": " (투표 없는 라운드 {silent}개)",
    "The AI passed <b>{passed} of {judged}</b> rounds{silent}. Overall detection <b>{detection} %</b> of {votes} "
    "cast votes (95 % Wilson CI {ci} %; one-sided exact binomial {p} against chance; both pool the rounds and treat "
    "the votes as independent, which one juror's votes are not, so read them as approximate); mean detection over "
    "rounds {mean} %. One player was named by more than half of the voting jurors in {majority} of {judged} rounds.": "AI가 <b>{judged}개 라운드 중 {passed}개</b>를 통과했습니다{silent}. 전체 탐지율은 투표 {votes}표 중 "
    "<b>{detection} %</b>입니다 (95 % Wilson 신뢰구간 {ci} %; 우연 수준 대비 단측 정확 이항검정 {p}; 둘 다 "
    "라운드를 합치고 투표를 서로 독립으로 보지만 한 배심원의 투표들은 독립이 아니므로 근사치로 읽으세요); 라운드 "
    "평균 탐지율 {mean} %. {judged}개 라운드 중 {majority}개에서 한 참가자가 투표한 배심원의 과반에게 "
    "지목되었습니다.",
    "Detection = share of cast votes naming an AI player; whiskers: 95 % Wilson interval; dashed: chance level "
    "(number of AI players / players).": "탐지율 = 투표 중 AI 참가자를 지목한 비율; 오차 막대: 95 % Wilson 구간; 점선: 우연 수준 "
    "(AI 참가자 수 / 참가자 수).",
    "Votes per round": "라운드별 투표",
    "Jurors named several players per round (one per AI player): a player's share and the majority are counted out "
    "of the jurors who voted (each names a player at most once), detection out of all cast votes.": "배심원이 라운드마다 여러 참가자를 지목했습니다 (AI 참가자 하나당 한 명): 참가자의 득표율과 과반은 투표한 "
    "배심원 수를 기준으로 (배심원마다 한 참가자를 한 번까지만 지목), 탐지율은 전체 투표 수를 기준으로 셉니다.",
    "Round {round}": "{round}라운드",
    "no votes": "투표 없음",
    "passed": "통과",
    "<b>detected</b>": "<b>탐지됨</b>",
    "Verdict per AI player": "AI 참가자별 판정",
    "Round": "라운드",
    "Rounds": "라운드",
    "AI player": "AI 참가자",
    "Votes": "투표",
    "Share %": "득표율 %",
    "Detection %": "탐지율 %",
    "Result": "결과",
    "Each AI player judged alone under <b>{rule}</b>: {rule_text} Share = of the jurors who voted; detection = this "
    "AI's share of the cast votes.": "AI 참가자마다 <b>{rule}</b> 규칙으로 따로 판정합니다: {rule_text} 득표율 = 투표한 배심원 대비; 탐지율 = "
    "전체 투표 중 이 AI가 받은 비율.",
    "it passes a round when some human drew at least as many votes as it did.": "어떤 인간 참가자가 그 AI 이상으로 표를 받으면 그 라운드를 통과합니다.",
    "it passes a round when a one-sided exact binomial test of its votes against 1 / {players} players is not "
    "significant at α = {alpha}.": "받은 표를 1 / {players} (참가자 수) 대비 단측 정확 이항검정했을 때 α = {alpha}에서 유의하지 않으면 그 "
    "라운드를 통과합니다.",
    "it passes a round when its detection ≤ {threshold} %.": "탐지율이 {threshold} % 이하이면 그 라운드를 통과합니다.",
    "<b>human-tie</b> — the AI passes a round when some human drew at least as many votes as the AI (2021 public "
    "event).": "<b>human-tie</b> — 어떤 인간 참가자가 AI 이상으로 표를 받으면 AI가 그 라운드를 통과합니다 "
    "(2021년 공개 행사).",
    "<b>chance</b> — the AI passes a round when a one-sided exact binomial test of detection against chance "
    "(AI players / players) is not significant at α = {alpha}.": "<b>chance</b> — 탐지율을 우연 수준 (AI 참가자 수 / 참가자 수) 대비 단측 정확 이항검정했을 때 α = {alpha}에서 "
    "유의하지 않으면 AI가 그 라운드를 통과합니다.",
    "<b>threshold</b> — the AI passes a round when detection ≤ {threshold} % (Turing, 1950: 70 % right "
    "identification).": "<b>threshold</b> — 탐지율이 {threshold} % 이하이면 AI가 그 라운드를 통과합니다 "
    "(Turing, 1950: 70 % 정확 식별).",
    "Judgment sheet: exposure": "판정지: 노출도",
    "Question": "문항",
    "Marks": "표시",
    "Marks on the AI": "AI에 대한 표시",
    "Exposure %": "노출도 %",
    "Chance %": "우연 수준 %",
    "Jurors marked {marks} answers as looking like the AI's; {ai_marks} of them were an AI player's ({overall} %).": "배심원이 답변 {marks}개에 'AI 같음'을 표시했고, 그중 {ai_marks}개가 AI 참가자의 답변이었습니다 ({overall} %).",
    "Exposure = share of the question's \"looks like the AI\" marks that fell on an AI player's answer; chance = "
    "AI answers / all answers to the question, the share marks placed blindly would reach.": "노출도 = 문항의 'AI 같음' 표시 중 AI 참가자의 답변에 붙은 비율; 우연 수준 = AI 답변 수 / 그 문항의 전체 답변 "
    "수, 무작위로 표시할 때 나올 비율.",
    "top human {human} vs AI {ai} votes": "인간 최다 {human}표 vs AI {ai}표",
    "<b>AI passed</b>": "<b>AI 통과</b>",
    "<b>AI detected</b>": "<b>AI 탐지됨</b>",
    "none": "없음",
    "several (tied)": "여럿 (동률)",
    "Jurors": "배심원",
    "{jurors} · voters {voters}": "{jurors}명 · 투표자 {voters}명",
    "joined openly {count}": "공개 참여 {count}명",
    "removed by the host {count}": "진행자가 제외 {count}명",
    "judged afterwards: {juries}": "사후 판정: {juries}",
    "{session}: displaced jurors {displaced}, AI jurors {ai}": "{session}: 사후 배심원 {displaced}명, AI 배심원 {ai}명",
    "Jurors: the live jury of each session. Judged afterwards: {sessions}.": "배심원: 각 세션의 현장 배심원단. 사후 판정: "
    "{sessions}.",
    "displaced jury {jurors} (voters {voters})": "사후 배심원단 {jurors}명 (투표자 {voters}명)",
    "AI jurors {jurors} ({models})": "AI 배심원 {jurors}명 ({models})",
    "Abstentions": "기권",
    "AI votes": "AI 득표",
    "95 % CI": "95 % 신뢰구간",
    "Majority": "과반",
    "Statistic ({rule})": "통계량 ({rule})",
    "Juror groups": "배심원 집단",
    "Facet": "구분",
    "Group": "집단",
    "Expertise": "전문성",
    "expert": "전문가",
    "non-expert": "비전문가",
    "Age band": "연령대",
    "Sex": "성별",
    "Detection = share of the group's cast votes (all rounds) naming an AI player; jurors = jurors with the label, "
    "including those who only abstained.": "탐지율 = 집단의 투표 (전체 라운드) 중 AI 참가자를 지목한 비율; 배심원 = 그 값을 가진 배심원 수 (기권만 한 "
    "배심원 포함).",
    "No juror carried a group label.": "집단 값이 있는 배심원이 없습니다.",
    "Juror": "배심원",
    "Hits": "적중",
    "Hit rate %": "적중률 %",
    "First {shown} of {count} jurors; all are in jurors.csv.": "배심원 {count}명 중 처음 {shown}명; 전체는 jurors.csv에 있습니다.",
    "Mean hit rate {rate} % over the jurors who cast a vote (hits = votes naming an AI player).": "투표한 배심원의 평균 적중률 {rate} % (적중 = AI 참가자를 지목한 투표).",
    "Confidence": "확신도",
    "Mean confidence, right votes": "평균 확신도, 맞힌 투표",
    "Mean confidence, wrong votes": "평균 확신도, 틀린 투표",
    "Brier score": "Brier 점수",
    "Votes with a confidence": "확신도가 있는 투표",
    "Confidence on a 1–5 scale; the Brier score reads confidence as the probability of being right (1 = a blind "
    "guess, 5 = certain); lower is better.": "확신도는 1–5 척도입니다. Brier 점수는 확신도를 맞힐 확률로 읽습니다 (1 = 무작위 추측, 5 = 확실); 낮을수록 "
    "좋습니다.",
    # the judge beside the graders (the judge: 심사 모델, grader: 채점자, final mark: 최종 채점, as the web pages say)
    "The judge beside the graders": "채점자와 심사 모델의 일치도",
    "A language model (the judge) suggested grades for the open answers: correct or incorrect, and 0–5 on "
    "MovieCORE's five dimensions. Here its suggestions are set beside each grader's own marks and beside the final "
    "marks. The suggestions never counted as marks: a suggestion became a mark only when a grader took it, and then "
    "it is that grader's own mark.": "언어 모델(심사 모델)이 서술형 답변의 채점을 제안했습니다: 정답 또는 오답, 그리고 MovieCORE의 다섯 차원별 "
    "0–5점. 여기서는 그 제안을 각 채점자의 채점, 그리고 최종 채점과 나란히 비교합니다. 제안은 채점으로 반영되지 "
    "않았습니다: 채점자가 제안을 받아들였을 때에만 채점이 되었고, 그때는 그 채점자 자신의 채점입니다.",
    "Judge: {model}": "심사 모델: {model}",
    "Rater": "평가자",
    "Measure": "척도",
    "Answers both marked": "둘 다 채점한 답변",
    "κ / weighted κ": "κ / 가중 κ",
    "Spearman ρ": "스피어만 ρ",
    "Marks taken from the judge": "심사 모델에게서 받아들인 채점",
    "Final marks": "최종 채점",
    "Correct/incorrect": "정답/오답",
    "Accuracy": "정확성",
    "Comprehensiveness": "포괄성",
    "Depth": "깊이",
    "Evidence": "근거",
    "Coherence": "일관성",
    "undefined: {reason}": "정의되지 않음: {reason}",
    "no answer both marked": "둘 다 채점한 답변 없음",
    "every answer in one category": "모든 답변이 한 범주",
    "a single answer": "답변이 하나뿐",
    "one grade throughout": "모두 같은 점수",
    "Judge": "심사 모델",
    "correct": "정답",
    "incorrect": "오답",
    "κ on correct/incorrect: Cohen's kappa (Cohen, 1960); κ on a 0–5 dimension: Cohen's weighted kappa with "
    "quadratic weights (Cohen, 1968); Spearman's ρ (ties at their average rank) as a rank check. Each is taken over "
    "the answers both the judge and the rater marked on that measure; 1 is perfect agreement, 0 what chance gives. "
    "Final marks: the marks the reports use, set from the graders' agreement or by hand. The tables: the verdicts on "
    "the answers both marked, rows the rater's, columns the judge's; the shaded diagonal is where they agree. A mark "
    "a grader took from the judge is that grader's, and agrees with the judge.": "정답/오답의 κ: 코헨의 카파 (Cohen, 1960); 0–5점 차원의 κ: 이차 가중치를 쓴 코헨의 가중 카파 "
    "(Cohen, 1968); 스피어만 ρ (동점은 평균 순위): 순위 확인용. 모두 해당 척도에서 심사 모델과 채점자가 둘 다 "
    "채점한 답변만으로 계산합니다. 1은 완전한 일치, 0은 우연 수준의 일치입니다. 최종 채점: 보고서가 쓰는 채점으로, "
    "채점자들의 일치로 또는 직접 확정한 것. 표: 둘 다 채점한 답변의 정답/오답 판정, 행은 채점자, 열은 심사 모델; "
    "음영 대각선이 일치한 답변입니다. 채점자가 심사 모델에게서 받아들인 채점은 그 채점자의 채점이며, 심사 모델과 "
    "일치합니다.",
    "A grader's marks taken from the judge agree with it by construction: their count is shown per grader.": "채점자가 "
    "심사 모델에게서 받아들인 채점은 당연히 심사 모델과 일치합니다: 그 수를 채점자별로 표시합니다.",
    # the question set
    "Question set": "문항 구성",
    "<b>{count}</b> untagged": "태그 없음 <b>{count}</b>개",
    "<b>{total}</b> questions: {mcq} multiple-choice, {open} open-ended; {shot} on shot clips, {scene} on scene "
    "clips, {none} without a clip kind; {untagged}.": "문항 <b>{total}</b>개: 객관식 {mcq}개, 서술형 {open}개; 샷 클립 {shot}개, 장면 클립 {scene}개, 클립 종류 "
    "없음 {none}개; {untagged}.",
    "Value": "값",
    "all": "전체",
    "questions": "문항",
    "type": "유형",
    "mcq": "객관식",
    "open": "서술형",
    "clip": "클립",
    "shot": "샷",
    "scene": "장면",
    "tags": "태그",
    "untagged": "태그 없음",
    "Element frequency: questions tagged with each CogME element (optional elements only when used), and per player "
    "how many of them were answered correctly (solid) or missed (light).": "요소 빈도: 각 CogME 요소가 태그된 문항 수 (선택 요소는 쓰인 경우만), 그리고 참가자마다 그중 맞힌 문항 "
    "(진한 색)과 놓친 문항 (옅은 색).",
    "Q&amp;A sheet": "문답표",
    "{correct} correct, {wrong} wrong, {none} no answer (counts as wrong), {ungraded} not graded yet (left out of "
    "the profiles). Elements: T = TARGET ({key} key target), C = CONTENT, Th = THINKING.": "{correct} 정답, {wrong} 오답, {none} 무응답 (오답으로 셈), {ungraded} 아직 채점 안 됨 (프로필에서 제외). "
    "요소: T = TARGET ({key} 핵심 대상), C = CONTENT, Th = THINKING.",
    "<b>Players {first}–{last} of {count}</b>": "<b>참가자 {count}명 중 {first}–{last}</b>",
    "Q": "Q",
    "Elements": "요소",
    "Answer: {answer}": "정답: {answer}",
    # the charts (analysis/charts.py)
    "votes": "표",
    "chance: {votes} votes per player": "우연 수준: 참가자당 {votes}표",
    "detection": "탐지율",
    "detection (% of cast votes naming an AI)": "탐지율 (AI를 지목한 투표의 %)",
    "95 % Wilson CI": "95 % Wilson 신뢰구간",
    "chance level (AI players / players)": "우연 수준 (AI 참가자 수 / 참가자 수)",
    "threshold {threshold} %": "기준값 {threshold} %",
    "AI passed": "AI 통과",
    "AI detected": "AI 탐지됨",
    "questions tagged": "태그된 문항",
    "questions tagged with the element": "요소가 태그된 문항",
    "answered correctly": "맞힘",
    "missed (per player, same scale)": "놓침 (참가자별, 같은 척도)",
    # the study report (analysis/study_report/): several sessions read together (연구 study, 문항 은행 bank)
    "{name} - Video Turing Test study": "{name} - 비디오 튜링 테스트 연구",
    "{count} sessions read together. Each keeps its own design, question bank and pass rule: a player, a juror and "
    "a question belong to their session (a question is shared only when its qid and its text agree), and each "
    "session is judged under its own rule.": "세션 {count}개를 함께 읽습니다. 세션마다 자신의 설계, 문항 은행, 통과 규칙을 유지합니다: 참가자, 배심원, "
    "문항은 그 세션에 속하며 (문항은 qid와 문장이 모두 같을 때에만 공유됩니다), 세션마다 자신의 규칙으로 판정합니다.",
    "Name": "이름",
    "Bank": "문항 은행",
    "{players} ({ai} AI)": "{players}명 (AI {ai}명)",
    "Design hashes": "설계 해시",
    "The design hash identifies each session's design (questions, rounds, players, rules) as it was run.": "설계 해시는 "
    "각 세션이 실행된 그대로의 설계 (문항, 라운드, 참가자, 규칙)를 식별합니다.",
    "Composition": "구성",
    "Stage or program": "발달 단계 또는 프로그램",
    "Humans by developmental stage; AI players by the program(s) that answered for them.": "인간 참가자는 발달 "
    "단계별로, AI 참가자는 그 참가자 대신 답한 프로그램별로 셉니다.",
    "jurors": "배심원",
    "A juror belongs to one session: J1 of two sessions are two jurors. Jurors without a label are left out.": "배심원은 "
    "한 세션에 속합니다: 두 세션의 J1은 서로 다른 배심원 두 명입니다. 값이 없는 배심원은 제외합니다.",
    "Questions by CogME element": "CogME 요소별 문항",
    "Questions tagged with each element in each session's own set (elements no session tagged are left out); a "
    "question asked in two sessions counts in both.": "각 세션의 문항 구성에서 요소마다 태그된 문항 수 (어느 세션에도 "
    "태그되지 않은 요소는 제외); 두 세션에서 출제된 문항은 양쪽에 모두 셉니다.",
    "AI detection": "AI 탐지",
    "No session has votes.": "투표가 있는 세션이 없습니다.",
    "Pooled over the sessions, <b>{detection} %</b> of {votes} cast votes named an AI player (95 % Wilson CI {ci} %) "
    "where blind votes would reach {chance} %: exact {p} (one-sided, against the sessions' own chance levels).": "세션을 "
    "합치면 투표 {votes}표 중 <b>{detection} %</b>가 AI 참가자를 지목했습니다 (95 % Wilson 신뢰구간 {ci} %). 무작위 "
    "투표라면 {chance} %입니다: 정확검정 {p} (단측, 각 세션 자신의 우연 수준 대비).",
    "Detection = share of cast votes naming an AI player; whiskers: 95 % Wilson interval; dashed: each session's "
    "chance level (AI players / players), for all sessions the vote-weighted mean of them. Sessions without votes are "
    "left out.": "탐지율 = 투표 중 AI 참가자를 지목한 비율; 오차 막대: 95 % Wilson 구간; 점선: 각 세션의 우연 수준 "
    "(AI 참가자 수 / 참가자 수), 전체 세션은 그 값들을 투표 수로 가중한 평균. 투표가 없는 세션은 제외합니다.",
    "all sessions": "전체 세션",
    "p: one-sided exact binomial test of a session's AI votes against its chance level; for all sessions, the exact "
    "tail of the sum of the sessions' binomials, each at its own chance level (Poisson-binomial, by convolution). "
    "Both treat votes as independent, which one juror's votes are not: read them as approximate.": "p: 세션의 AI "
    "득표를 그 세션의 우연 수준 대비 단측 정확 이항검정한 값; 전체 세션은 세션마다 자신의 우연 수준을 갖는 이항분포들의 "
    "합에 대한 정확한 꼬리 확률 (포아송-이항분포, 합성곱으로 계산). 둘 다 투표를 서로 독립으로 보지만 한 배심원의 "
    "투표들은 독립이 아니므로 근사치로 읽으세요.",
    "Do the sessions differ?": "세션 간에 차이가 있는가?",
    "Test": "검정",
    "Likelihood-ratio (G) test, chi-squared p": "우도비 (G) 검정, 카이제곱 p",
    "Monte-Carlo exact p of G ({draws} draws, seed {seed})": "G의 몬테카를로 정확 p ({draws}회 추출, 시드 {seed})",
    "Whether detection differs between the sessions: the likelihood-ratio test of a logistic model with the session "
    "as a factor against one common rate (the G-test of homogeneity on the sessions × (named an AI, did not) table). "
    "The Monte-Carlo p draws the same statistic with the hits spread at random over all votes (the margins kept): it "
    "holds when counts are small.": "세션 간 탐지율의 차이: 세션을 요인으로 넣은 로지스틱 모형과 공통 비율 하나의 "
    "모형을 비교하는 우도비 검정 (세션 × (AI 지목, 비지목) 표에 대한 동질성 G-검정). 몬테카를로 p는 주변합을 유지한 채 "
    "적중을 전체 투표에 무작위로 배분하여 같은 통계량을 뽑습니다: 빈도가 작을 때에도 성립합니다.",
    "Verdicts, each session under its own rule": "판정, 세션마다 자신의 규칙으로",
    "Rounds the AI passed": "AI가 통과한 라운드",
    "{passed} of {judged}": "{judged}개 중 {passed}개",
    "Mean detection %": "평균 탐지율 %",
    "CogME profiles by developmental stage": "발달 단계별 CogME 프로필",
    "CogME profiles by AI program": "AI 프로그램별 CogME 프로필",
    "No answers to profile.": "프로필을 만들 답변이 없습니다.",
    "Accuracy = correct / attempts, where an attempt is one answer (no answer counts as wrong) to a question tagged "
    "with the element. Elements are pooled, not questions: each answer counts under its own session's tags, so "
    "sessions with other banks add up. The radars plot accuracy, unweighted: the sessions' own reports may score "
    "with a weighted method.": "정답률 = 정답 수 / 출제 수, 출제 하나는 해당 요소가 태그된 문항에 대한 답변 하나입니다 "
    "(무응답은 오답으로 셈). 문항이 아니라 요소를 합칩니다: 답변마다 자기 세션의 태그로 세므로 문항 은행이 다른 세션도 "
    "더할 수 있습니다. 레이더는 가중하지 않은 정답률을 그립니다: 세션별 보고서는 가중 방식으로 채점했을 수 있습니다.",
    "AI answers grouped by the program that gave them (from each answer's provenance), whichever AI player they "
    "answered for. Accuracy = correct / attempts; elements pooled over the sessions, each answer under its own "
    "session's tags. The radars plot accuracy, unweighted: the sessions' own reports may score with a weighted "
    "method.": "AI 답변을 (답변마다 기록된 출처에 따라) 그 답변을 낸 프로그램별로 묶습니다. 어느 AI 참가자를 대신해 "
    "답했는지는 따지지 않습니다. 정답률 = 정답 수 / 출제 수; 요소는 세션에 걸쳐 합치며 답변마다 자기 세션의 태그로 "
    "셉니다. 레이더는 가중하지 않은 정답률을 그립니다: 세션별 보고서는 가중 방식으로 채점했을 수 있습니다.",
    "Stage": "발달 단계",
    "Program": "프로그램",
    "no stage": "발달 단계 없음",
    "no program recorded": "프로그램 기록 없음",
    "Accuracy % per element, all sessions pooled; rings at 0, 25, 50, 75 and 100 %; n = attempts of all the groups "
    "on the element.": "요소별 정답률 %, 전체 세션 합산; 원은 0, 25, 50, 75, 100 %; n = 해당 요소에 대한 모든 "
    "집단의 출제 수.",
    "Per element, all sessions": "요소별, 전체 세션",
    "Accuracy % (correct / attempts); – where the group had no attempt.": "정답률 % (정답 수 / 출제 수); – 는 그 "
    "집단에 출제가 없었음을 뜻합니다.",
    "Juror groups across sessions": "세션 전체의 배심원 집단",
    "Per label of each juror facet: the jurors of each session carrying it and their cast votes (all rounds), then "
    "all sessions together (a juror belongs to one session). Detection = share of those votes naming an AI player, "
    "with its 95 % Wilson interval.": "배심원 구분의 값마다: 각 세션에서 그 값을 가진 배심원과 그들의 투표 (전체 "
    "라운드), 그리고 전체 세션 합계 (배심원은 한 세션에 속합니다). 탐지율 = 그 투표 중 AI 참가자를 지목한 비율과 "
    "95 % Wilson 구간.",
    "Judgment sheets: exposure per question": "판정지: 문항별 노출도",
    "No judgment sheet was filled in.": "작성된 판정지가 없습니다.",
    "Exposure = share of the question's \"looks like the AI\" marks that fell on an AI player's answer; chance = the "
    "share blind marks would give it (its answers among those the jury read). A question asked in several sessions "
    "(same qid and text) gets a row for all of them, its chance weighted by each session's marks.": "노출도 = 문항의 "
    "'AI 같음' 표시 중 AI 참가자의 답변에 붙은 비율, 우연 수준 = 무작위로 표시했을 때 AI에 붙을 비율 (배심원이 읽은 "
    "답변 중 AI 답변의 비율). 여러 세션에서 출제된 문항 (qid와 문장이 같음)은 전체 세션 합계 행도 있으며, 그 우연 "
    "수준은 세션별 표시 수로 가중합니다.",
    "Shared questions": "공유 문항",
    "No question is asked in more than one session.": "둘 이상의 세션에서 출제된 문항이 없습니다.",
    "Sessions": "세션",
    "A question is shared when its qid and its text are the same in both sessions.": "qid와 문장이 두 세션에서 모두 "
    "같을 때 문항을 공유한 것으로 봅니다.",
    "The same qid, another question": "같은 qid, 다른 문항",
    "These qids name different questions in different sessions (other banks): they are never pooled.": "이 qid들은 "
    "세션마다 (다른 문항 은행의) 다른 문항을 가리킵니다: 합치지 않습니다.",
    # juries compared (session_report/juries_compared.py, jury_charts.py, study_report/juries.py)
    "Juries compared": "배심원단 비교",
    "Juries: {names}. Detection = share of a jury's cast votes naming an AI player, with its 95 % Wilson interval; "
    "the live tallies above count the live jury alone.": "배심원단: {names}. 탐지율 = 배심원단의 투표 중 AI 참가자를 "
    "지목한 비율과 95 % Wilson 구간; 위의 현장 집계는 현장 배심원단만 셉니다.",
    "Pooled over rounds": "라운드 합산",
    "Per round": "라운드별",
    "Across juries": "배심원단 간 검정",
    "Alias": "별칭",
    "Share of votes per player": "참가자별 득표율",
    "Across juries: no test ({note}).": "배심원단 간: 검정 없음 ({note}).",
    "Across juries, pooled: Fisher's exact test, odds ratio {statistic}, {p}.": "배심원단 간, 합산: Fisher 정확 검정, "
    "오즈비 {statistic}, {p}.",
    "Across juries, pooled: chi-squared test, χ² = {statistic} (df {dof}), {p}.": "배심원단 간, 합산: 카이제곱 검정, "
    "χ² = {statistic} (자유도 {dof}), {p}.",
    "Fisher's exact test": "Fisher 정확 검정",
    "chi-squared test": "카이제곱 검정",
    "Bars: detection per jury, per round and pooled; whiskers: 95 % Wilson interval; dashed: chance (AI players / "
    "players; pooled: weighted by the jury's votes per round); a grey dash: no cast vote.": "막대: 배심원단별 탐지율 "
    "(라운드별, 합산); 수염: 95 % Wilson 구간; 점선: 우연 수준 (AI 참가자 / 참가자; 합산은 배심원단의 라운드별 투표 "
    "수로 가중); 회색 짧은 선: 투표 없음.",
    "Test across juries on (AI votes, other cast votes) x jury: Fisher's exact test (two-sided; statistic: the odds "
    "ratio, first jury over second) for two juries, the chi-squared test of independence for three or more. Votes "
    "are treated as independent.": "배심원단 간 검정은 (AI 득표, 그 밖의 투표) x 배심원단 표에 대해: 배심원단이 둘이면 "
    "Fisher 정확 검정 (양측; 통계량: 오즈비, 첫째 배심원단 / 둘째), 셋 이상이면 카이제곱 독립성 검정. 투표는 서로 "
    "독립으로 봅니다.",
    "Each jury's share of its cast votes in the round per player (by alias; an AI player's label in vermillion); "
    "dashed: chance (100 / players of the round).": "라운드에서 배심원단의 투표 중 각 참가자가 받은 비율 (별칭별; AI "
    "참가자의 이름은 주홍색); 점선: 우연 수준 (100 / 라운드의 참가자 수).",
    "AI {model}": "AI {model}",
    "live jury": "현장 배심원단",
    "displaced jury": "사후 배심원단",
    "pooled": "합산",
    "share of votes": "득표율",
    "chance": "우연 수준",
    "R{round}": "R{round}",
    "Each jury pooled over the sessions it judged (an AI jury is its model: one model's jurors pool across "
    "sessions): detection = share of its cast votes naming an AI player, with its 95 % Wilson interval; chance = the "
    "sessions' chance levels weighted by the jury's votes.": "배심원단마다 판정한 세션들을 합산 (AI 배심원단은 그 "
    "모델로 구분: 같은 모델의 배심원은 세션을 넘어 합산): 탐지율 = 그 투표 중 AI 참가자를 지목한 비율과 95 % Wilson "
    "구간; 우연 수준 = 세션별 우연 수준을 배심원단의 투표 수로 가중한 값.",
    "Per session": "세션별",
    "Test across juries on (AI votes, other cast votes) x jury: Fisher's exact test (two-sided) for two juries, the "
    "chi-squared test of independence for three or more. The pooled test compares like with like only when the "
    "juries judged the same sessions and rounds.": "배심원단 간 검정은 (AI 득표, 그 밖의 투표) x 배심원단 표에 대해: "
    "배심원단이 둘이면 Fisher 정확 검정 (양측), 셋 이상이면 카이제곱 독립성 검정. 합산 검정은 배심원단들이 같은 세션과 "
    "라운드를 판정했을 때만 같은 것끼리 비교합니다.",
}
