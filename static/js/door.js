// The open join's door code, on the host's console and on a stage opened with the host's link (which also puts it in
// its join QR code, so that a phone scanning it joins without typing). The code changes every two minutes: a page
// asks for it every DOOR_REFRESH_MS, and again on every (re)connection (the snapshot comes before "connect").
import { repeatWhileShown } from "./awake.js";

export const DOOR_REFRESH_MS = 15000;
const DOOR_ASK_MS = 5000;

// live: the page's Connection; wanted(): whether the page shows a door code now; show(code): draw a new code;
// hide(): the page has none to show (not wanted, or offline). Returns {refresh(): ask now, shown: the code drawn}.
export function followDoorCode(live, { wanted, show, hide = () => {} }) {
  const door = {
    shown: null,
    async refresh() {
      if (!wanted() || !live.socket.connected) {
        door.shown = null;
        hide();
        return;
      }
      const reply = await new Promise((resolve) => {
        live.socket.timeout(DOOR_ASK_MS).emit("door", null, (error, answer) => resolve(error ? null : answer));
      });
      if (!reply || !reply.ok || reply.door === door.shown) return;
      door.shown = reply.door;
      show(reply.door);
    },
  };
  repeatWhileShown(() => door.refresh(), DOOR_REFRESH_MS);
  live.socket.on("connect", () => { door.shown = null; door.refresh(); });
  return door;
}
