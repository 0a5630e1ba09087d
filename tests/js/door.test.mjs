// The open join's door code on the host's console and the stage (static/js/door.js): asked for on every connection
// and every DOOR_REFRESH_MS, drawn when it changes, and put away when the page wants none or is offline.
import assert from "node:assert/strict";
import { test } from "node:test";

import { DOOR_REFRESH_MS, followDoorCode } from "../../static/js/door.js";

// A Connection whose socket answers "door" with the codes given, one per request (null: no answer in time).
function fakeLive(codes) {
  const handlers = {};
  const asked = [];
  const socket = {
    connected: true,
    on: (name, handler) => { handlers[name] = handler; },
    timeout: () => ({
      emit: (event, payload, reply) => {
        asked.push(event);
        const code = codes.shift();
        if (code === null) reply(new Error("timeout"));
        else reply(null, { ok: true, door: code });
      },
    }),
  };
  return { socket, asked, connect: () => handlers.connect() };
}

const settle = () => new Promise((resolve) => { setImmediate(resolve); });

test("a new code is drawn, the same code is not drawn again, and every connection asks anew", async (t) => {
  t.mock.timers.enable({ apis: ["setInterval"] });
  const live = fakeLive(["111111", "111111", "222222", "222222"]);
  const drawn = [];
  const door = followDoorCode(live, { wanted: () => true, show: (code) => drawn.push(code) });
  await door.refresh();
  t.mock.timers.tick(DOOR_REFRESH_MS);
  await settle();
  assert.deepEqual(drawn, ["111111"]);
  t.mock.timers.tick(DOOR_REFRESH_MS);
  await settle();
  assert.deepEqual(drawn, ["111111", "222222"]);
  live.connect();  // after a reconnection the code is drawn again, even unchanged
  await settle();
  assert.deepEqual(drawn, ["111111", "222222", "222222"]);
  assert.equal(door.shown, "222222");
});

test("a page that wants no code, or is offline, hides it and asks for none; wanted again, it shows the code", async (t) => {
  t.mock.timers.enable({ apis: ["setInterval"] });
  const live = fakeLive(["333333", "333333"]);
  let wanted = true;
  const events = [];
  const door = followDoorCode(live, {
    wanted: () => wanted, show: (code) => events.push(code), hide: () => events.push("hidden"),
  });
  await door.refresh();
  wanted = false;
  await door.refresh();
  live.socket.connected = false;
  wanted = true;
  await door.refresh();
  assert.deepEqual(live.asked, ["door"]);
  live.socket.connected = true;
  await door.refresh();  // the same code as before it was hidden: shown again
  assert.deepEqual(events, ["333333", "hidden", "hidden", "333333"]);
});

test("no answer in time leaves the code on screen as it was", async (t) => {
  t.mock.timers.enable({ apis: ["setInterval"] });
  const live = fakeLive(["444444", null]);
  const drawn = [];
  const door = followDoorCode(live, { wanted: () => true, show: (code) => drawn.push(code) });
  await door.refresh();
  await door.refresh();
  assert.deepEqual(drawn, ["444444"]);
  assert.equal(door.shown, "444444");
});
