"""Reading is public; changing needs the admin session, a CSRF token and a same-origin Origin."""

# ruff: noqa: F811 (the fixtures imported from web_fakes are test arguments of the same name)

from __future__ import annotations

import logging

from web_fakes import ORIGIN, PIN, admin, app, client, csrf_of, service  # noqa: F401 (pytest fixtures, used by name)

from web import create_app, ensure_admin_pin
from web.security import PIN_FILE, SECRET_FILE, LoginLimiter


def _login(client, pin, token, **headers):
    return client.post("/admin/login", json={"pin": pin},
                       headers={"Origin": ORIGIN, "X-CSRF-Token": token, **headers})


def test_reading_is_public_changing_needs_admin(client, service):
    assert client.get("/api/state").status_code == 200
    token = csrf_of(client)
    resp = client.post("/api/admin/pause", json={}, headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert resp.status_code == 401 and resp.get_json()["error"] == "admin login required"
    assert service.commands == []
    assert client.get("/admin/partial").status_code == 401


def test_login_with_pin_opens_admin(client):
    token = csrf_of(client)
    resp = _login(client, PIN, token)
    assert resp.status_code == 200 and resp.get_json()["ok"] is True
    assert resp.get_json()["csrf_token"] != token  # a fresh token after login
    assert "House rules" in client.get("/admin").get_data(as_text=True)


def test_form_login_redirects_and_wrong_pin_rerenders(client):
    token = csrf_of(client)
    bad = client.post("/admin/login", data={"pin": "000000", "csrf_token": token}, headers={"Origin": ORIGIN})
    assert bad.status_code == 401 and "Wrong PIN." in bad.get_data(as_text=True)
    good = client.post("/admin/login", data={"pin": PIN, "csrf_token": token}, headers={"Origin": ORIGIN})
    assert good.status_code == 303 and good.headers["Location"].endswith("/admin")


def test_session_cookie_is_httponly_and_samesite_strict(client):
    token = csrf_of(client)
    resp = _login(client, PIN, token)
    cookie = resp.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and cookie.startswith("loo_session=")


def test_post_without_origin_or_cross_origin_or_without_csrf_is_refused(admin, service):
    client, token = admin
    no_origin = client.post("/api/admin/pause", json={}, headers={"X-CSRF-Token": token})
    assert no_origin.status_code == 403 and "Origin" in no_origin.get_json()["error"]
    cross = client.post("/api/admin/pause", json={}, headers={"Origin": "http://evil.example", "X-CSRF-Token": token})
    assert cross.status_code == 403 and "cross-origin" in cross.get_json()["error"]
    null = client.post("/api/admin/pause", json={}, headers={"Origin": "null", "X-CSRF-Token": token})
    assert null.status_code == 403
    no_token = client.post("/api/admin/pause", json={}, headers={"Origin": ORIGIN})
    assert no_token.status_code == 403 and "CSRF" in no_token.get_json()["error"]
    wrong = client.post("/api/admin/pause", json={}, headers={"Origin": ORIGIN, "X-CSRF-Token": token + "x"})
    assert wrong.status_code == 403
    assert service.commands == []
    ok = client.post("/api/admin/pause", json={}, headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert ok.status_code == 200 and service.commands == [("pause", {})]


def test_login_itself_needs_csrf(client):
    csrf_of(client)
    assert client.post("/admin/login", json={"pin": PIN}, headers={"Origin": ORIGIN}).status_code == 403


def test_logout_closes_the_session(admin, service):
    client, token = admin
    assert client.post("/admin/logout", json={}, headers={"Origin": ORIGIN, "X-CSRF-Token": token}).status_code == 200
    token2 = csrf_of(client)
    resp = client.post("/api/admin/pause", json={}, headers={"Origin": ORIGIN, "X-CSRF-Token": token2})
    assert resp.status_code == 401


def test_wrong_pins_are_rate_limited_per_client(client):
    token = csrf_of(client)
    for _ in range(5):
        assert _login(client, "111111", token).status_code == 401
    limited = _login(client, PIN, token)  # even the right PIN waits
    assert limited.status_code == 429 and int(limited.headers["Retry-After"]) > 0
    other = client.post("/admin/login", json={"pin": PIN}, environ_base={"REMOTE_ADDR": "10.0.0.9"},
                        headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert other.status_code == 200  # another phone is not locked out


def test_limiter_window_and_overall_cap():
    now = [0.0]
    lim = LoginLimiter(per_client=2, overall=3, window_s=10, clock=lambda: now[0])
    lim.failed("a")
    lim.failed("a")
    assert lim.retry_after("a") == 11 and lim.retry_after("b") == 0
    lim.failed("b")
    assert lim.retry_after("c") > 0  # the whole server: 3 failures in the window
    now[0] = 10.5
    assert lim.retry_after("a") == 0 and lim.retry_after("c") == 0


def test_malformed_login_bodies_are_4xx(client):
    token = csrf_of(client)
    for body in ({"pin": 123456}, {}, {"pin": "9" * 100}, ["x"]):
        resp = client.post("/admin/login", json=body, headers={"Origin": ORIGIN, "X-CSRF-Token": token})
        assert resp.status_code == 401 and resp.get_json()["error"] == "wrong PIN"


def test_secret_key_persists_across_restarts(service, tmp_path):
    a = create_app(service, config={"STATE_DIR": tmp_path, "ADMIN_PIN": PIN})
    b = create_app(service, config={"STATE_DIR": tmp_path, "ADMIN_PIN": PIN})
    assert a.secret_key == b.secret_key and len(a.secret_key) == 32
    assert (tmp_path / SECRET_FILE).stat().st_mode & 0o777 == 0o600
    c1 = a.test_client()
    token = csrf_of(c1)
    assert _login(c1, PIN, token).status_code == 200
    cookie = c1.get_cookie("loo_session")
    c2 = b.test_client()
    c2.set_cookie("loo_session", cookie.value)
    assert "House rules" in c2.get("/admin").get_data(as_text=True)  # still logged in after a restart


def test_pin_generated_at_first_start_then_kept(tmp_path):
    first = ensure_admin_pin(tmp_path)
    assert first.new_pin is not None and len(first.new_pin) == 6 and first.new_pin.isdigit()
    assert first.new_pin not in first.path.read_text()  # stored hashed
    assert ensure_admin_pin(tmp_path).new_pin is None
    assert (tmp_path / PIN_FILE).stat().st_mode & 0o777 == 0o600


def test_generated_pin_logs_in_and_config_pin_replaces_it(service, tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="web"):
        app = create_app(service, config={"STATE_DIR": tmp_path})
    pin = caplog.records[-1].args[0]
    client = app.test_client()
    token = csrf_of(client)
    assert _login(client, pin, token).status_code == 200
    app2 = create_app(service, config={"STATE_DIR": tmp_path, "ADMIN_PIN": "4321"})
    c2 = app2.test_client()
    t2 = csrf_of(c2)
    assert _login(c2, pin, t2).status_code == 401
    assert _login(c2, "4321", t2).status_code == 200


def test_bad_config_pin_and_missing_state_dir_are_refused(service, tmp_path):
    import pytest

    with pytest.raises(ValueError, match="4 to 12 digits"):
        create_app(service, config={"STATE_DIR": tmp_path, "ADMIN_PIN": "abc"})
    with pytest.raises(ValueError, match="STATE_DIR"):
        create_app(service, config={})


def test_debug_is_never_on(service, tmp_path):
    app = create_app(service, config={"STATE_DIR": tmp_path, "ADMIN_PIN": PIN, "DEBUG": True})
    assert app.debug is False and app.config["DEBUG"] is False


def test_form_login_when_rate_limited_rerenders_with_429(client):
    token = csrf_of(client)
    for _ in range(5):
        _login(client, "111111", token)
    resp = client.post("/admin/login", data={"pin": PIN, "csrf_token": token}, headers={"Origin": ORIGIN})
    assert resp.status_code == 429 and "too many wrong PINs" in resp.get_data(as_text=True)
    assert int(resp.headers["Retry-After"]) > 0


def test_form_logout_redirects_to_the_table(admin):
    client, token = admin
    resp = client.post("/admin/logout", data={"csrf_token": token}, headers={"Origin": ORIGIN})
    assert resp.status_code == 303 and resp.headers["Location"].endswith("/")
    assert "PIN" in client.get("/admin").get_data(as_text=True)  # the login form again


def test_damaged_key_and_pin_files_are_replaced_not_fatal(tmp_path):
    from web.security import load_secret_key

    (tmp_path / SECRET_FILE).write_text("zz" * 40)
    key = load_secret_key(tmp_path)
    assert len(key) == 32 and load_secret_key(tmp_path) == key
    (tmp_path / PIN_FILE).write_text("garbage\n")
    made = ensure_admin_pin(tmp_path)
    assert made.new_pin is not None  # a new PIN to show, instead of a file nobody can log in with
    assert ensure_admin_pin(tmp_path).new_pin is None
