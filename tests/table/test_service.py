"""table.service: the real TableService behind the real dashboard (web.create_app), on a temp ledger."""

from __future__ import annotations

import threading
import time

import pytest
from test_referee import REVOKE_DEAL, start_deal

from table.service import TableService
from web import create_app
from web.service import TableService as TableServiceProtocol

PIN = "135790"
ORIGIN = "http://localhost"


@pytest.fixture
def service(table):
    return TableService(table.ref)


def test_it_is_the_protocol_web_expects(service):
    assert isinstance(service, TableServiceProtocol)


def test_snapshot_shape_and_versions(table, service):
    snap = service.snapshot()
    for key in ("version", "status", "variant", "deal_number", "phase", "pool", "turn_up", "trump",
                "seats", "trick", "alerts", "last_settlement", "game_over"):
        assert key in snap
    v0 = snap["version"]
    start_deal(table)
    assert service.snapshot()["version"] > v0
    seat = service.snapshot()["seats"][0]
    assert {k: seat[k] for k in ("index", "name", "chips", "dealer", "to_act", "declaration", "tricks_won")} == {
        "index": 0, "name": "Ann", "chips": 100, "dealer": False, "to_act": True, "declaration": "play",
        "tricks_won": 0}


def test_changes_since_blocks_until_a_change(table, service):
    v = service.snapshot()["version"]
    t0 = time.monotonic()
    assert service.changes_since(v, 0.05) == []
    assert time.monotonic() - t0 >= 0.04
    timer = threading.Timer(0.05, table.dealer)
    timer.start()
    items = service.changes_since(v, 3)
    timer.join()
    assert len(items) == 1 and items[0]["event"] == "state" and items[0]["id"] > v
    assert items[0]["data"]["phase"] == "turn_up"
    assert service.changes_since(v - 1, 0)[0]["id"] == service.snapshot()["version"]  # resume
    # a phone that last saw version 9999 of an earlier run of the controller gets today's state at once
    assert service.changes_since(9999, 5)[0]["data"]["phase"] == "turn_up"


def test_history_views(table, service):
    start_deal(table)
    for p, c in REVOKE_DEAL:
        table.card(p, c)
    table.dealer()
    deals = service.deals()
    assert [d["number"] for d in deals] == [1, 2] and deals[0]["finished"] and not deals[1]["finished"]
    assert deals[0]["revokes"][0]["message"] == "Bea revoked in trick 1: held 5S when spades were led"
    assert deals[0]["tricks"][0]["winner"] == "Ann"
    assert [r["id"] for r in service.hand_records()] == ["deal-1"]
    assert service.chip_history() == {"Ann": [100, 101], "Bea": [100, 97], "Cal": [100, 101], "Dot": [100, 98]}
    rows = service.ledger_rows()
    assert rows[0]["kind"] == "game_started" and all(isinstance(v, str | int | float) for v in rows[0].values())
    head = service.ledger_head()  # the History page's anchor: the last event's chained hash
    assert head == {"seq": rows[-1]["seq"], "hash": table.ref.ledger.events()[-1].hash} and len(head["hash"]) == 64
    s = service.settings()
    assert s["players"] == ["Ann", "Bea", "Cal", "Dot"] and s["options"]["ante_amount"] == 3
    assert s["game_started"] is True


@pytest.mark.parametrize("name, payload, needle", [
    ("adjust_chips", {"player": "Zed", "delta": 5, "reason": "x"}, "not at the table"),
    ("adjust_chips", {"player": "Ann", "delta": 0, "reason": "x"}, "must not be 0"),
    ("resume", {}, "not paused"),
    ("undo", {}, "nothing to undo"),
    ("confirm_card", {"alert_id": 1}, "not waiting"),
    ("update_settings", {"variant": "whist"}, "variant must be one of"),
    ("update_settings", {"options": {"ante_amount": -3}}, "ante_amount"),
    ("reboot", {}, "unknown command"),
])
def test_bad_commands_raise_and_change_nothing(table, service, name, payload, needle):
    seq, digest = table.ledger.last_seq(), table.ref.state.digest()
    with pytest.raises(ValueError, match=needle):
        service.command(name, payload)
    assert table.ledger.last_seq() == seq and table.ref.state.digest() == digest


