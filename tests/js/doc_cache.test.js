// DocumentCache against a real local server: one request per position however often
// it is asked for, a failed fetch forgotten, at most 20 kept, stale marks.
import assert from "node:assert/strict";
import { after, test } from "node:test";

import { DocumentCache } from "../../assessor_ui/static/assessor_ui/js/doc_cache.js";
import { startServer } from "./server.js";

const server = await startServer((request) => {
  const position = Number(new URL(request.url, "http://x").searchParams.get("p"));
  if (position < 0) return { status: 500, json: { error: "no" } };
  return { json: { position, text: `document ${position}` } };
});
after(() => server.close());
const urlFor = (position) => `${server.base}/doc?p=${position}`;
const asked = (position) => server.requests.filter((r) => r.url === `/doc?p=${position}`).length;

test("a prefetched document is fetched once and served from the cache", async () => {
  const cache = new DocumentCache(urlFor);
  cache.prefetch(1);
  cache.prefetch(1);
  const first = await cache.load(1);
  const again = await cache.load(1);
  assert.deepEqual(first, { doc: { position: 1, text: "document 1" }, stale: false });
  assert.deepEqual(again.doc, first.doc);
  assert.equal(asked(1), 1);
});

test("a failed fetch is not kept, and load reports the failure", async () => {
  const cache = new DocumentCache(urlFor);
  cache.prefetch(-1);
  await assert.rejects(cache.load(-1), /document -1: 500/);
  assert.equal(cache.entries.has(-1), false);
});

test("markStale keeps the text but asks for a refresh; keep stores a shown document", async () => {
  const cache = new DocumentCache(urlFor);
  await cache.load(2);
  cache.markStale();
  assert.equal((await cache.load(2)).stale, true);
  cache.keep(3, { position: 3, text: "shown" }, false);
  assert.deepEqual(await cache.load(3), { doc: { position: 3, text: "shown" }, stale: false });
  assert.equal(asked(3), 0);
});

test("at most 20 documents are kept, the least recently used dropped first", async () => {
  const cache = new DocumentCache(urlFor);
  for (let p = 100; p < 121; p += 1) cache.keep(p, { position: p }, false);
  assert.equal(cache.entries.size, 20);
  assert.equal(cache.entries.has(100), false);
  cache.prefetch(101); // counts as used: 102 is now the oldest
  cache.keep(200, { position: 200 }, false);
  assert.equal(cache.entries.has(101), true);
  assert.equal(cache.entries.has(102), false);
});
