// Judgments saved with the version the page last saw: a grade changed since (another
// tab, another device, staff) is a conflict shown beside the grade buttons, with the
// other grade, who made it and when, and the choice "keep mine" / "take theirs". Each
// save carries its own id, so a save retried after a network or server failure is
// stored once. When the page shows a document again it asks for the stored grade and
// takes a newer one.

import { uuid4 } from "./net.js";

export class JudgmentSync {
  // `shown()`: the document the page shows ({position, relevance, version});
  // `onTheirs(position, state)`: the stored grade replaces the page's.
  constructor({ config, saver, status, urlFor, shown, onTheirs }) {
    this.config = config;
    this.saver = saver;
    this.status = status;
    this.urlFor = urlFor;
    this.shown = shown;
    this.onTheirs = onTheirs;
    this.versions = new Map(); // position -> the newest version this page knows
    this.inFlight = new Map(); // position -> saves not answered yet
    this.conflicts = new Map(); // position -> {mine, theirs}
    this.box = document.getElementById("judgment-conflict");
    if (this.box) {
      this.box.querySelector(".keep-mine").addEventListener("click", () => this.keepMine());
      this.box.querySelector(".take-theirs").addEventListener("click", () => this.takeTheirs());
    }
  }

  label(value) {
    if (value === null || value === undefined) return "none (skipped)";
    const grade = this.config.grades.find((g) => g.value === value);
    return grade ? grade.label : String(value);
  }

  // A document is shown: the version it came with counts unless a newer one is known.
  seen(position, version) {
    const known = this.versions.get(position);
    if (known === undefined || version > known) this.versions.set(position, version);
    this.render();
    return this.versions.get(position);
  }

  version(position) {
    return this.versions.get(position) ?? 0;
  }

  save(position, relevance, seconds, { version } = {}) {
    const id = uuid4(); // one id for every retry of this save
    this.inFlight.set(position, (this.inFlight.get(position) || 0) + 1);
    const payload = () => ({
      relevance: relevance === null ? "" : String(relevance),
      seconds: String(seconds),
      version: String(version ?? this.version(position)),
      client_uuid: id,
    });
    return this.saver.post(this.urlFor("judgment", position), payload).then(({ status: code, body }) => {
      this.inFlight.set(position, this.inFlight.get(position) - 1);
      if (code === 200) {
        this.versions.set(position, Math.max(this.version(position), body.version));
        this.conflicts.delete(position);
        this.render();
      } else if (code === 409 && body.current) {
        this.conflicts.set(position, { mine: relevance, theirs: body.current });
        this.versions.set(position, Math.max(this.version(position), body.current.version));
        this.render();
      } else {
        this.status("error", body.error || `Judgment not saved (${code})`);
      }
      return { status: code, body };
    });
  }

  // The conflict box shows the conflict of the document shown, if it has one.
  render() {
    if (!this.box) return;
    const doc = this.shown();
    const c = this.conflicts.get(doc.position);
    this.box.hidden = !c;
    if (!c) return;
    const when = c.theirs.at ? new Date(c.theirs.at).toLocaleString() : "earlier";
    this.box.querySelector(".theirs-grade").textContent = this.label(c.theirs.relevance);
    this.box.querySelector(".theirs-by").textContent = c.theirs.by || "someone";
    this.box.querySelector(".theirs-at").textContent = when;
    this.box.querySelector(".mine-grade").textContent = this.label(c.mine);
    this.status("conflict", "Not saved: this grade changed in another tab. Keep yours or take theirs.");
  }

  keepMine() {
    const position = this.shown().position;
    const c = this.conflicts.get(position);
    if (!c) return;
    this.conflicts.delete(position);
    this.render();
    this.save(position, c.mine, 0, { version: c.theirs.version });
  }

  takeTheirs() {
    const position = this.shown().position;
    const c = this.conflicts.get(position);
    if (!c) return;
    this.conflicts.delete(position);
    this.render();
    this.onTheirs(position, c.theirs);
    if (this.saver.pending === 0 && this.saver.unresolved() === 0) this.status("saved", "All changes saved");
  }

  // The stored grade of a document shown again: a newer one than the page knows (and
  // no save of this page on its way) replaces what the page shows.
  take(position, state) {
    if ((this.inFlight.get(position) || 0) > 0 || this.conflicts.has(position)) return;
    if (state.version <= this.version(position)) return;
    this.versions.set(position, state.version);
    this.onTheirs(position, state);
    this.status("info", `Grade changed elsewhere: ${this.label(state.relevance)} (${state.by || "someone"}, ${state.at ? new Date(state.at).toLocaleString() : ""}).`);
  }
}
