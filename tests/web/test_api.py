"""The JSON API: state (ETag polling), deals, records, ledger, settlement."""

# ruff: noqa: F811 (the fixtures imported from web_fakes are test arguments of the same name)

from __future__ import annotations

import csv
import io

from web_fakes import admin, app, client, service  # noqa: F401 (pytest fixtures, used by name)


def test_state_etag_polling(client, service):
    first = client.get("/api/state")
    assert first.status_code == 200 and first.get_json()["version"] == 1
    etag = first.headers["ETag"]
    unchanged = client.get("/api/state", headers={"If-None-Match": etag})
    assert unchanged.status_code == 304 and unchanged.data == b""
    service.play("Cal", "2H")
    changed = client.get("/api/state", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.get_json()["trick"]["plays"][-1] == {"player": "Cal", "card": "2H"}


def test_deals_chips_settings(client):
    assert client.get("/api/deals").get_json()[0]["number"] == 1
    assert client.get("/api/chips").get_json()["Bea"] == [50, 47, 53]
    assert client.get("/api/settings").get_json()["variant"] == "three_card"


def test_records_list_and_one_record_download(client):
    records = client.get("/api/records").get_json()
    assert records[0]["format"] == "loo-hand/1"
    one = client.get("/api/records/1")
    assert one.get_json()["id"] == "deal-1"
    assert one.headers["Content-Disposition"] == 'attachment; filename="loo-deal-1.json"'
    assert "attachment" in client.get("/api/records?download=1").headers["Content-Disposition"]


def test_record_out_of_range_is_json_404(client):
    for n in (0, 2):
        resp = client.get(f"/api/records/{n}")
        assert resp.status_code == 404 and "no finished deal" in resp.get_json()["error"]


def test_ledger_json_and_csv_neutralises_formulas(client):
    assert client.get("/api/ledger").get_json()[1]["reason"] == "=HYPERLINK(1)"
    resp = client.get("/api/ledger.csv")
    assert resp.mimetype == "text/csv" and "loo-ledger.csv" in resp.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(resp.get_data(as_text=True))))
    assert [r["seq"] for r in rows] == ["1", "2"]
    assert rows[1]["amount"] == "-3"  # numbers stay numbers
    assert rows[1]["reason"] == "'=HYPERLINK(1)"  # text that a spreadsheet would run does not


def test_settlement_api(client, service):
    service.history = {"Ann": [50, 40], "Bea": [50, 65], "Cal": [50, 45]}
    body = client.get("/api/settlement?chip_value=0.5").get_json()
    assert body["in_pool"] == 0
    assert {(t["from"], t["to"], t["chips"], t["money"]) for t in body["transfers"]} == {
        ("Ann", "Bea", 10, "5.00"), ("Cal", "Bea", 5, "2.50")}
    bad = client.get("/api/settlement?chip_value=-1")
    assert bad.status_code == 400 and "between 0 and 1000" in bad.get_json()["error"]
