// Documents of the queue fetched ahead as JSON (text and state), kept by queue position.
// A nugget change marks every entry stale rather than dropping it: the scores and the
// nugget list may be out of date, but the text is not, so a stale entry is still shown
// at once and refreshed behind it.

// A kept document is shown as is for this long; an older one is shown at once and its
// nuggets and scores fetched again behind it (other assessors' nuggets change them).
const FRESH_MS = 60000;
const SIZE = 20;

export class DocumentCache {
  constructor(url) {
    this.url = url;
    this.entries = new Map(); // position -> { at, promise, stale }, least recent first
  }

  async fetch(position) {
    const r = await fetch(this.url(position), { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (!r.ok) throw new Error(`document ${position}: ${r.status}`);
    return r.json();
  }

  remember(position, entry) {
    this.entries.delete(position);
    this.entries.set(position, entry);
    while (this.entries.size > SIZE) this.entries.delete(this.entries.keys().next().value);
    return entry;
  }

  // Fetch ahead unless kept: any entry will do (a stale or old one is refreshed when it
  // is shown), and it counts as recently used.
  prefetch(position) {
    const hit = this.entries.get(position);
    if (hit) {
      this.remember(position, hit);
      return;
    }
    const entry = this.remember(position, { at: Date.now(), promise: this.fetch(position), stale: false });
    entry.promise.catch(() => {
      if (this.entries.get(position) === entry) this.entries.delete(position);
    });
  }

  // The document of a position, and whether its nuggets and scores need a refresh once
  // it is shown (a kept copy never waits on the network).
  async load(position) {
    const hit = this.entries.get(position);
    if (hit) {
      try {
        const doc = await hit.promise;
        return { doc, stale: hit.stale || Date.now() - hit.at >= FRESH_MS };
      } catch (err) {
        /* fetched again below */
      }
    }
    const entry = this.remember(position, { at: Date.now(), promise: this.fetch(position), stale: false });
    try {
      const doc = await entry.promise;
      return { doc, stale: entry.stale };
    } catch (err) {
      this.entries.delete(position);
      throw err;
    }
  }

  // A document as the page shows it, kept for going back to it.
  keep(position, doc, stale) {
    this.remember(position, { at: Date.now(), promise: Promise.resolve(doc), stale });
  }

  markStale() {
    for (const entry of this.entries.values()) entry.stale = true;
  }
}
