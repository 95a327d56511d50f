"""The HTML pages: Table, History, End of night, QR; what a phone sees."""

# ruff: noqa: F811 (the fixtures imported from web_fakes are test arguments of the same name)

from __future__ import annotations

import re

from web_fakes import admin, app, client, service  # noqa: F401 (pytest fixtures, used by name)


def test_table_page_shows_seats_chips_pool_trump_trick_alerts(client):
    html = client.get("/").get_data(as_text=True)
    for text in ("Ann", "Bea", "Cal", 'data-chips="47"', 'data-chips="53"', 'id="pool">9<', "to act"):
        assert text in html
    assert 'aria-label="7 of hearts"' in html  # the trump card
    assert 'aria-label="ace of hearts"' in html  # the trick
    assert "Ann&#39;s card is unclear" in html and "8♣ 61%" in html
    assert '<svg width="' in html and 'class="qr"' in html  # QR code inline



def test_public_pages_leave_the_session_alone(client):
    for path in ("/", "/history", "/end", "/table/partial", "/api/state"):
        resp = client.get(path)
        assert "Set-Cookie" not in resp.headers, path
        assert 'name="csrf-token"' not in resp.get_data(as_text=True)
    assert "Set-Cookie" in client.get("/admin").headers  # the login form needs its token


def test_table_page_needs_no_internet(client):
    html = client.get("/").get_data(as_text=True) + client.get("/admin").get_data(as_text=True)
    links = re.findall(r'(?:src|href)="([^"]*)"', html)
    from web.qr import phone_url

    own = phone_url("http://localhost/")  # the dashboard's own address for phones (the QR code's)
    assert links and all(u.startswith(("/", "data:", "#", own)) for u in links), links
    css = client.get("/static/style.css").get_data(as_text=True)
    assert "@import" not in css and "url(http" not in css
    assert "prefers-color-scheme: dark" in css


def test_partial_has_etag_and_304_when_unchanged(client, service):
    first = client.get("/table/partial")
    assert first.status_code == 200 and first.headers["X-Loo-Version"] == "1"
    etag = first.headers["ETag"]
    assert client.get("/table/partial", headers={"If-None-Match": etag}).status_code == 304
    service.play("Cal", "KH")
    again = client.get("/table/partial", headers={"If-None-Match": etag})
    assert again.status_code == 200 and 'aria-label="king of hearts"' in again.get_data(as_text=True)
    assert again.headers["ETag"] != etag


def test_status_banner_and_game_over(client, service):
    service.command("pause", {})
    service.command("end_game", {})
    html = client.get("/table/partial").get_data(as_text=True)
    assert "Paused by the host." in html and "Game over" in html


def test_history_lists_deals_revokes_and_draws_chart(client, service):
    service._deals.append({"number": 2, "dealer": "Cal", "finished": False})  # in play: no record yet
    html = client.get("/history").get_data(as_text=True)
    assert "Deal 2" in html and "in play" in html and "/api/records/2" not in html
    assert "Deal 1" in html and "Ann revoked in trick 1: held K♠ when spades were led" in html
    assert '<svg class="chart"' in html and html.count("<polyline") == 3
    assert "/api/records/1" in html and "/api/ledger.csv" in html
    assert f"Ledger head: event {service.ledger_head()['seq']}, hash" in html and "ab12ab12ab12ab12" in html


def test_end_of_night_while_pool_holds_chips_shows_results_without_transfers(client):
    html = client.get("/end").get_data(as_text=True)
    assert "+3" in html and "-9" in html  # Bea +3, Cal -9 (money at 0.10: 0.30, -0.90)
    assert "0.30" in html and "-0.90" in html
    assert "still in the pool" in html


def test_end_of_night_transfers_at_chip_value(client, service):
    service.history = {"Ann": [50, 40], "Bea": [50, 65], "Cal": [50, 45]}
    html = client.get("/end?chip_value=0.25").get_data(as_text=True)
    assert "2 transfers" in html
    assert "<b>Ann</b> pays <b>Bea</b> 10 chips = 2.50" in html
    assert "<b>Cal</b> pays <b>Bea</b> 5 chips = 1.25" in html


def test_end_of_night_bad_chip_value_is_400_not_500(client):
    resp = client.get("/end?chip_value=lots")
    assert resp.status_code == 400 and "not a number" in resp.get_data(as_text=True)


def test_qr_svg_encodes_this_host(client):
    resp = client.get("/qr.svg", base_url="http://192.0.2.7:8000")
    assert resp.mimetype == "image/svg+xml" and "http://192.0.2.7:8000/" in resp.get_data(as_text=True)


def test_unknown_page_404_html_and_api_404_json(client):
    assert client.get("/nope").status_code == 404
    resp = client.get("/api/nope")
    assert resp.status_code == 404 and resp.is_json and resp.get_json()["error"]


def test_security_headers(client):
    resp = client.get("/")
    assert "script-src 'self'" in resp.headers["Content-Security-Policy"]
    assert resp.headers["X-Frame-Options"] == "DENY"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
