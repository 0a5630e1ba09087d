// What the jury, the players and the stage show alike: the flow line, the question, the tally, reveals (the clip:
// screening.js).
import { repeatWhileShown } from "./awake.js";
import { Connection, boot, format, h, secondsLeft, strings } from "./client.js";

export function phaseText(status, S) {
  if (!status) return "";
  const words = S[`phase_${status.phase}`] || status.phase;
  let line = format(words, { round: status.round || 0, rounds: status.rounds || 0 });
  // Where the flow is, unless the phase's own words already say the round ("Round 1 of 5 is starting.").
  if (status.round && !["lobby", "draft", "finished"].includes(status.phase) && !words.includes("{round}")) {
    const where = [format(S.round_of, { round: status.round, rounds: status.rounds })];
    if (status.position) where.push(format(S.question_of, { position: status.position, count: status.questions_in_round }));
    line = `${where.join(" · ")} — ${line}`;
  }
  const left = secondsLeft(status.deadline);
  if (left !== null && ["answering", "voting"].includes(status.phase)) line += ` (${format(S.seconds_left, { seconds: left })})`;
  return line;
}

// A refusal's words, by its code: their names in the page's words.
const REFUSALS = { bad_token: "link_bad", link_revoked: "link_revoked" };

// What every live page does first: its words and link from the page, the connection (its state and a refusal said
// in the page's header), and the phase line kept ticking while a deadline runs (``status``: the current status or
// null; ``showPhase``: redraws the phase line; a page without deadlines gives neither). ``refusals``: the page's words
// for refusals, by code (their names in S); ``onRefused``: what else the page does then. The callbacks run later,
// once the connection has news. ``maxText``: the longest answer, note or reason (vtt/protocol/vocabulary.py).
export function startPage({ onView, status = null, showPhase = null, refusals = REFUSALS, onRefused = () => {} }) {
  const S = strings();
  const { auth, key, route, max_text: maxText } = boot();
  const node = (id) => document.getElementById(id);
  const live = new Connection({
    auth,
    key,
    route,
    onView,
    onConnection: (online) => connectionLine(node("connection"), online, S),
    onRefused: (error) => {
      showRefusal(node("phase"), node("connection"), error, S, refusals);
      onRefused(error);
    },
  });
  if (status) tickWhileDeadline(status, showPhase);
  return { S, auth, key, node, live, maxText };
}

// Re-render every second while a deadline runs, so the countdown moves.
export function tickWhileDeadline(getStatus, render) {
  return repeatWhileShown(() => {
    const status = getStatus();
    if (status && status.deadline) render();
  }, 1000);
}

// A refused connection (a wrong, replaced or removed link; a full or closed join): said plainly, and no
// "reconnecting" after it: the page has stopped trying.
export function showRefusal(heading, line, error, S, refusals = REFUSALS) {
  const words = S[refusals[error.code]];
  heading.textContent = words || format(S.link_refused, { message: error.message });
  line.textContent = S.not_connected;
  line.classList.add("offline");
}

export function connectionLine(node, online, S) {
  node.textContent = online ? S.connected : S.offline;
  node.classList.toggle("offline", !online);
}

export function questionView(question) {
  const parts = [h("p", { class: "question-text" }, question.text)];
  if (question.type === "mcq" && question.choices.length) {
    parts.push(h("ol", { class: "choices" }, question.choices.map((choice) => h("li", {}, choice))));
  }
  return parts;
}

export function tallyView(tally, S) {
  const most = Math.max(1, ...tally.votes.map((row) => row.votes));
  return h("section", { class: "card tally", "aria-label": format(S.tally_title, { round: tally.round }) },
    h("h2", {}, format(S.tally_title, { round: tally.round })),
    h("ul", { class: "bars" }, tally.votes.map((row) => h("li", {},
      h("span", { class: "bar-alias" }, row.alias),
      h("span", { class: "bar-track" }, h("span", { class: "bar-fill", style: { width: `${(100 * row.votes) / most}%` } })),
      h("span", { class: "bar-votes" }, `${row.votes}`)))),
    h("p", { class: "muted" }, [
      tally.majority ? format(S.majority, { alias: tally.majority }) : S.no_majority,
      tally.abstentions ? ` · ${format(S.abstentions, { count: tally.abstentions })}` : "",
    ].join("")));
}

export function identitiesView(identities, S) {
  return h("section", { class: "card identities" },
    h("h2", {}, format(S.revealed_title, { round: identities.round })),
    h("ul", {}, identities.revealed.map((row) => h("li", { class: row.is_ai ? "is-ai" : "is-human" },
      h("strong", {}, row.alias), " — ",
      row.is_ai ? S.ai : (row.age ? format(S.human_age, { age: row.age }) : S.human)))));
}

// The tallies and reveals of the current round (and earlier ones), newest first.
export function resultsView(data, S) {
  const shown = [];
  const rounds = new Set([...(data.tallies || []).map((t) => t.round), ...(data.identities || []).map((i) => i.round)]);
  for (const number of [...rounds].sort((a, b) => b - a)) {
    const tally = (data.tallies || []).find((t) => t.round === number);
    const revealed = (data.identities || []).find((i) => i.round === number);
    if (revealed) shown.push(identitiesView(revealed, S));
    if (tally) shown.push(tallyView(tally, S));
  }
  return shown;
}
