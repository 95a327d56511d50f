"""Benchmark the dashboard under a full table of phones (a benchmark, not a test).

The server runs in a child process exactly as the controller runs it: waitress sized by
``web.make_server`` serving ``web.create_app`` over the real ``table.service.TableService``
(referee thread + SQLite ledger in a temp dir). A driver thread in that process changes the table
``--event-rate`` times a second (chip adjustments through ``TableService.command``, each a ledger
write and a new snapshot version). This process opens ``--streams`` Server-Sent-Events clients and
sends ``--rate`` GET /api/state requests a second on a fixed schedule for ``--duration`` seconds,
all over loopback, then prints: errors (target 0), p50/p99 latency of the state endpoint (target
p99 <= 50 ms) and whether every stream received every event (target: all).

    python bench/web.py                 # 50 streams, 100 req/s, 30 s
    python bench/web.py --duration 5    # a quick run
    python bench/web.py --streams 200 --half-open 165   # a hostile Wi-Fi: more phones than stream
        # slots (those are told to poll) plus 165 connections that never finish their request
    python bench/web.py --attack all    # a demo deal's time under each of issue 49's attacks

Each phone, poller and half-open connection comes from its own loopback address (127.0.x.y), as
phones on the Wi-Fi do, so the server's per-address limits treat them as the LAN would.
"""

# The quickest options (`make bench QUICK=1`, tests/pi/test_bench.py): every part runs, the figures mean little.
# quick: --streams 2 --rate 5 --duration 1 --workers 1
from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- server (child)
def serve(args: argparse.Namespace) -> int:
    sys.path.insert(0, str(ROOT))
    from table.ledger import Ledger
    from table.referee import Referee
    from table.service import TableService
    from web import close_server, create_app, make_server

    state = Path(args.state_dir)
    ledger = Ledger(state / "ledger.db")
    ref = Referee(ledger, setup={"players": ["Ann", "Bea", "Cal", "Dot"], "variant": "three_card",
                                 "options": {}, "chips": 100, "first_dealer": 3}).start()
    service = TableService(ref)
    app = create_app(service, config={"STATE_DIR": state / "web", "ADMIN_PIN": "1234"})
    server = make_server(app, "127.0.0.1", 0)
    threading.Thread(target=server.run, daemon=True).start()
    print(f"PORT {server.effective_port} THREADS {server.adj.threads}", flush=True)

    go = sys.stdin.readline().split()  # "GO <events>" once the streams are connected
    count = int(go[1]) if len(go) == 2 and go[0] == "GO" else 0
    period = 1.0 / args.event_rate
    start = time.monotonic()
    for i in range(count):
        time.sleep(max(0.0, start + i * period - time.monotonic()))
        service.command("adjust_chips", {"player": "Ann", "delta": 1 if i % 2 == 0 else -1,
                                         "reason": f"bench event {i}"})
    print(f"DONE {service.snapshot()['version']}", flush=True)
    sys.stdin.readline()  # wait for the client to finish reading
    close_server(app, server)
    ref.stop()
    ledger.close()
    return 0


