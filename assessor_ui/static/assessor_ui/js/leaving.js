// Nothing typed is lost on leaving the page. When the tab is hidden or the page goes
// away (a link, a reload, closing the tab), edits still waiting for their debounce are
// sent at once; the autosave requests are keep-alive, so a request started then
// outlives the page, and as the page goes, saves still queued behind another are
// started too (Saver.departing). Text that may still not arrive (a save waiting
// behind another or for a retry, an unresolved conflict, no network) makes the
// browser ask before leaving.

export function guardLeaving({ saver, panel, sync }) {
  const waiting = () => panel.pending.size > 0 || panel.deletes.size > 0;
  const conflicts = () => panel.conflicts.size + sync.conflicts.size;
  const stuck = () =>
    conflicts() > 0 ||
    saver.stuck() ||
    (waiting() && saver.pending > 0) ||
    ((waiting() || saver.pending > 0) && !navigator.onLine);
  const flush = () => panel.flush();
  window.addEventListener("beforeunload", (event) => {
    if (!stuck()) return;
    event.preventDefault();
    event.returnValue = ""; // older browsers need it to ask
  });
  window.addEventListener("pagehide", () => {
    flush();
    saver.departing();
  });
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "hidden") flush();
  });
}
