// The new-session form: add player and juror rows, and show only the juror source chosen.
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

for (const button of document.querySelectorAll("[data-add-row]")) {
  button.addEventListener("click", () => addRow(button.dataset.addRow));
}
for (const radio of document.querySelectorAll("input[name=jurors_source]")) {
  radio.addEventListener("change", showJurorSource);
}
showJurorSource();
