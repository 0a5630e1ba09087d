// The pages' view rules (static/js/view.js) over the cases of tests/data/view_cases.json, which
// tests/test_bot_view.py runs through vtt/client/view.py too (the case format is described there).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { View } from "../../static/js/view.js";

const cases = JSON.parse(readFileSync(new URL("../data/view_cases.json", import.meta.url), "utf8"));

for (const { name, start, events, expect } of cases) {
  test(name, () => {
    const view = new View();
    if (start) view.snapshot(start);
    const applied = events.map(([event, payload]) => view.event(event, payload));
    assert.deepEqual(applied, expect.applied);
    for (const attribute of ["known", "stale", "revoked"]) {
      if (attribute in expect) assert.deepEqual(view[attribute], expect[attribute], attribute);
    }
    for (const [key, value] of Object.entries(expect.data || {})) assert.deepEqual(view.data[key], value, key);
    assert.deepEqual((expect.absent || []).filter((key) => key in view.data), []);
  });
}
