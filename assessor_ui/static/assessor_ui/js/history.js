// The history of the work on the document shown (its grade and nuggets: who changed
// what, when, from what to what), and undo of the last change by key or button. The
// history comes from the server each time a document is shown, with the stored grade
// (which JudgmentSync takes when it is newer than the page's).

export class WorkHistory {
  // `onUndone(body)`: the page shows what the undo changed.
  constructor({ config, saver, status, urlFor, sync, onUndone }) {
    this.config = config;
    this.saver = saver;
    this.status = status;
    this.urlFor = urlFor;
    this.sync = sync;
    this.onUndone = onUndone;
    this.list = document.getElementById("history-list");
    this.button = document.getElementById("undo-change");
    this.position = null;
    this.asked = 0;
    if (this.button) this.button.addEventListener("click", () => this.undo());
  }

  side(change, value) {
    if (value === null || value === undefined) return change.kind === "judgment" ? "none" : "–";
    return change.kind === "judgment" ? this.sync.label(value) : `“${value.length > 50 ? `${value.slice(0, 49)}…` : value}”`;
  }

  render(changes) {
    if (!this.list) return;
    this.list.replaceChildren(
      ...changes.map((c) => {
        const li = document.createElement("li");
        li.dataset.kind = c.kind;
        if (c.undone) li.classList.add("undone");
        const when = document.createElement("time");
        when.dateTime = c.at;
        when.textContent = new Date(c.at).toLocaleString();
        const what = c.undo ? `undo: ${c.what}` : c.what;
        li.append(when, ` ${c.by}: ${what} ${this.side(c, c.from)} → ${this.side(c, c.to)}`);
        if (c.note) li.append(` (${c.note})`);
        return li;
      }),
    );
    if (this.button) this.button.disabled = this.config.readonly || !changes.some((c) => !c.undone && !c.undo);
  }

  // The document at `position` is shown: its stored grade and history.
  async refresh(position) {
    this.position = position;
    const ask = ++this.asked;
    let body;
    try {
      const r = await fetch(this.urlFor("history", position), { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (!r.ok) return;
      body = await r.json();
    } catch (err) {
      return; // offline: asked again when a document is next shown
    }
    if (ask !== this.asked || position !== this.position) return;
    this.render(body.changes);
    this.sync.take(position, body.judgment);
  }

  // Undo the last change of this document, after every save still queued (so the
  // change undone is the last one made, not one still on its way).
  async undo() {
    if (this.config.readonly) return;
    const position = this.position;
    const { status, body } = await this.saver.post(this.urlFor("undo", position), {});
    if (status !== 200) {
      this.status("info", body.error || `Nothing undone (${status})`);
      return;
    }
    if (position === this.position) this.render(body.changes);
    this.onUndone(position, body);
    this.status("info", "Undone: the last change of this document.");
  }
}
