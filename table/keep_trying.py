"""`loo-table run --keep-trying`, what the systemd unit runs: the table is never left dead.

systemd's own answer to a service that keeps failing is to stop starting it (a start limit), and
then nothing happens until someone types `systemctl reset-failed` at a terminal: at a party,
nobody will. So the unit has no start limit, and this loop makes the retries sensible instead:

- A start that fails (a bad config, a missing model, a corrupt ledger, GPIO pins in use) is tried
  again in the same process after 10 s, then 20, 40, 80, 160 and every 5 minutes, for ever: a
  host who fixes the cause sees the table come up without touching systemd.
- While it waits, the dashboard's port answers every phone with why the table has not started and
  when it tries again (:class:`TroublePage`, standard library only), and systemd's status line
  says the same (`systemctl status loo-table`).
- Runs that end badly (a crash, a watchdog restart, a power cut) are counted across restarts in
  ``start-record.json`` in the state directory; from the second in a row the next start waits
  the same growing delay, showing the reason, so a crash loop slows down instead of spinning.
  Five minutes of running clears the count.
"""

from __future__ import annotations

import html
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TypedDict

__all__ = ["RETRY_DELAYS", "STABLE_AFTER_S", "StartRecord", "TroublePage", "retry_delay", "state_directory"]

#: Seconds before the next try after 1, 2, 3, ... failures in a row (the last one repeats).
RETRY_DELAYS: tuple[float, ...] = (10.0, 20.0, 40.0, 80.0, 160.0, 300.0)
#: A run this long clears the count of failures.
STABLE_AFTER_S = 300.0
RECORD_NAME = "start-record.json"
UNCLEAN_END = ("the last run ended without stopping cleanly (it crashed, the watchdog restarted it, "
               "or the power went)")


def retry_delay(failures: int, delays: tuple[float, ...] = RETRY_DELAYS) -> float:
    """The wait before the next try after ``failures`` failures in a row (0: none)."""
    if failures <= 0:
        return 0.0
    return delays[min(failures, len(delays)) - 1]


def state_directory(config_database: str | None = None) -> Path | None:
    """Where the start record lives: systemd's ``$STATE_DIRECTORY`` (StateDirectory=), else the
    folder of the configured ledger; None when neither is known."""
    env = os.environ.get("STATE_DIRECTORY", "").split(":")[0]
    if env:
        return Path(env)
    if config_database:
        return Path(config_database).parent
    return None


@dataclass
class StartRecord:
    """Failures in a row and the last reason, kept across restarts (a missing or unreadable file
    is a fresh start; one that cannot be written is only kept in memory)."""

    path: Path | None = None
    failures: int = 0
    reason: str = ""
    running_since: float | None = None  # wall-clock time; set while a run is up

    @classmethod
    def load(cls, folder: Path | None) -> StartRecord:
        path = folder / RECORD_NAME if folder is not None else None
        record = cls(path)
        if path is None:
            return record
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            record.failures = max(0, int(data.get("failures", 0)))
            record.reason = str(data.get("reason", ""))
            since = data.get("running_since")
            record.running_since = float(since) if since is not None else None
        except (OSError, ValueError, TypeError, AttributeError):
            pass
        return record

    def save(self) -> None:
        if self.path is None:
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_text(json.dumps({"failures": self.failures, "reason": self.reason,
                                       "running_since": self.running_since}), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            pass  # a read-only or missing state directory: the count lives in memory only

    def begin(self) -> None:
        """At process start: a run that was up and never said it stopped ended badly."""
        if self.running_since is not None:
            self.failures += 1
            self.reason = UNCLEAN_END
            self.running_since = None
            self.save()

    def failed(self, reason: str) -> None:
        self.failures += 1
        self.reason = reason
        self.running_since = None
        self.save()

    def running(self) -> None:
        self.running_since = time.time()
        self.save()

    def stable(self) -> None:
        """Up for long enough: the failures before it are forgotten."""
        self.failures = 0
        self.reason = ""
        self.save()

    def stopped(self) -> None:
        """A clean stop (SIGTERM, `systemctl stop`)."""
        self.running_since = None
        self.save()


class Trouble(TypedDict):
    """Why the table is not up (the last start's error), how many starts failed in a row, and
    in how many seconds the next one begins."""

    reason: str
    failures: int
    retry_in: float


class TroublePage:
    """A tiny HTTP server for the dashboard's address while the table is not up: every page says
    why and when it tries again; ``/api/state`` answers 503 with the same as JSON."""

    def __init__(self, host: str, port: int, describe: Callable[[], Trouble]) -> None:
        self.describe = describe
        page = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                info = page.describe()
                if self.path.startswith("/api/"):
                    body = json.dumps({"status": {"state": "fault", "message": info["reason"]},
                                       "starting": {"failures": info["failures"], "retry_in": info["retry_in"]}})
                    self._send(503, "application/json", body)
                    return
                reason = html.escape(info["reason"])
                body = ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                        "<meta http-equiv=\"refresh\" content=\"10\"><title>loo-table: not started</title>"
                        "</head><body><h1>The table has not started</h1>"
                        f"<p><b>Why:</b> {reason}</p>"
                        f"<p>It tries again in about {info['retry_in']:.0f} s (failed {info['failures']} "
                        "time(s) in a row), and this page follows it. Fix the cause on the Pi; the log has "
                        "the details: <code>journalctl -u loo-table</code>.</p></body></html>")
                self._send(503, "text/html; charset=utf-8", body)

            def _send(self, code: int, kind: str, body: str) -> None:
                data = body.encode("utf-8")
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("Retry-After", "10")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's name
                pass

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.2},
                                       name="trouble-page", daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
