// Autosave transport: ordered POSTs with retry and backoff, the CSRF token read from the
// cookie at send time (a login in another tab rotates it), 401 -> ask for a new login.
// Requests are keep-alive: one started as the page goes away still reaches the server,
// and when it goes away the saves still waiting their turn are started at once.

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

export function uuid4() {
  // crypto.randomUUID needs a secure context; getRandomValues works everywhere.
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export class Saver {
  constructor({ csrfUrl, loginUrl, onStatus }) {
    this.csrfUrl = csrfUrl;
    this.loginUrl = loginUrl;
    this.onStatus = onStatus || (() => {});
    this.chain = Promise.resolve();
    this.pending = 0;
    // Saves waiting their turn behind another (their request not started yet).
    this.queued = new Set();
    // Requests on the wire now (the others wait in the queue or for a retry).
    this.sending = 0;
    // How many changes wait for the assessor (an edit conflict): while any does, the
    // page never says everything is saved.
    this.unresolved = () => 0;
  }

  // Queue a POST; `data` is an object or a function called at send time, so a retried
  // edit carries the latest version. Resolves to {status, body}.
  post(url, data) {
    this.pending += 1;
    this.onStatus("saving", "Saving…");
    const entry = { url, data, early: null };
    this.queued.add(entry);
    const run = this.chain.then(() => {
      this.queued.delete(entry);
      return entry.early ? this.settle(entry) : this.attempt(url, data);
    });
    this.chain = run.catch(() => {});
    return run.finally(() => {
      this.pending -= 1;
      if (this.pending > 0) return;
      if (this.unresolved() > 0) this.onStatus("conflict", "Not saved: changed in another tab. Keep yours or take theirs.");
      else this.onStatus("saved", "All changes saved");
    });
  }

  idle() {
    return this.chain;
  }

  // Saves that would be lost if the page went away now: queued behind another, or
  // waiting for a retry (one on the wire is keep-alive and outlives the page).
  stuck() {
    return this.pending > this.sending;
  }

  // The page is going away (pagehide): a save queued behind one still on the wire
  // would never be sent, since the queue moves on only when that one answers, and
  // the page will not be there to see it. Each is sent now, keep-alive, in the order
  // made; should the page come back (the back-forward cache), the queue takes their
  // answers in turn and retries any that failed.
  departing() {
    for (const entry of this.queued) {
      if (!entry.early) entry.early = this.send(entry.url, entry.data);
    }
  }

  async settle(entry) {
    const response = await entry.early;
    if (response && response.status < 500 && response.status !== 401 && response.status !== 403) {
      return { status: response.status, body: await readJson(response) };
    }
    return this.attempt(entry.url, entry.data);
  }

  // One keep-alive POST (its data read now); the response, or null when offline.
  async send(url, data) {
    const payload = typeof data === "function" ? data() : data;
    this.sending += 1;
    try {
      return await fetch(url, {
        method: "POST",
        credentials: "same-origin",
        keepalive: true,
        headers: { "X-CSRFToken": csrfToken(), Accept: "application/json" },
        body: new URLSearchParams(payload),
      });
    } catch (err) {
      return null;
    } finally {
      this.sending -= 1;
    }
  }

  async attempt(url, data) {
    let delay = 500;
    let csrfRetries = 0;
    for (;;) {
      const response = await this.send(url, data);
      if (response && response.status === 403 && csrfRetries < 2) {
        csrfRetries += 1;
        await this.refreshCsrf();
        continue;
      }
      if (response && response.status === 401) {
        this.onStatus("login", "Session ended: log in again in another tab; your work is kept.");
        await this.waitForLogin();
        continue;
      }
      if (response && response.status < 500) {
        return { status: response.status, body: await readJson(response) };
      }
      this.onStatus("retrying", `Not saved (${response ? response.status : "offline"}); retrying in ${Math.round(delay / 1000)} s…`);
      await sleep(delay);
      delay = Math.min(delay * 2, 30000);
    }
  }

  async refreshCsrf() {
    try {
      await fetch(this.csrfUrl, { credentials: "same-origin" });
    } catch (err) {
      /* the retry loop reports it */
    }
  }

  async waitForLogin() {
    for (;;) {
      await sleep(5000);
      try {
        const r = await fetch(this.csrfUrl, { credentials: "same-origin" });
        if (r.ok) return;
      } catch (err) {
        /* still offline */
      }
    }
  }

  // Last words when the tab goes away: a beacon carries the token in the body.
  beacon(url, data) {
    const body = new URLSearchParams({ ...data, csrfmiddlewaretoken: csrfToken() });
    return navigator.sendBeacon(url, body);
  }
}

async function readJson(response) {
  try {
    return await response.json();
  } catch (err) {
    return {};
  }
}
