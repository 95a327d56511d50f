"""10,000 seeded random requests against every route, hostile JSON included: never a 500.

Each request picks a route from the app's own URL map (parameters filled with odd values), a
method, and a body: random JSON of random shape (nested up to 100,000 deep, 5,000-digit numbers,
NaN, strings with control characters), random bytes, or a form. Half go with the admin session
and its CSRF token, so the payloads reach the validators and the service, not only the guards.
"""

from __future__ import annotations

import json
import random

import pytest
from web_fakes import ORIGIN, PIN, FakeService, csrf_of

from web import create_app

REQUESTS = 10_000
ODD_STRINGS = ["", " ", "Ann", "ANN", "\x00", "\u202e", "<script>", "A" * 300, "seat:99", "turn_up",
               "10H", "AS", "-1", "1e309", "NaN", "null", "../../etc/passwd", "%00", "☃"]


def _value(rng: random.Random, depth: int = 0) -> object:
    roll = rng.random()
    if depth > 4 or roll < 0.35:
        return rng.choice([0, -1, 1, 2**53, 2**64, 1.5, -0.0, True, False, None, *ODD_STRINGS])
    if roll < 0.65:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["player", "card", "delta", "reason", "alert_id", "zone", "trick", "variant", "players",
            "options", "chips", "pin", "x", "starting_chips", "chip_value", "zones"]
    return {rng.choice(keys + ODD_STRINGS): _value(rng, depth + 1) for _ in range(rng.randrange(5))}


def _body(rng: random.Random) -> tuple[bytes, str]:
    roll = rng.random()
    if roll < 0.55:
        return json.dumps(_value(rng)).encode(), "application/json"
    if roll < 0.65:
        n = rng.choice([20, 1000, 60_000])
        return (rng.choice(["[", '{"a":']) * n).encode(), "application/json"
    if roll < 0.72:
        return ('{"delta": ' + "9" * rng.choice([4301, 5000]) + "}").encode(), "application/json"
    if roll < 0.78:
        return b'{"delta": NaN, "chips": Infinity}', "application/json"
    if roll < 0.9:
        return rng.randbytes(rng.randrange(200)), rng.choice(["application/json", "text/plain", ""])
    return b"pin=1234&csrf_token=x&delta=" + str(rng.random()).encode(), "application/x-www-form-urlencoded"


def _url(rng: random.Random, rule: str) -> str:
    for arg in ("<name>", "<int:number>", "<number>", "<path:filename>", "<filename>"):
        rule = rule.replace(arg, str(rng.choice(["pause", "adjust_chips", "update_settings", "set_zones",
                                                  "correct_card", "1", "0", "99999", "x"])))
    if rng.random() < 0.3:
        rule += "?" + rng.choice(["view=admin", "view=x", "chip_value=-1", "chip_value=1e400", "download=1",
                                  "last_event_id=-5"])
    return rule


@pytest.mark.slow
def test_ten_thousand_fuzzed_requests_never_answer_500(tmp_path):
    service = FakeService()
    app = create_app(service, config={"STATE_DIR": tmp_path, "ADMIN_PIN": PIN, "KEEPALIVE_S": 0.01,
                                      "STREAM_WAIT_S": 0.0, "STREAM_MAX_S": 0.0})
    rng = random.Random(23)
    rules = sorted((r.rule, sorted(r.methods - {"HEAD", "OPTIONS"})) for r in app.url_map.iter_rules()
                   if not r.rule.startswith("/static"))
    commands = [(rule, methods) for rule, methods in rules if rule == "/api/admin/<name>"]
    admin = app.test_client()
    admin_token = csrf_of(admin)
    login = admin.post("/admin/login", json={"pin": PIN}, headers={"Origin": ORIGIN, "X-CSRF-Token": admin_token})
    admin_token = login.get_json()["csrf_token"]
    public = app.test_client()
    public_token = csrf_of(public)
    statuses: dict[int, int] = {}
    for i in range(REQUESTS):
        client, token = (admin, admin_token) if i % 2 else (public, public_token)
        rule, methods = rng.choice(commands) if rng.random() < 0.4 else rng.choice(rules)
        method = rng.choice(methods) if rng.random() < 0.95 else rng.choice(["GET", "POST", "PUT"])
        body, ctype = _body(rng)
        headers = {"Origin": ORIGIN, "X-CSRF-Token": token}
        if rng.random() < 0.05:
            headers = {"Origin": "http://evil.example"}
        if rule.endswith("logout"):
            method = "GET"  # a logout would end the admin session the rest of the run needs
        resp = client.open(_url(rng, rule), method=method, data=body if method == "POST" else None,
                           content_type=ctype or None, headers=headers)
        resp.close()
        statuses[resp.status_code] = statuses.get(resp.status_code, 0) + 1
        assert resp.status_code < 500, (i, rule, method, body[:80], resp.status_code)
    assert sum(statuses.values()) == REQUESTS
    assert statuses.get(200, 0) > 500 and statuses.get(400, 0) > 500  # the payloads reached the checks
