// The pages' element builder h() (static/js/client.js): listeners are named in `on`, and an attribute that would be
// an inline handler (which the pages' CSP refuses) is refused by h() itself, so a listener is never lost silently.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { before, test } from "node:test";

import { h } from "../../static/js/client.js";

// Just enough of a DOM for h(): elements that record their attributes, listeners and children.
class FakeNode {}
class FakeElement extends FakeNode {
  constructor(tag) {
    super();
    Object.assign(this, { tag, attributes: {}, listeners: {}, children: [], style: {}, textContent: "" });
  }

  setAttribute(name, value) { this.attributes[name] = String(value); }

  addEventListener(type, listener) { (this.listeners[type] ||= []).push(listener); }

  append(child) { this.children.push(child); }
}

before(() => {
  globalThis.Node = FakeNode;
  globalThis.document = {
    createElement: (tag) => new FakeElement(tag),
    createTextNode: (text) => Object.assign(new FakeNode(), { text }),
  };
});

test("listeners given in `on` are listeners, not attributes", () => {
  const click = () => {};
  const input = () => {};
  const node = h("button", { type: "button", on: { click, input } }, "Go");
  assert.deepEqual(node.listeners, { click: [click], input: [input] });
  assert.deepEqual(node.attributes, { type: "button" });
  assert.equal(node.children[0].text, "Go");
});

test("an attribute that would be an inline handler is refused, in any case", () => {
  for (const key of ["onclick", "onChange", "ONLOAD"]) {
    assert.throws(() => h("button", { [key]: () => {} }), TypeError, key);
    assert.throws(() => h("img", { [key]: "alert(1)" }), TypeError, key);
  }
});

test("attributes that merely contain 'on' stay attributes", () => {
  const node = h("span", { class: "online", "data-on": "1", "aria-label": "button" });
  assert.deepEqual(node.attributes, { class: "online", "data-on": "1", "aria-label": "button" });
  assert.deepEqual(node.listeners, {});
});

test("no listener at all, or one left out (null, false), adds nothing", () => {
  assert.deepEqual(h("p", { on: null }).listeners, {});
  assert.deepEqual(h("p", { on: false, hidden: false }).attributes, {});
});

test("text, style and true attributes keep their meaning", () => {
  const node = h("p", { text: "hello", style: { width: "50%" }, hidden: true });
  assert.equal(node.textContent, "hello");
  assert.deepEqual(node.style, { width: "50%" });
  assert.deepEqual(node.attributes, { hidden: "" });
});

test("no page script passes a listener the old way (an onclick: key in h()'s attributes)", () => {
  const folder = new URL("../../static/js/", import.meta.url);
  const offenders = [];
  for (const name of readdirSync(folder).filter((file) => file.endsWith(".js"))) {
    readFileSync(new URL(name, folder), "utf8").split("\n").forEach((line, index) => {
      if (/\bon(?!ce\b)[a-z]+\s*:/.test(line.replace(/\/\/.*$/, ""))) offenders.push(`${name}:${index + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(offenders, []);
});
