// The autosave transport against a real local server: saves leave in order, a 5xx is
// retried with back-off, a 403 fetches a new CSRF token (read from the cookie at send
// time) and tries again, a 4xx answer is returned, not retried; as the page goes away,
// saves queued behind a slow one are sent at once.
import assert from "node:assert/strict";
import { after, test } from "node:test";

import { installDom } from "./dom.js";
import { startServer } from "./server.js";

installDom();
const { Saver, csrfToken, uuid4 } = await import("../../assessor_ui/static/assessor_ui/js/net.js");

let failures = {}; // path -> statuses to answer before a 200
let release = null; // answers /slow when called
const server = await startServer(async (request) => {
  const path = new URL(request.url, "http://x").pathname;
  if (path === "/slow") await new Promise((resolve) => (release = resolve));
  if (path === "/csrf") {
    document.cookie = "csrftoken=fresh";
    return { json: {} };
  }
  const queued = failures[path] || [];
  if (queued.length) return { status: queued.shift(), json: { error: "try again" } };
  return { json: { saved: Object.fromEntries(new URLSearchParams(request.body)) } };
});
after(() => server.close());

function saver() {
  const statuses = [];
  const s = new Saver({ csrfUrl: `${server.base}/csrf`, loginUrl: "/login", onStatus: (kind) => statuses.push(kind) });
  return { s, statuses };
}

test("csrfToken reads the cookie; uuid4 is a version 4 UUID", () => {
  document.cookie = "csrftoken=abc%3D1";
  assert.equal(csrfToken(), "abc=1");
  const id = uuid4();
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notEqual(uuid4(), id);
});

test("saves are sent one after the other, in the order they were made", async () => {
  const { s, statuses } = saver();
  const before = server.requests.length;
  const answers = await Promise.all([1, 2, 3].map((n) => s.post(`${server.base}/save`, { n })));
  assert.deepEqual(answers.map((a) => a.body.saved.n), ["1", "2", "3"]);
  const sent = server.requests.slice(before).map((r) => new URLSearchParams(r.body).get("n"));
  assert.deepEqual(sent, ["1", "2", "3"]);
  assert.equal(statuses.at(-1), "saved");
  assert.equal(s.pending, 0);
});

test("a server error is retried after a pause, with the data of send time", async () => {
  failures = { "/flaky": [503] };
  const { s, statuses } = saver();
  let version = 1;
  const started = Date.now();
  const done = s.post(`${server.base}/flaky`, () => ({ version }));
  version = 2; // changed while the first attempt fails
  const answer = await done;
  assert.equal(answer.status, 200);
  assert.equal(answer.body.saved.version, "2");
  assert.ok(Date.now() - started >= 450, "waited before the retry");
  assert.ok(statuses.includes("retrying"));
});

test("a 403 fetches a new CSRF token and sends again with it", async () => {
  failures = { "/guarded": [403] };
  document.cookie = "csrftoken=stale";
  const before = server.requests.length;
  const { s } = saver();
  const answer = await s.post(`${server.base}/guarded`, { n: 1 });
  assert.equal(answer.status, 200);
  const sent = server.requests.slice(before);
  assert.deepEqual(sent.map((r) => new URL(r.url, "http://x").pathname), ["/guarded", "/csrf", "/guarded"]);
  assert.equal(sent[0].headers["x-csrftoken"], "stale");
  assert.equal(sent[2].headers["x-csrftoken"], "fresh");
});

test("a 4xx answer other than 401/403 is returned at once", async () => {
  failures = { "/refused": [409] };
  const { s } = saver();
  const answer = await s.post(`${server.base}/refused`, { n: 1 });
  assert.deepEqual(answer, { status: 409, body: { error: "try again" } });
});

test("as the page goes away, saves queued behind a slow one are sent at once", async () => {
  const { s, statuses } = saver();
  const before = server.requests.length;
  const slow = s.post(`${server.base}/slow`, { n: 1 });
  let text = "typed";
  const queued = s.post(`${server.base}/edit`, () => ({ text }));
  text = "typed then graded";
  await new Promise((resolve) => setTimeout(resolve, 100));
  // The edit waits for the slow save's answer, which a closing tab never sees.
  assert.deepEqual(server.requests.slice(before).map((r) => new URL(r.url, "http://x").pathname), ["/slow"]);
  assert.equal(s.stuck(), true);
  s.departing();
  s.departing(); // called again, it sends nothing twice
  for (let i = 0; i < 50 && server.requests.length < before + 2; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const sent = server.requests.slice(before);
  assert.deepEqual(sent.map((r) => new URL(r.url, "http://x").pathname), ["/slow", "/edit"]);
  assert.equal(new URLSearchParams(sent[1].body).get("text"), "typed then graded");
  // The page stayed (back-forward cache): the queue takes the early answer, in turn.
  release();
  assert.equal((await slow).status, 200);
  assert.equal((await queued).body.saved.text, "typed then graded");
  assert.equal(server.requests.length, before + 2, "nothing sent twice");
  assert.equal(statuses.at(-1), "saved");
});
