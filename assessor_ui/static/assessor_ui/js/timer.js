// Idle-aware time on task: counts only while the tab is visible and the assessor has
// used keyboard, mouse or scroll within the last `idleSeconds`.

const INPUT_EVENTS = ["keydown", "mousedown", "mousemove", "wheel", "scroll", "touchstart", "selectionchange"];

export class ActiveTimer {
  constructor(idleSeconds) {
    this.idleMs = idleSeconds * 1000;
    this.accumulated = 0;
    this.lastTick = performance.now();
    this.lastInput = this.lastTick;
    const touch = () => {
      this.tick();
      this.lastInput = performance.now();
    };
    for (const name of INPUT_EVENTS) document.addEventListener(name, touch, { passive: true, capture: true });
    document.addEventListener("visibilitychange", () => this.tick());
    setInterval(() => this.tick(), 1000);
  }

  active(now) {
    return document.visibilityState === "visible" && now - this.lastInput < this.idleMs;
  }

  tick() {
    const now = performance.now();
    // A suspended laptop resumes with one huge gap: count at most 2 s per tick.
    if (this.active(now)) this.accumulated += Math.min(now - this.lastTick, 2000);
    this.lastTick = now;
  }

  // Seconds counted since the last call.
  take() {
    this.tick();
    const seconds = this.accumulated / 1000;
    this.accumulated = 0;
    return Math.round(seconds * 1000) / 1000;
  }
}
