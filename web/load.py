"""Keeping page and export load off the deal: the heavy GETs are rationed, bounded and cached.

Why: the dashboard is served in the referee's process, and every page render competes with the
referee for the same cores and interpreter lock. 63 requests a second of ``/history``,
``/api/ledger`` and the CSV from one phone took a deal from 7-10 s to 20 s. Three rules, applied
to the heavy routes only (the live view's ``/api/state`` and the streams are cheap and untouched):

- **rationed per address**: a token bucket, ``HEAVY_RATE`` a second with a burst of
  ``HEAVY_BURST``; past it ``429`` with ``Retry-After`` (a phone's page needs one or two);
- **bounded for the server**: at most ``HEAVY_CONCURRENCY`` renders at once; a request waits up to
  ``HEAVY_WAIT_S`` for a turn, then ``503`` with ``Retry-After``, so guests together never take
  more than that many threads of work away from the table;
- **cached per table version**: a guest's answer for a route is kept until the snapshot's
  ``version`` moves, so a hundred phones asking between two changes cost one render.

Admin requests skip the ration and the cache (their pages carry the session's CSRF token) but
share the bound, so the host is never refused for a guest's load for longer than a render.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from flask import Flask, Response, g, request, session

#: Routes whose answer is built from the whole night (every deal, every ledger event).
HEAVY_PREFIXES = ("/history", "/end", "/api/ledger", "/api/records", "/api/deals", "/api/settlement",
                  "/api/chips")
HEAVY_RATE = 2.0  # tokens a second per address
HEAVY_BURST = 12.0  # a phone opening every page and export at once
HEAVY_CONCURRENCY = 2
HEAVY_WAIT_S = 2.0
CACHE_ENTRIES = 32
CACHE_BYTES = 8 << 20


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass
class HeavyGate:
    """The per-address buckets, the render semaphore and the version cache of one app."""

    rate: float = HEAVY_RATE
    burst: float = HEAVY_BURST
    concurrency: int = HEAVY_CONCURRENCY
    wait_s: float = HEAVY_WAIT_S
    buckets: dict[str, _Bucket] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    cache: OrderedDict[tuple[str, int], tuple[int, bytes, dict[str, str]]] = field(default_factory=OrderedDict)
    cache_bytes: int = 0
    renders: threading.BoundedSemaphore = field(init=False)

    def __post_init__(self) -> None:
        self.renders = threading.BoundedSemaphore(self.concurrency)

    def take(self, client: str, now: float) -> float:
        """0 when ``client`` may make a heavy request now (a token taken), else seconds to wait."""
        with self.lock:
            b = self.buckets.get(client)
            if b is None:
                if len(self.buckets) >= 4096:  # a flood of addresses cannot grow the table
                    self.buckets = {k: v for k, v in self.buckets.items() if now - v.at < self.burst / self.rate}
                b = self.buckets[client] = _Bucket(self.burst, now)
            b.tokens = min(self.burst, b.tokens + (now - b.at) * self.rate)
            b.at = now
            if b.tokens >= 1.0:
                b.tokens -= 1.0
                return 0.0
            return (1.0 - b.tokens) / self.rate

    def cached(self, key: tuple[str, int]) -> tuple[int, bytes, dict[str, str]] | None:
        with self.lock:
            hit = self.cache.get(key)
            if hit is not None:
                self.cache.move_to_end(key)
            return hit

    def keep(self, key: tuple[str, int], status: int, body: bytes, headers: dict[str, str]) -> None:
        if len(body) > CACHE_BYTES // 4:
            return
        with self.lock:
            old = self.cache.pop(key, None)
            if old is not None:
                self.cache_bytes -= len(old[1])
            self.cache[key] = (status, body, headers)
            self.cache_bytes += len(body)
            while len(self.cache) > CACHE_ENTRIES or self.cache_bytes > CACHE_BYTES:
                _, dropped = self.cache.popitem(last=False)
                self.cache_bytes -= len(dropped[1])


def _heavy(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") or path.startswith(p + ".") or path.startswith(p + "?")
               for p in HEAVY_PREFIXES)


#: Headers a cached answer keeps (everything else, a cookie above all, is dropped).
_KEPT = ("Content-Type", "Content-Disposition", "Cache-Control", "ETag")


def install(app: Flask, gate: HeavyGate | None = None) -> HeavyGate:
    """Register the gate's hooks on ``app`` (before the blueprints' own)."""
    from web.security import ApiError

    gate = gate or HeavyGate()

    @app.before_request
    def _ration() -> Response | None:
        if request.method != "GET" or not _heavy(request.path):
            return None
        admin = session.get("admin") is True
        if not admin:
            wait = gate.take(request.remote_addr or "unknown", time.monotonic())
            if wait:
                seconds = max(1, round(wait))
                raise ApiError(429, f"too many page loads from this phone: try again in {seconds} s",
                               headers={"Retry-After": str(seconds)})
            version = int(app.extensions["loo"].service.snapshot().get("version", 0))
            key = (request.full_path, version)
            hit = gate.cached(key)
            if hit is not None:
                status, body, headers = hit
                return Response(body, status=status, headers=headers)
            g.loo_cache_key = key
        if not gate.renders.acquire(timeout=gate.wait_s):
            raise ApiError(503, "the table is busy: try again in a moment", headers={"Retry-After": "1"})
        g.loo_render_held = True
        return None

    @app.after_request
    def _keep(resp: Response) -> Response:
        key = g.pop("loo_cache_key", None)
        if key is not None and resp.status_code == 200 and not resp.is_streamed and "Set-Cookie" not in resp.headers:
            gate.keep(key, resp.status_code, resp.get_data(),
                      {k: v for k, v in resp.headers.items() if k in _KEPT})
        return resp

    @app.teardown_request
    def _release(_exc: BaseException | None) -> None:
        if g.pop("loo_render_held", False):
            gate.renders.release()

    return gate
