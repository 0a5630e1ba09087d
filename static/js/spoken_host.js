// The host console's "Spoken answers" card: for each player who answers aloud, the latest recording of the current
// question to hear, a transcript suggestion on request (the server's transcription backend), and the host's
// confirmation: the text heard (open question) or the option said (multiple choice), sent as `confirm_spoken`.
// The confirmed answer goes through the normal answer path; the recording itself never leaves the host's side.
import { clockTime, format, h } from "./client.js";

// One list item per spoken player, kept across renders: its recording line is redrawn on every event, its
// confirmation form only when the take changes (so what the host is typing survives other events).
const items = new Map();

export function renderSpoken(view, status, { S, node, live }) {
  const card = node("spoken-card");
  const spoken = (view.players || []).filter((p) => (p.answer_modes || []).includes("spoken"));
  card.hidden = !spoken.length;
  if (!spoken.length) return;
  const question = view.question;
  const open = Boolean(question) && ["answering", "answers_closed"].includes(status.phase);
  const round = (view.rounds || []).find((r) => r.round === status.round);
  const takes = (question && (view.recordings || {})[String(question.id)]) || [];
  for (const player of spoken) {
    let item = items.get(player.id);
    if (!item) {
      item = { line: h("p", { class: "spoken-line" }), body: h("div", { class: "spoken-body" }),
        result: h("p", { class: "agent-result", role: "status" }), key: null };
      item.li = h("li", { class: "spoken-player", "data-player": player.id },
        h("p", { class: "agent-name" }, player.name), item.line, item.body, item.result);
      items.set(player.id, item);
      node("spoken").append(item.li);
    }
    const playing = !round || !round.participants || round.participants.includes(player.id);
    const take = takes.find((row) => row.player === player.id);
    const answer = question && ((view.answers || {})[question.id] || []).find((r) => r.player.id === player.id);
    item.line.replaceChildren(lineOf(S, question, open, playing, take, answer));
    const key = open && playing && take ? `${question.id}:${take.file}` : "";
    if (item.key !== key) {
      item.key = key;
      item.result.textContent = "";
      item.form = key ? confirmation(S, live, node, player, question, take, item.result) : null;
      item.body.replaceChildren(...(item.form ? item.form.nodes : []));
    }
    // a suggestion another console asked for (or this one, before a reload) arrives with the take
    if (item.form && take.suggestion) item.form.suggested(take.suggestion);
  }
}

// How sure a suggestion is, in words a host acts on: the level the server gives (vtt/transcribe/levels.py), which
// says what the backend's figure was measured to mean (bench/bench_transcribe.py, docs/benchmarks.md).  The figure
// itself is not shown: pocketsphinx said 100 % of "gervais" for a beep.
export const LEVELS = ["sure", "likely", "unsure", "none", "unknown"];
export function levelOf(suggestion) {
  return LEVELS.includes(suggestion && suggestion.level) ? suggestion.level : "unknown";
}

// The suggestion's line: what was heard, by what, and how sure, always as text (a backend's words are never markup).
export function showSuggestion(heard, S, suggestion) {
  const level = levelOf(suggestion);
  heard.textContent = level === "none"
    ? format(S.spoken_none, { backend: suggestion.backend })
    : `${format(S.spoken_heard, { text: suggestion.text || "—", backend: suggestion.backend })} ${S[`spoken_${level}`]}`;
  heard.className = `spoken-suggestion sure-${level}`;
  heard.dataset.sure = level;
}

function lineOf(S, question, open, playing, take, answer) {
  if (!question || !open) return h("span", { class: "muted" }, S.spoken_idle);
  if (!playing) return h("span", { class: "muted" }, S.agent_sits_out);
  const confirmed = answer && answer.provenance && answer.provenance.spoken
    && answer.provenance.recording === (take && take.file);
  if (!take) return h("span", { class: "muted" }, S.spoken_waiting);
  const seconds = take.duration_ms ? (take.duration_ms / 1000).toFixed(1) : "?";
  return h("span", {}, format(S.spoken_take, { seconds, time: clockTime(take.ended_at) }),
    confirmed ? h("span", { class: "badge" }, ` ${S.spoken_confirmed}`) : "");
}

