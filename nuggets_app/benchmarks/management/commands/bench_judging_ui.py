"""Browser benchmark of the judging page: key press to next document visible, in headless
Chromium over the real server (gunicorn on loopback, PostgreSQL behind it).

Not a test: it prints median / p95 / max of the move time over ``--moves`` moves
(``j`` forward through the 50-document queue, ``k`` back, a grade key pressed on each
document before moving on), first as a full page load per move (the baseline, measured
in the same run), then as the page does it (prefetched documents shown in place).
Target: p95 < 100 ms.

Timing is taken inside the page: from the key event to the first frame after the new
document is in place (``judge:shown``, or for a page load its ``DOMContentLoaded``),
so the WebDriver round trip is not counted.
"""

from __future__ import annotations

import os
import statistics
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from nuggets_app.benchmarks import headless
from nuggets_app.benchmarks.load_server import free_port, gunicorn_server, percentile
from nuggets_app.benchmarks.management.commands.bench_judging import (
    PASSWORD,
    fixture_build,
)

# Injected before any page script. It stamps the key press (absolute time, kept in
# sessionStorage so a page load cannot lose it) and, once the next document is shown
# and a frame has passed, appends the elapsed milliseconds to sessionStorage.moves.
# In "reload" mode it also turns j/k into a plain page load of the next/previous link.
PROBE = r"""
(() => {
  const mode = %(mode)r;
  const now = () => performance.timeOrigin + performance.now();
  const done = () => requestAnimationFrame(() => setTimeout(() => {
    const t0 = Number(sessionStorage.getItem("t0") || 0);
    if (!t0) return;
    sessionStorage.removeItem("t0");
    const moves = JSON.parse(sessionStorage.getItem("moves") || "[]");
    moves.push(now() - t0);
    sessionStorage.setItem("moves", JSON.stringify(moves));
  }, 0));
  document.addEventListener("keydown", (event) => {
    if (event.key !== "j" && event.key !== "k") return;
    if (!document.getElementById("judge-config") || event.target.closest("input, textarea")) return;
    sessionStorage.setItem("t0", String(now()));
    if (mode === "reload") {
      event.stopImmediatePropagation();
      event.preventDefault();
      const link = document.getElementById(event.key === "j" ? "next-link" : "prev-link");
      window.location.assign(link.href);
    }
  }, true);
  if (mode === "reload") document.addEventListener("DOMContentLoaded", done);
  else document.addEventListener("judge:shown", done);
})();
"""


class Command(BaseCommand):
    help = "Browser benchmark: key press to next document visible on the judging page."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--moves", type=int, default=200)
        parser.add_argument(
            "--think", type=float, default=0.3, help="pause after each move (s)"
        )
        parser.add_argument("--port", type=int, default=0, help="0: a free port")
        parser.add_argument("--workers", type=int, default=2)
        parser.add_argument("--threads", type=int, default=2)
        parser.add_argument("--docs", default="", help="JSONL(.gz) documents to judge")

    def handle(self, *args, **opts) -> None:
        if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
            raise CommandError("bench_judging_ui needs PostgreSQL: set DATABASE_URL")
        if not headless.chromium_installed():
            raise CommandError(f"needs {headless.CHROMIUM} and {headless.CHROMEDRIVER}")
        paths = fixture_build(users=1, docs_path=opts["docs"])
        (username, (assignment, length)), *_ = paths.items()
        opts["port"] = free_port(opts["port"])
        load_before = os.getloadavg()
        results = {}
        with gunicorn_server(opts) as base:
            for mode in ("reload", "in-place"):
                fixture_build(users=1, docs_path=opts["docs"])  # same start each time
                results[mode] = self.run_mode(
                    mode, base, username, assignment, length, opts
                )
        self.report(results, load_before, os.getloadavg())

    def run_mode(self, mode, base, username, assignment, length, opts) -> list[float]:
        from selenium.webdriver.common.action_chains import ActionChains
        from selenium.webdriver.common.by import By

        with headless.chromium() as driver:
            driver.execute_cdp_cmd(
                "Page.addScriptToEvaluateOnNewDocument",
                {"source": PROBE % {"mode": mode}},
            )
            driver.get(f"{base}/login/")
            driver.find_element(By.ID, "id_username").send_keys(username)
            driver.find_element(By.ID, "id_password").send_keys(PASSWORD)
            driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            _wait(lambda: "/login/" not in driver.current_url, "login")
            driver.get(f"{base}/assess/{assignment}/1/")
            _wait(lambda: driver.execute_script("return document.body.dataset.ready"))
            time.sleep(1.0)
            keys = (["j"] * (length - 1) + ["k"] * (length - 1)) * (
                opts["moves"] // (2 * length - 2) + 1
            )
            for i, key in enumerate(keys[: opts["moves"]]):
                ActionChains(driver).send_keys(str(i % 3)).perform()
                ActionChains(driver).send_keys(key).perform()
                _wait(
                    lambda n=i + 1: (
                        driver.execute_script(
                            "return JSON.parse(sessionStorage.getItem('moves') || '[]')"
                            ".length"
                        )
                        >= n
                    ),
                    f"move {i + 1} ({mode})",
                )
                time.sleep(opts["think"])
            return driver.execute_script(
                "return JSON.parse(sessionStorage.getItem('moves'))"
            )

    def report(self, results: dict[str, list[float]], before, after) -> None:
        self.stdout.write(
            f"cpu: {os.cpu_count()} cores; load average {before[0]:.2f} before, "
            f"{after[0]:.2f} after (the machine may be shared)"
        )
        self.stdout.write(
            f"{'move':<28}{'n':>5}{'median ms':>11}{'p95 ms':>9}{'max ms':>9}"
        )
        labels = {
            "reload": "full page load (baseline)",
            "in-place": "prefetched, in place",
        }
        for mode, values in results.items():
            self.stdout.write(
                f"{labels[mode]:<28}{len(values):>5}"
                f"{statistics.median(values):>11.1f}{percentile(values, 95):>9.1f}"
                f"{max(values):>9.1f}"
            )
        base, fast = results["reload"], results["in-place"]
        self.stdout.write(
            f"speed-up: median x{statistics.median(base) / statistics.median(fast):.1f}, "
            f"p95 x{percentile(base, 95) / percentile(fast, 95):.1f}"
        )


def _wait(check, what: str = "page", timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.01)
    raise CommandError(f"timed out waiting for {what}")
