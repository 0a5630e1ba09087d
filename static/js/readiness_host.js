// The host console's "Readiness" card: each human player's and juror's device check (devcheck.js on their page),
// as it arrives: ✓ ready, the named problems, or not checked yet. A host sees before round 1 which phone will not
// play sound, record, or keep up.
import { format, h } from "./client.js";
import { checkStrings, problemText } from "./devcheck.js";

export function renderReadiness(view, { S, node }) {
  const W = checkStrings();
  const readiness = view.readiness || {};
  const people = [
    ...(view.players || []).filter((p) => p.kind !== "ai").map((p) => ({
      name: p.name, key: `player-${p.id}`, check: (readiness.players || {})[String(p.id)] })),
    ...(view.jurors || []).filter((j) => !j.removed).sort((a, b) => a.label.localeCompare(b.label))
      .map((j) => ({ name: j.label, key: `juror-${j.label}`, check: (readiness.jurors || {})[j.label] })),
  ];
  const counts = { ready: 0, problem: 0, unchecked: 0 };
  const rows = people.map(({ name, key, check }) => {
    const state = !check ? "unchecked" : check.problems.length ? "problem" : "ready";
    counts[state] += 1;
    const verdict = state === "unchecked" ? h("span", { class: "muted" }, S.not_checked)
      : state === "ready" ? h("span", { class: "ready" }, S.device_ready)
        : h("span", { class: "problem" }, check.problems.map((code) => problemText(code, check, W)).join(" · "));
    return h("li", { class: `readiness-${state}`, "data-person": key }, h("strong", {}, name), " ", verdict);
  });
  node("readiness-summary").textContent = format(S.readiness_summary, counts);
  node("readiness").replaceChildren(...rows.sort((a, b) => rank(a) - rank(b)));
}

// Problems first: the host acts on them; then those not checked; the ready ones last.
function rank(row) {
  return { "readiness-problem": 0, "readiness-unchecked": 1, "readiness-ready": 2 }[row.className];
}
