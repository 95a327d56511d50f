"""The hostile guest's attacks on a demo table, and what they cost the deal (also `bench/web.py --attack`).

    python bench/attacks.py                       # every attack, 4 deals each (at most 60 s)
    python bench/attacks.py --deals 100 --seconds 60   # 60 s of each attack

A child process plays the demo night headless at full speed (bots on mock buttons, the synthetic
camera, the real ONNX classifier: the work a Pi does in a deal) with the dashboard served by
waitress on 127.0.0.1, exactly as `loo-table run` serves it, and prints each deal's wall time.
This process first lets ``--deals`` deals run unloaded, then runs each attack for ``--deals``
deals (at most ``--seconds``), all over loopback, each guest from its own loopback
address (127.0.x.y). Meanwhile the host's phone, from its own address, logs in and sends an admin
command every 3 s (pressing a seat button when the login asks for one, as the host would).

Attacks (issue 49): ``logout`` (a guest logging out every 0.2 s), ``half-open`` (17 addresses x
32 connections trickling a header line a second), ``pin-flood`` (wrong PINs from ever new
addresses, 8 at a time), ``heavy`` (63 requests a second of /history, /api/ledger and the CSV
from one address). Printed per attack: median deal time and its ratio to the unloaded median
(target <= 1.5), the host's slowest login + command (target <= 2 s) and the attack's own count.
"""

# The quickest options (`make bench QUICK=1`, tests/pi/test_bench.py): every part runs, the figures mean little.
# quick: --attack heavy --deals 1 --seconds 10
from __future__ import annotations

import http.client
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from table.contract.snapshot import Snapshot

ROOT = Path(__file__).resolve().parents[1]
PIN = "135790"
ATTACKS = ("logout", "half-open", "pin-flood", "heavy")


# ----------------------------------------------------------------------------- the table (child)
def serve(state_dir: str, seed: int) -> int:
    """The demo table with its dashboard; prints ``PORT n``, then ``DEAL seconds`` per deal; a
    ``PRESS`` line on stdin presses a seat button for the login gate, ``END`` stops."""
    sys.path.insert(0, str(ROOT))
    from table.demo_table import TableDemo
    from table.runtime import WebServer, demo_prototypes_path, load_classifier
    from web.security import TablePresence

    last = [0, time.monotonic()]

    def on_change(snap: Snapshot) -> None:
        number = int(snap.get("deal_number") or 0)
        if number != last[0]:
            now = time.monotonic()
            if last[0]:
                print(f"DEAL {now - last[1]:.3f}", flush=True)
            last[:] = [number, now]

    classifier = load_classifier(None, threads=1, prototypes=demo_prototypes_path())
    demo = TableDemo(db=Path(state_dir) / "ledger.db", players=["Ann", "Bea", "Cal", "Dot"], seed=seed,
                     classifier=classifier, chips=100_000, pace=0.0, patient=True,
                     options={"deals_per_player": 100}, on_change=on_change)  # a night longer than the bench
    presence = TablePresence()
    web = WebServer(demo.service, host="127.0.0.1", port=0, state_dir=Path(state_dir), admin_pin=PIN,
                    presence=presence).start()
    print(f"PORT {web.port}", flush=True)

    def commands() -> None:
        for line in sys.stdin:
            if line.strip() == "PRESS":
                presence.pressed()
            elif line.strip() == "END":
                break
        web.close()  # the night is cut off here: the dashboard first, then the table, then exit
        # the bots' loop, still running on the main thread, trips over the closed pins: that is
        # the cut-off, not a failure, so its last words go nowhere
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        demo.close()
        os._exit(0)

    threading.Thread(target=commands, daemon=True).start()
    demo.play(None)
    commands_done = threading.Event()
    commands_done.wait()  # the night ended by itself: wait for END all the same
    return 0


