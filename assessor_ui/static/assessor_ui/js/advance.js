// Grade-and-advance: with the assessor's preference on, a grade moves on to the next
// document, so a document costs one key instead of two. The preference is stored per
// assessor on the server as the box changes.

export class AdvanceOnGrade {
  constructor({ box, saver, url, status, onAdvance }) {
    this.box = box;
    this.saver = saver;
    this.url = url;
    this.status = status;
    this.onAdvance = onAdvance;
    if (box) box.addEventListener("change", () => this.save());
  }

  get on() {
    return Boolean(this.box && this.box.checked);
  }

  toggle() {
    if (!this.box) return;
    this.box.checked = !this.box.checked;
    this.save();
  }

  async save() {
    const data = this.box.checked ? { advance_on_grade: "on" } : {};
    const { status, body } = await this.saver.post(this.url, data);
    if (status !== 200) this.status("error", body.error || `Preference not saved (${status})`);
    else this.status("info", body.advance_on_grade ? "Grading now moves on to the next document." : "Grading now stays on the document.");
  }

  // After a grade (not a skip): move on when the preference is on.
  after(value) {
    if (this.on && value !== null && value !== undefined) this.onAdvance();
  }
}
