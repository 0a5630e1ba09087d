// The host console's Agents panel, in words: for one AI player, what its agent is doing or did, and whether the
// `vtt agent` line that plays it is shown. Pure (no page, no connection): tests/js runs it under Node; host.js
// draws the lines. Every word is the page's (S, in the interface's language) and every time is in the page's
// language: the agent's own message (English, from the program) is kept as the status line's tooltip only, and
// shown as such for an error.
import { clockTime, format } from "./client.js";

// summary: view.agents[id] (the last report's status, message and at, absent until the agent reports; answered:
// answers its agent sent; entered: answers the host entered for it). online: its agent is connected now; finished:
// the session is over; handled: the host has entered the current question's answer (an error is no longer an
// alarm); lang: the page's language. Returns {lines: [{text, className, title?}], command: null | "first" | "again"}.
export function agentReport(summary, { online, finished, handled = false, lang } = {}, S) {
  const report = summary || {};
  const answered = report.answered || 0;
  const entered = report.entered || 0;
  const reported = Boolean(report.status);
  const lines = [];
  const did = answered || entered
    ? { text: format(S.agent_tally, { answered, entered }), className: "agent-tally" } : null;
  if (online) {
    if (!reported) lines.push({ text: S.agent_none, className: "muted" });
    else lines.push(statusLine(report, S, lang, handled));
    if (did) lines.push(did);
    return { lines, command: null };
  }
  if (!reported && !answered) {
    if (finished) {
      lines.push({ text: entered ? S.agent_never_played_entered : S.agent_never_played, className: "muted" });
      if (did) lines.push(did);
      return { lines, command: null };
    }
    if (did) lines.push(did);
    return { lines, command: "first" };
  }
  lines.push({ text: finished ? S.agent_done : S.agent_gone, className: finished ? "agent-done" : "muted" });
  if (did) lines.push(did);
  if (reported) {
    const last = statusLine(report, S, lang, true);
    lines.push({ ...last, text: format(S.agent_last, { report: last.text }) });
  }
  return { lines, command: finished ? null : "again" };
}

function statusLine(report, S, lang, handled) {
  const time = clockTime(report.at, lang);
  if (report.status === "error") {
    return { text: format(S.agent_failed, { time, message: report.message || "—" }),
      className: handled ? "agent-status error" : "agent-error" };
  }
  const line = { text: format(S.agent_report, { status: S[`agent_${report.status}`] || report.status, time }),
    className: `agent-status ${report.status}` };
  if (report.message) line.title = report.message;
  return line;
}