function confirmation(S, live, node, player, question, take, result) {
  const card = node("spoken");
  const url = `${card.dataset.recordings}${encodeURIComponent(take.file)}`;
  const audio = h("audio", { controls: true, playsinline: true, "webkit-playsinline": true, preload: "auto", src: url,
    class: "spoken-audio" });
  let suggested = null;  // {text, confidence, backend, level}: what the backend heard, if asked
  const label = format(S.spoken_label, { name: player.name });
  const field = question.type === "mcq"
    ? h("select", { name: "choice", required: true, "aria-label": label },
      h("option", { value: "" }, S.spoken_option),
      question.choices.map((choice, index) => h("option", { value: String(index) }, `${index + 1} · ${choice}`)))
    : h("textarea", { name: "text", rows: 2, required: true, "aria-label": label, placeholder: S.spoken_type });
  const heard = h("p", { class: "spoken-suggestion", role: "status" });
  const show = (suggestion) => {
    if (suggested && suggested.text === suggestion.text && suggested.backend === suggestion.backend) return;
    suggested = suggestion;
    showSuggestion(heard, S, suggestion);
    if (question.type === "mcq") {
      const said = optionSaid(suggestion.text, question.choices);
      if (said !== null && !field.value) field.value = String(said);
    } else if (!field.value.trim()) {
      field.value = suggestion.text;
    }
  };
  const suggest = h("button", { type: "button", class: "secondary suggest" }, S.spoken_suggest);
  suggest.addEventListener("click", async () => {
    suggest.disabled = true;
    heard.textContent = S.spoken_listening;
    try {
      const response = await fetch(`${url}/transcribe`, { method: "POST", credentials: "same-origin",
        headers: { Accept: "application/json", "X-CSRFToken": card.dataset.csrf } });
      const reply = await response.json();
      if (!reply.ok) { heard.textContent = reply.message; heard.className = "spoken-suggestion"; return; }
      suggested = null;  // asked again: shown again, even when the same
      show({ text: reply.text, confidence: reply.confidence, backend: reply.backend, level: reply.level });
    } catch (error) {
      heard.textContent = format(S.refused, { message: String(error) });
    } finally {
      suggest.disabled = false;
    }
  });
  const form = h("form", { class: "edit-row spoken-confirm" }, field,
    h("button", { type: "submit" }, S.spoken_confirm));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const answer = question.type === "mcq" ? { choice: Number(field.value) } : { text: field.value.trim() };
    result.textContent = S.sending;
    const reply = await live.send("host", { action: "confirm_spoken", player: player.id, question: question.id,
      file: take.file, transcribed_by: transcriber(suggested, answer, question), ...answer }, "host");
    result.textContent = reply.ok ? S.spoken_saved : format(S.refused, { message: reply.error.message });
    result.className = `agent-result ${reply.ok ? "received" : "refused"}`;
  });
  return { nodes: [audio, h("div", { class: "edit-row" }, suggest), heard, form], suggested: show };
}

// Who turned the recording into the confirmed answer: the backend when its suggestion was kept as it was, the
// backend and the host when the host corrected it, the host alone otherwise.
function transcriber(suggested, answer, question) {
  if (!suggested || !suggested.text) return "host";  // no speech heard: nothing was kept
  const kept = question.type === "mcq"
    ? optionSaid(suggested.text, question.choices) === answer.choice
    : suggested.text.trim() === answer.text;
  return (kept ? suggested.backend : `${suggested.backend}, corrected by the host`).slice(0, 200);
}

// The option a transcript names: its number ("two", "2", "number 2") or words of its text; null when unclear.
const NUMBER_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
export function optionSaid(text, choices) {
  const words = (text || "").toLowerCase().match(/[\p{L}\p{N}]+/gu) || [];
  for (const word of words) {
    const index = /^\d+$/.test(word) ? Number(word) - 1 : NUMBER_WORDS.indexOf(word);
    if (index >= 0 && index < choices.length) return index;
  }
  const said = new Set(words);
  const scores = choices.map((choice) => {
    const own = (choice.toLowerCase().match(/[\p{L}\p{N}]+/gu) || []).filter((w) => w.length > 2);
    return own.length ? own.filter((w) => said.has(w)).length / own.length : 0;
  });
  const best = Math.max(...scores);
  return best > 0 && scores.filter((score) => score === best).length === 1 ? scores.indexOf(best) : null;
}
