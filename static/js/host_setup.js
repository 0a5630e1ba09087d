// The new-session form: add player and juror rows, show only the juror source chosen, and the answer modes only for
// human players (an AI player answers in text: its boxes are disabled, so not sent).
// Without JavaScript the form still works: every row and every source is simply shown.

function addRow(kind) {
  const rows = document.getElementById(`${kind}-rows`);
  const template = document.getElementById(`${kind}-template`);
  const next = rows.querySelectorAll(`[data-${kind}-row]`).length;
  // Field names count from 0 (players-0-name), legends from 1, as the server's rows do.
  const html = template.innerHTML.replaceAll("__NUMBER__", String(next + 1)).replaceAll("__N__", String(next));
  rows.insertAdjacentHTML("beforeend", html);
  rows.lastElementChild.querySelector("input")?.focus();
}

function showJurorSource() {
  const chosen = document.querySelector("input[name=jurors_source]:checked")?.value;
  for (const block of document.querySelectorAll(".juror-source")) {
    block.hidden = block.dataset.source !== chosen;
  }
}

function showAnswerModes(kindSelect) {
  const row = kindSelect.closest("[data-player-row]");
  const modes = row && row.querySelector("[data-answer-modes]");
  if (!modes) return;
  const human = kindSelect.value !== "ai";
  modes.hidden = !human;
  for (const box of modes.querySelectorAll("input")) box.disabled = !human;
}

const isKind = (target) => target instanceof HTMLSelectElement && /^players-\d+-kind$/.test(target.name);
document.addEventListener("change", (event) => { if (isKind(event.target)) showAnswerModes(event.target); });
for (const select of document.querySelectorAll("select[name$='-kind']")) if (isKind(select)) showAnswerModes(select);

for (const button of document.querySelectorAll("[data-add-row]")) {
  button.addEventListener("click", () => addRow(button.dataset.addRow));
}
for (const radio of document.querySelectorAll("input[name=jurors_source]")) {
  radio.addEventListener("change", showJurorSource);
}
showJurorSource();
