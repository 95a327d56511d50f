"""`loo-table run --keep-trying` (the systemd unit): a table that cannot start is never left dead.
It says why on the dashboard's port, tries again slower each time, and comes up once the cause is
fixed; runs that end badly are counted across restarts, so a crash loop slows down too."""

from __future__ import annotations

import argparse
import json
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from table.commands.run import KeepTrying
from table.keep_trying import RETRY_DELAYS, UNCLEAN_END, StartRecord, retry_delay
from table.runtime import default_model_path

HAVE_MODEL = default_model_path().is_file()


def write_config(tmp_path: Path, model: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[state]\ndatabase = "{tmp_path / "state" / "ledger.db"}"\nbackup_dir = "{tmp_path / "state" / "backups"}"\n'
        '[camera]\nsource = "synthetic"\nwidth = 640\nheight = 360\n'
        f'[model]\npath = "{model}"\n'
        '[web]\nhost = "127.0.0.1"\nport = 0\nadmin_pin = "135790"\n')
    return path


def args_for(cfg: Path) -> argparse.Namespace:
    return argparse.Namespace(config=str(cfg), mock_pins=True, host=None, port=None, max_seconds=None,
                              quiet=True, keep_trying=True)


def fetch(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def wait_until(predicate, what, timeout=30.0):  # noqa: ANN001, ANN201
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_the_delays_grow_and_never_end() -> None:
    assert [retry_delay(n) for n in range(8)] == [0, 10, 20, 40, 80, 160, 300, 300]
    assert retry_delay(1000) == RETRY_DELAYS[-1] == 300


def test_the_record_counts_bad_ends_across_restarts(tmp_path) -> None:
    record = StartRecord.load(tmp_path)
    record.begin()
    assert record.failures == 0  # a first start
    record.running()
    again = StartRecord.load(tmp_path)  # the process died without stopping: the next start counts it
    again.begin()
    assert again.failures == 1 and again.reason == UNCLEAN_END
    again.running()
    again.stopped()  # systemctl stop: a clean end is no failure
    third = StartRecord.load(tmp_path)
    third.begin()
    assert third.failures == 1
    third.stable()
    assert StartRecord.load(tmp_path).failures == 0
    (tmp_path / "start-record.json").write_text("{not json")
    assert StartRecord.load(tmp_path).failures == 0  # a damaged record is a fresh start
    StartRecord.load(tmp_path / "missing").failed("x")  # an unwritable folder: in memory only


@pytest.mark.skipif(not HAVE_MODEL, reason="the shipped card model is missing")
def test_a_failed_start_is_shown_retried_slower_and_comes_up_once_fixed(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    cfg = write_config(tmp_path, model=str(tmp_path / "lost.onnx"))
    keeper = KeepTrying(args_for(cfg), delays=(0.6, 2.4), stable_after=0.5)
    runner = threading.Thread(target=keeper.run, daemon=True)
    runner.start()
    try:
        wait_until(lambda: keeper.page is not None, "the trouble page")
        port = keeper.page.port
        code, body = fetch(f"http://127.0.0.1:{port}/")
        assert code == 503 and b"The table has not started" in body and b"lost.onnx" in body
        code, body = fetch(f"http://127.0.0.1:{port}/api/state")
        state = json.loads(body)
        assert code == 503 and state["status"]["state"] == "fault" and "card model" in state["status"]["message"]
        assert state["starting"]["failures"] == 1 and 0 < state["starting"]["retry_in"] <= 0.6
        written = tmp_path / "state" / "start-record.json"  # replaced whole (os.replace): never half read
        # the count is raised in memory before the file is written: wait for the file itself
        wait_until(lambda: keeper.record.failures == 2 and json.loads(written.read_text())["failures"] == 2,
                   "a second try")
        record = json.loads(written.read_text())
        assert record["failures"] == 2 and "lost.onnx" in record["reason"]
        err = ""

        def said_twice() -> bool:
            nonlocal err
            err += capsys.readouterr().err
            return "trying again in 2 s" in err

        wait_until(said_twice, "the second wait")
        assert "trying again in 1 s" in err  # the first wait was shorter
        cfg.write_text(cfg.read_text().replace(str(tmp_path / "lost.onnx"), ""))  # the host fixes it
        wait_until(lambda: keeper.controller is not None and hasattr(keeper.controller, "web"), "the table")
        ctl = keeper.controller
        code, body = fetch(f"http://127.0.0.1:{ctl.web.port}/api/state")
        assert code == 200 and b'"phase"' in body
        wait_until(lambda: keeper.record.failures == 0, "the count cleared after a stable run")
    finally:
        keeper.stop_event.set()
        runner.join(20)
    assert not runner.is_alive()
    record = json.loads((tmp_path / "state" / "start-record.json").read_text())
    assert record["running_since"] is None  # stopped cleanly


def test_a_crash_loop_waits_before_the_next_start_and_stops_on_request(tmp_path, monkeypatch, capsys) -> None:
    state = tmp_path / "state"
    state.mkdir()
    monkeypatch.setenv("STATE_DIRECTORY", str(state))
    (state / "start-record.json").write_text(json.dumps({"failures": 1, "reason": "x", "running_since": 1.0}))
    cfg = tmp_path / "config.toml"
    cfg.write_text("[game\n")  # also unreadable: the page goes on the default address's port given here
    args = args_for(cfg)
    args.host, args.port = "127.0.0.1", 0
    keeper = KeepTrying(args, delays=(30.0, 60.0))
    runner = threading.Thread(target=keeper.run, daemon=True)
    runner.start()
    wait_until(lambda: keeper.page is not None, "the trouble page")
    assert keeper.record.failures == 2 and keeper.record.reason == UNCLEAN_END
    code, body = fetch(f"http://127.0.0.1:{keeper.page.port}/")
    assert code == 503 and b"without stopping cleanly" in body
    assert "trying again in 60 s" in capsys.readouterr().err  # the second bad end in a row
    started = time.monotonic()
    keeper.stop_event.set()  # systemctl stop while it waits
    runner.join(10)
    assert not runner.is_alive() and time.monotonic() - started < 5