def test_commands_apply_and_are_ledger_events(table, service):
    out = service.command("adjust_chips", {"player": "Ann", "delta": 10, "reason": "bought in"})
    assert out["ok"] and out["version"] == service.snapshot()["version"]
    assert service.snapshot()["seats"][0]["chips"] == 110
    service.command("update_settings", {"variant": "irish"})
    assert service.settings()["variant"] == "irish"
    service.command("set_zones", {"zones": {"turn_up": {"x": 1, "y": 2, "width": 90, "height": 100}}})
    assert service.settings()["zones"]["turn_up"]["width"] == 90
    service.command("end_game", {})
    assert service.snapshot()["game_over"] is True
    assert [e.kind for e in table.ledger.events()][-4:] == ["adjust_chips", "settings", "zones", "end_game"]


def test_end_of_game_splits_the_pool_residue(table, service):
    start_deal(table)
    for p, c in REVOKE_DEAL:
        table.card(p, c)
    service.command("end_game", {})  # closes the finished deal, then ends: pool 3 split 1/1/1/0
    snap = service.snapshot()
    assert snap["game_over"] and snap["pool"] == 0
    assert sum(s["chips"] for s in snap["seats"]) == 400


def test_through_the_real_dashboard(table, service, tmp_path):
    app = create_app(service, config={"STATE_DIR": tmp_path / "web", "ADMIN_PIN": PIN})
    client = app.test_client()
    assert client.get("/api/state").get_json()["phase"] == "waiting"
    client.get("/admin")  # the admin page hands out the CSRF token (public pages leave the session alone)
    with client.session_transaction() as sess:
        token = str(sess["csrf"])
    resp = client.post("/admin/login", json={"pin": PIN}, headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    token = resp.get_json()["csrf_token"]
    headers = {"Origin": ORIGIN, "X-CSRF-Token": token}
    resp = client.post("/api/admin/adjust_chips", json={"player": "Bea", "delta": -4, "reason": "paid out"},
                       headers=headers)
    assert resp.status_code == 200, resp.get_json()
    assert client.get("/api/state").get_json()["seats"][1]["chips"] == 96
    resp = client.post("/api/admin/resume", json={}, headers=headers)
    assert resp.status_code == 400 and "not paused" in resp.get_json()["error"]
    assert resp.get_json()["rule"] == "StateError"  # the table's own rule, not the engine's
    assert "adjust_chips" in client.get("/api/ledger.csv").get_data(as_text=True)


def test_every_dashboard_page_renders_a_real_night(table, service, tmp_path):
    start_deal(table)
    for p, c in REVOKE_DEAL:
        table.card(p, c)
    table.dealer()
    table.card("turn_up", "9C")
    table.card("Ann", None, kind="card_unsure", top3=[("QS", 0.4), ("QC", 0.3), ("KS", 0.1)])
    app = create_app(service, config={"STATE_DIR": tmp_path / "web", "ADMIN_PIN": PIN})
    client = app.test_client()
    for url in ("/", "/table/partial", "/history", "/end", "/api/state", "/api/deals", "/api/chips",
                "/api/settings", "/api/records", "/api/records/1", "/api/ledger", "/api/ledger.csv",
                "/api/settlement?chip_value=0.10", "/qr.svg"):
        resp = client.get(url)
        assert resp.status_code == 200, (url, resp.status_code, resp.get_data(as_text=True)[:300])
    assert b"Bea revoked in trick 1" in client.get("/history").get_data()
    assert client.get("/api/records/1").get_json()["format"] == "loo-hand/1"
