// Live progress: poll a JSON endpoint (the box's data-url) while the tab is visible.
// One loop for the job, task and dashboard progress boxes; text only (textContent).

// Call update(progress) every periodMs and when the tab becomes visible again; polling
// stops once update returns true. A failed request waits for the next tick.
export function pollProgress(box, periodMs, update) {
  let timer = null;
  async function poll() {
    if (document.visibilityState !== "visible") return;
    try {
      const response = await fetch(box.dataset.url, { headers: { Accept: "application/json" } });
      if (!response.ok) return;
      if (update(await response.json())) {
        clearInterval(timer);
        document.removeEventListener("visibilitychange", poll);
      }
    } catch (err) {
      // A network blip: the next tick tries again.
    }
  }
  timer = setInterval(poll, periodMs);
  document.addEventListener("visibilitychange", poll);
}
