// Time on the current document: the active seconds stored for it plus those counted
// since it was shown, with the idle rule of the time that is saved, as m:ss.

import { ActiveTimer } from "./timer.js";

export function clockText(seconds) {
  const s = Math.floor(seconds);
  const pad = (n) => String(n).padStart(2, "0");
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

export class DocClock {
  constructor(el, idleSeconds) {
    this.el = el;
    this.timer = new ActiveTimer(idleSeconds);
    this.position = null;
    this.base = 0;
    this.counted = 0;
    // What this page showed for documents left behind (their stored time may be older).
    this.left = new Map();
    if (!el) return;
    document.addEventListener("judge:shown", (e) => this.show(e.detail.position, e.detail.seconds));
    setInterval(() => this.render(), 1000);
  }

  total() {
    this.counted += this.timer.take();
    return this.base + this.counted;
  }

  show(position, storedSeconds) {
    if (!this.el) return;
    if (this.position !== null) this.left.set(this.position, this.total());
    this.timer.take();
    this.position = position;
    this.base = Math.max(Number(storedSeconds) || 0, this.left.get(position) || 0);
    this.counted = 0;
    this.render();
  }

  render() {
    if (this.el && this.position !== null) this.el.textContent = clockText(this.total());
  }
}
