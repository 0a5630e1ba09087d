// The host console's flow buttons: each move the server lists as fitting now (status.moves), with its label and
// arguments. Pure (no page, no connection): tests/js runs it under Node.
import { format } from "./client.js";

// Each move's button: its label (and arguments) for the status now. S: the console's words; playLength: how long
// the clip plays, read when the host presses play.
const MOVES = {
  open_lobby: (status, S) => ({ label: S.open_lobby }),
  start_round: (status, S) => ({ label: format(S.start_round, { round: (status.round || 0) + 1 }) }),
  show_question: (status, S) => ({ label: format(S.show_question, { position: (status.position || 0) + 1 }) }),
  // clip_playback "host": the console starts the clip on the stage and every player's page at once.
  play_clip: (status, S, playLength) => ({ label: status.screening ? S.replay_clip : S.play_clip, args: playLength }),
  open_answering: (status, S) => ({ label: S.open_answering }),
  close_answering: (status, S) => ({ label: S.close_answering }),
  extend: (status, S) => ({ label: S.extend, args: { seconds: 30 } }),
  reveal: (status, S) => ({ label: S.reveal }),
  open_vote: (status, S) => ({ label: S.open_vote }),
  close_vote: (status, S) => ({ label: S.close_vote }),
  show_tally: (status, S) => ({ label: S.show_tally }),
  reveal_identities: (status, S) => ({ label: S.reveal_identities }),
  finish: (status, S) => ({ label: S.finish }),
};

const unknownSeen = new Set();  // the unknown moves already said on the console

// The moves the server lists as fitting now, the usual one (the first listed) a primary button, the others
// secondary. A move this page does not know (a newer server's) gets no button and one console warning: the page
// carries on with the moves it knows.
export function movesFor(status, S, playLength) {
  return (status.moves || []).map((action, index) => {
    if (!Object.hasOwn(MOVES, action)) {
      if (!unknownSeen.has(action)) {
        unknownSeen.add(action);
        console.warn(`the server lists a move this page does not know, left out: ${action}`);
      }
      return null;
    }
    return { action, ...MOVES[action](status, S, playLength), secondary: index > 0 };
  }).filter(Boolean);
}

// The Next step card once the session has finished: no move is left, so it says so and links to the results (the
// tallies, the reports, and the juries that may judge the session afterwards); null before the finish.
export function finishedStep(status, S) {
  if (!status || status.phase !== "finished") return null;
  return { text: S.finished_step, link: S.see_results };
}