# ----------------------------------------------------------------------------- clients
class Stream(threading.Thread):
    """One phone's EventSource: records the id of every ``state`` event it receives."""

    def __init__(self, port: int, *, like_page: bool = False, source: str = "127.0.0.1") -> None:
        super().__init__(daemon=True)
        self.port = port
        self.source = source
        # the Table page's own stream: every event carries the rendered HTML fragment
        self.path = "/api/stream?view=table" if like_page else "/api/stream"
        self.bytes = 0
        self.ids: list[int] = []
        self.first = threading.Event()
        self.error: str | None = None
        self.overloaded = False
        self.sock: socket.socket | None = None
        self.closing = False

    def run(self) -> None:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60,
                                              source_address=(self.source, 0))
            conn.request("GET", self.path, headers={"Accept": "text/event-stream"})
            self.sock = conn.sock  # kept: http.client drops it from `conn` for a Connection: close reply
            resp = conn.getresponse()
            if resp.status != 200:
                self.error = f"HTTP {resp.status}"
                return
            event = None
            while True:
                line = resp.readline()
                if not line:
                    return
                self.bytes += len(line)
                text = line.decode().rstrip("\n")
                if text.startswith("event: "):
                    event = text[7:]
                    if event == "overloaded":
                        self.overloaded = True
                elif text.startswith("id: "):
                    self.ids.append(int(text[4:]))
                elif text == "" and event is not None:
                    event = None
                    self.first.set()
        except (OSError, http.client.HTTPException, ValueError) as exc:
            if not self.closing:
                self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.first.set()

    def close(self) -> None:
        self.closing = True
        if self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def poll(port: int, rate: float, duration: float, workers: int) -> tuple[list[float], list[str], int]:
    """GET /api/state on a fixed schedule (request i at t0 + i/rate); latency = send to full body."""
    total = int(rate * duration)
    latencies: list[float] = []
    errors: list[str] = []
    late = [0]
    lock = threading.Lock()
    counter = iter(range(total))
    t0 = time.monotonic() + 0.2

    def worker(source: str) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                break
            due = t0 + i / rate
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            elif wait < -0.005:
                with lock:
                    late[0] += 1
            sent = time.perf_counter()
            try:
                conn.request("GET", "/api/state")
                resp = conn.getresponse()
                body = resp.read()
                elapsed = time.perf_counter() - sent
                if resp.status != 200:
                    raise ValueError(f"HTTP {resp.status}")
                json.loads(body)
                with lock:
                    latencies.append(elapsed)
            except (OSError, http.client.HTTPException, ValueError) as exc:
                with lock:
                    errors.append(f"{type(exc).__name__}: {exc}")
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
        conn.close()

    threads = [threading.Thread(target=worker, args=(f"127.0.3.{w % 250 + 1}",), daemon=True)
               for w in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, errors, late[0]


class HalfOpen(threading.Thread):
    """``count`` connections that send half a request line and never finish it; one the server
    closes is opened again at once, so the pressure lasts the whole run."""

    def __init__(self, port: int, count: int) -> None:
        super().__init__(daemon=True)
        self.port, self.count = port, count
        self.stop = threading.Event()
        self.reopened = 0

    def _open(self, j: int) -> socket.socket | None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=5,
                                            source_address=(f"127.0.2.{j % 20 + 1}", 0))
            sock.sendall(b"GET /api/state HTTP/1.1\r\nHost: loc")
            sock.setblocking(False)
            return sock
        except OSError:
            return None

    def run(self) -> None:
        socks = [self._open(j) for j in range(self.count)]
        while not self.stop.wait(0.5):
            for j, sock in enumerate(socks):
                try:
                    if sock is not None and sock.recv(1) != b"":
                        continue
                except BlockingIOError:
                    continue
                except OSError:
                    pass
                if sock is not None:
                    sock.close()
                socks[j] = self._open(j)
                self.reopened += 1
        for sock in socks:
            if sock is not None:
                sock.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, default=50, help="concurrent SSE clients (default 50)")
    parser.add_argument("--rate", type=float, default=100.0, help="GET /api/state per second (default 100)")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load (default 30)")
    parser.add_argument("--event-rate", type=float, default=5.0, help="table changes per second (default 5)")
    parser.add_argument("--workers", type=int, default=8, help="polling client threads (default 8)")
    parser.add_argument("--half-open", type=int, default=0, metavar="N",
                        help="connections that never finish their request, held all along (default 0)")
    parser.add_argument("--like-pages", action="store_true",
                        help="streams ask for ?view=table, as the Table page does (HTML fragment in each event)")
    parser.add_argument("--attack", metavar="MODE", action="append",
                        help="instead: a demo table's deal time under a hostile guest, MODE one of "
                        "logout, half-open, pin-flood, heavy or all (repeatable); prints each mode's "
                        "deal-time ratio to the unloaded deal and the host's slowest login + command "
                        "(bench/attacks.py)")
    parser.add_argument("--deals", type=int, default=4,
                        help="with --attack: deals timed unloaded and under each attack (default 4)")
    parser.add_argument("--seed", type=int, default=1, help="with --attack: the demo night's seed (default 1)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--state-dir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        return serve(args)
    if args.attack:
        sys.path.insert(0, str(ROOT))
        from bench.attacks import ATTACKS
        from bench.attacks import run as run_attacks

        modes = list(ATTACKS) if "all" in args.attack else args.attack
        unknown = [m for m in modes if m not in ATTACKS]
        if unknown or args.deals < 1:
            parser.error(f"--attack: one of {', '.join(ATTACKS)} or all; --deals >= 1")
        return int(run_attacks(modes, deals=args.deals, duration=args.duration * 4, seed=args.seed))  # 30 s: 2 min
    if args.streams < 0 or args.rate <= 0 or args.duration <= 0 or args.event_rate <= 0:
        parser.error("streams must be >= 0; rate, duration and event-rate must be > 0")

    with tempfile.TemporaryDirectory(prefix="loo-bench-web-") as tmp:
        child = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--state-dir", tmp, "--event-rate", str(args.event_rate)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert child.stdin is not None and child.stdout is not None
        try:
            head = child.stdout.readline().split()
            if len(head) != 4 or head[0] != "PORT":
                print(f"error: the server did not start ({' '.join(head) or 'no output'})", file=sys.stderr)
                return 1
            port, threads = int(head[1]), int(head[3])
            print(f"web bench: {args.streams} SSE streams + {args.half_open} half-open connections + "
                  f"{args.rate:g} req/s GET /api/state for "
                  f"{args.duration:g} s over loopback; {args.event_rate:g} table changes/s; "
                  f"waitress threads {threads}", flush=True)
            flood = HalfOpen(port, args.half_open)
            flood.start()
            streams = [Stream(port, like_page=args.like_pages, source=f"127.0.{1 + i // 250}.{i % 250 + 1}")
                       for i in range(args.streams)]
            for s in streams:
                s.start()
            for s in streams:
                s.first.wait(10)
            events = int(args.event_rate * args.duration)
            child.stdin.write(f"GO {events}\n")
            child.stdin.flush()
            latencies, errors, late = poll(port, args.rate, args.duration, args.workers)
            done = child.stdout.readline().split()
            final = int(done[1]) if len(done) == 2 and done[0] == "DONE" else -1
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and any(s.ids and s.ids[-1] < final for s in streams):
                time.sleep(0.05)
            for s in streams:
                s.close()
            for s in streams:
                s.join(5)
            flood.stop.set()
            flood.join(10)
            child.stdin.write("END\n")
            child.stdin.flush()
            child.wait(30)
        finally:
            if child.poll() is None:
                child.kill()

    stream_errors = [s.error for s in streams if s.error]
    overloaded = sum(s.overloaded for s in streams)
    complete = 0
    missed_total = 0
    for s in streams:
        if not s.ids:
            continue
        expected = set(range(s.ids[0], final + 1))
        missed = len(expected - set(s.ids))
        missed_total += missed
        complete += missed == 0 and len(s.ids) == len(set(s.ids))
    at_end = sum(1 for s in streams if s.ids and s.ids[-1] == final)
    all_errors = errors + stream_errors
    p50 = percentile(latencies, 50) * 1000 if latencies else float("nan")
    target = 1000.0 if args.half_open else 50.0  # a flood may slow the table, never stop it
    p99 = percentile(latencies, 99) * 1000 if latencies else float("nan")
    print(f"state requests: {len(latencies)} ok, {len(errors)} errors, {late} sent late (>5 ms behind schedule)")
    print(f"state latency: p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(latencies, default=0) * 1000:.1f} ms, "
          f"mean {statistics.fmean(latencies) * 1000 if latencies else float('nan'):.1f} ms "
          f"(target p99 <= {target:g} ms: {'met' if p99 <= target else 'NOT met'})")
    print(f"events: {events} published (last version {final}); streams that received every event: "
          f"{complete}/{args.streams} (missed {missed_total} in all; {overloaded} told to poll; "
          f"{len(stream_errors)} stream errors); streams that ended on the last version: "
          f"{at_end}/{args.streams}")
    if missed_total:
        print("  (a missed id means the server skipped to a newer complete snapshot: the service's "
              "changes_since may return only the newest)")
    received = sum(s.bytes for s in streams)
    print(f"streams received {received / 1e6:.1f} MB in all ({received / max(1, args.streams) / 1e3:.0f} kB each)"
          + (" of HTML fragments (?view=table)" if args.like_pages else " of JSON snapshots"))
    if args.half_open:
        print(f"half-open connections: {args.half_open} held; {flood.reopened} closed by the server and opened again")
    print(f"errors: {len(all_errors)}" + (f" (first: {all_errors[0]})" if all_errors else ""))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{platform.platform(terse=True)}")
    return 1 if all_errors else 0


if __name__ == "__main__":
    sys.exit(main())