# ----------------------------------------------------------------------------- phones (this process)
class Phone:
    """A browser from one loopback address: its cookie and the CSRF token of its last admin page."""

    def __init__(self, port: int, address: str) -> None:
        self.port, self.address, self.cookie, self.token = port, address, "", ""

    def request(self, method: str, path: str, body: dict[str, object] | None = None) -> tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10, source_address=(self.address, 0))
        headers = {"Origin": f"http://127.0.0.1:{self.port}", "Host": f"127.0.0.1:{self.port}"}
        if self.cookie:
            headers["Cookie"] = self.cookie
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers |= {"Content-Type": "application/json", "X-CSRF-Token": self.token}
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            text = resp.read().decode(errors="replace")
        finally:
            conn.close()
        cookie = resp.getheader("Set-Cookie")
        if cookie:
            self.cookie = cookie.split(";", 1)[0]
        found = re.search(r'name="csrf-token" content="([^"]+)"', text)
        if found:
            self.token = found.group(1)
        if resp.getheader("Content-Type", "").startswith("application/json"):
            try:
                self.token = json.loads(text).get("csrf_token") or self.token
            except (ValueError, AttributeError):
                pass
        return resp.status, text


class Attack(threading.Thread):
    """Runs ``step`` until stopped; counts what it sent."""

    def __init__(self, step: Callable[[int], None], threads: int = 1) -> None:
        super().__init__(daemon=True)
        self.step, self.threads, self.stop = step, threads, threading.Event()
        self.sent = 0
        self.failed = 0

    def run(self) -> None:
        def loop(worker: int) -> None:
            i = 0
            while not self.stop.is_set():
                try:
                    self.step(worker * 1_000_000 + i)
                    self.sent += 1
                except OSError:
                    self.failed += 1
                    time.sleep(0.05)
                i += 1

        workers = [threading.Thread(target=loop, args=(w,), daemon=True) for w in range(self.threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()


def make_attack(kind: str, port: int) -> Attack:
    if kind == "logout":
        guest = Phone(port, "127.0.7.1")

        def logout(_i: int) -> None:
            guest.request("GET", "/admin")
            guest.request("POST", "/admin/logout", {"everywhere": True})
            time.sleep(0.2)

        return Attack(logout)
    if kind == "pin-flood":
        def guess(i: int) -> None:
            phone = Phone(port, f"127.{10 + (i // 60000) % 200}.{(i // 250) % 240}.{i % 250 + 1}")
            phone.request("GET", "/admin")
            phone.request("POST", "/admin/login", {"pin": f"{i % 1_000_000:06d}"})

        return Attack(guess, threads=8)
    if kind == "heavy":
        paths = ("/history", "/api/ledger", "/api/ledger.csv")
        start = time.monotonic()

        def heavy(i: int) -> None:
            time.sleep(max(0.0, start + i / 63.0 - time.monotonic()))
            Phone(port, "127.0.6.1").request("GET", paths[i % 3])

        return Attack(heavy)
    if kind == "half-open":
        held: dict[int, socket.socket] = {}

        def trickle(i: int) -> None:
            if not held:  # 17 addresses x 32 connections, each sending one header line a second
                for n in range(17 * 32):
                    try:
                        held[n] = _half_open(port, f"127.0.8.{n // 32 + 1}")
                    except OSError:
                        pass
            for n in range(17 * 32):
                sock = held.get(n)
                try:
                    if sock is None:
                        raise OSError
                    sock.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    if sock is not None:
                        sock.close()
                    try:
                        held[n] = _half_open(port, f"127.0.8.{n // 32 + 1}")
                    except OSError:
                        held.pop(n, None)
            time.sleep(1.0)

        attack = Attack(trickle)
        attack.held = held  # type: ignore[attr-defined]
        return attack
    raise ValueError(f"unknown attack {kind!r} (one of {', '.join(ATTACKS)})")


def _half_open(port: int, address: str) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=2, source_address=(address, 0))
    sock.sendall(b"GET /api/state HTTP/1.1\r\nHost: localhost\r\n")
    return sock


def host_cycle(port: int, press: Callable[[], None], n: int) -> float:
    """The host's phone: log in (pressing a seat button if asked) and send one command; seconds."""
    t0 = time.monotonic()
    host = Phone(port, "127.0.9.1")
    host.request("GET", "/admin")
    status, text = host.request("POST", "/admin/login", {"pin": PIN})
    if status == 429 and "seat button" in text:
        press()
        time.sleep(0.05)
        status, text = host.request("POST", "/admin/login", {"pin": PIN})
    if status != 200:
        raise RuntimeError(f"host login answered {status}: {text[:120]}")
    status, text = host.request("POST", "/api/admin/adjust_chips",
                                {"player": "Ann", "delta": 1 if n % 2 else -1, "reason": "bench host"})
    if status != 200:
        raise RuntimeError(f"host command answered {status}: {text[:120]}")
    return time.monotonic() - t0


def run(attacks: list[str], *, deals: int, duration: float, seed: int) -> int:
    with tempfile.TemporaryDirectory(prefix="loo-bench-attack-") as tmp:
        child = subprocess.Popen([sys.executable, __file__, "--serve", tmp, str(seed)], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert child.stdin is not None and child.stdout is not None
        stdin, stdout = child.stdin, child.stdout
        try:
            head = stdout.readline().split()
            if len(head) != 2 or head[0] != "PORT":
                print(f"error: the table did not start ({' '.join(head) or 'no output'})", file=sys.stderr)
                return 1
            port = int(head[1])
            times: list[float] = []
            lock = threading.Lock()

            def reader() -> None:
                for line in stdout:
                    if line.startswith("DEAL "):
                        with lock:
                            times.append(float(line.split()[1]))

            threading.Thread(target=reader, daemon=True).start()

            def press() -> None:
                stdin.write("PRESS\n")
                stdin.flush()

            def phase(kind: str | None) -> tuple[list[float], list[float], Attack | None]:
                with lock:
                    start = len(times)
                attack = make_attack(kind, port) if kind else None
                if attack:
                    attack.start()
                host: list[float] = []
                t0 = time.monotonic()
                n = 0
                while time.monotonic() - t0 < duration:
                    with lock:
                        if len(times) - start >= deals:
                            break
                    host.append(host_cycle(port, press, n))
                    n += 1
                    time.sleep(3.0)
                if attack:
                    attack.stop.set()
                    attack.join(15)
                    for sock in getattr(attack, "held", {}).values():
                        sock.close()
                with lock:
                    return times[start:], host, attack

            phase(None)  # warm-up: the first deals load the model and learn the deck
            base, base_host, _ = phase(None)
            if not base:
                print("error: no deal finished unloaded", file=sys.stderr)
                return 1
            ref = statistics.median(base)
            print(f"unloaded: {len(base)} deals, median {ref:.2f} s; host login + command max "
                  f"{max(base_host, default=0):.2f} s", flush=True)
            worst = 0.0
            for kind in attacks:
                got, host, attack = phase(kind)
                ratio = statistics.median(got) / ref if got else float("inf")
                worst = max(worst, ratio)
                print(f"{kind}: {len(got)} deals, median {statistics.median(got) if got else float('nan'):.2f} s, "
                      f"ratio {ratio:.2f} (target <= 1.5: {'met' if ratio <= 1.5 else 'NOT met'}); host login + "
                      f"command max {max(host, default=0):.2f} s over {len(host)} (target <= 2 s: "
                      f"{'met' if host and max(host) <= 2 else 'NOT met'}); attack sent {attack.sent if attack else 0}, "
                      f"{attack.failed if attack else 0} refused at connect", flush=True)
            stdin.write("END\n")
            stdin.flush()
            child.wait(60)
        finally:
            if child.poll() is None:
                child.kill()
    return 0


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attack", metavar="MODE", action="append",
                        help=f"one of {', '.join(ATTACKS)} or all (repeatable; default all)")
    parser.add_argument("--deals", type=int, default=4, help="deals timed unloaded and under each attack")
    parser.add_argument("--seconds", type=float, default=60.0, help="the longest each phase runs (default 60)")
    parser.add_argument("--seed", type=int, default=1, help="the demo night's seed")
    args = parser.parse_args(argv)
    modes = list(ATTACKS) if not args.attack or "all" in args.attack else args.attack
    if any(m not in ATTACKS for m in modes) or args.deals < 1 or args.seconds <= 0:
        parser.error(f"--attack: one of {', '.join(ATTACKS)} or all; --deals >= 1; --seconds > 0")
    return run(modes, deals=args.deals, duration=args.seconds, seed=args.seed)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--serve":
        raise SystemExit(serve(sys.argv[2], int(sys.argv[3])))
    raise SystemExit(main())
