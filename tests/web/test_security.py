"""Reading is public; changing needs the admin session, a CSRF token and a same-origin Origin."""

# ruff: noqa: F811 (the fixtures imported from web_fakes are test arguments of the same name)

from __future__ import annotations

import logging

from web_fakes import ORIGIN, PIN, admin, app, client, csrf_of, service  # noqa: F401 (pytest fixtures, used by name)

from web import create_app, ensure_admin_pin
from web.security import PIN_FILE, SECRET_FILE, LoginLimiter, TablePresence


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
    assert "Secure" not in cookie  # plain HTTP on the LAN by default


def test_secure_cookies_behind_https(service, tmp_path):
    """Issue 49 #9: the Secure flag follows the configuration."""
    app = create_app(service, config={"STATE_DIR": tmp_path, "ADMIN_PIN": PIN, "SECURE_COOKIES": True})
    client = app.test_client()
    token = csrf_of(client)
    resp = client.post("/admin/login", json={"pin": PIN}, base_url="https://localhost",
                       headers={"Origin": "https://localhost", "X-CSRF-Token": token})
    assert resp.status_code == 200 and "Secure" in resp.headers["Set-Cookie"]


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


def _cookie(client):
    return client.get_cookie("loo_session").value


def test_logout_ends_only_its_own_session_and_a_copied_cookie_of_it(app, admin):
    client, token = admin
    other = app.test_client()  # a second admin phone
    assert _login(other, PIN, csrf_of(other)).status_code == 200
    stolen = _cookie(client)
    client.post("/admin/logout", json={}, headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert other.get("/admin/partial").status_code == 200  # the other phone's session goes on
    replay = app.test_client()
    replay.set_cookie("loo_session", stolen)  # the cookie from before the logout, sent again
    assert replay.get("/admin/partial").status_code == 401


def test_a_guest_logout_leaves_the_host_logged_in(app, admin, service):
    """Issue 49 #1: a guest gets a CSRF token from the login page; their logout ends nothing else."""
    host, host_token = admin
    guest = app.test_client()
    for _ in range(5):
        resp = guest.post("/admin/logout", json={}, headers={"Origin": ORIGIN, "X-CSRF-Token": csrf_of(guest)})
        assert resp.status_code == 200
        resp = guest.post("/admin/logout", json={"everywhere": True},
                          headers={"Origin": ORIGIN, "X-CSRF-Token": csrf_of(guest)})
        assert resp.status_code == 200
        ok = host.post("/api/admin/pause", json={}, headers={"Origin": ORIGIN, "X-CSRF-Token": host_token})
        assert ok.status_code == 200
    assert [c for c, _ in service.commands] == ["pause"] * 5


def test_logout_everywhere_from_an_admin_ends_every_session(app, admin):
    client, token = admin
    other = app.test_client()
    assert _login(other, PIN, csrf_of(other)).status_code == 200
    client.post("/admin/logout", json={"everywhere": True}, headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert other.get("/admin/partial").status_code == 401
    assert client.get("/admin/partial").status_code == 401


def test_session_store_keeps_digests_only_and_forgets_on_a_new_pin(tmp_path):
    from web.sessions import SESSIONS_FILE, SessionStore

    now = [1000.0]
    store = SessionStore(tmp_path, "hash-a", lifetime_s=60, clock=lambda: now[0], cap=3)
    ids = [store.open() for _ in range(4)]
    assert not store.valid(ids[0]) and all(store.valid(i) for i in ids[1:])  # the oldest gave way
    text = (tmp_path / SESSIONS_FILE).read_text()
    assert not any(i in text for i in ids)
    assert (tmp_path / SESSIONS_FILE).stat().st_mode & 0o777 == 0o600
    assert SessionStore(tmp_path, "hash-a", lifetime_s=60, clock=lambda: now[0]).valid(ids[3])  # a restart
    assert not SessionStore(tmp_path, "hash-b", lifetime_s=60, clock=lambda: now[0]).valid(ids[3])  # new PIN
    now[0] += 61
    assert not store.valid(ids[3])  # expired


def test_a_pin_change_and_restart_ends_every_session(service, tmp_path, admin):
    client, _ = admin
    app = create_app(service, config={"STATE_DIR": tmp_path, "ADMIN_PIN": PIN})  # a restart
    again = app.test_client()
    again.set_cookie("loo_session", _cookie(client))
    assert again.get("/admin/partial").status_code == 200  # a restart alone keeps the host logged in
    app = create_app(service, config={"STATE_DIR": tmp_path, "ADMIN_PIN": "13579"})  # new PIN + restart
    again = app.test_client()
    again.set_cookie("loo_session", _cookie(client))
    assert again.get("/admin/partial").status_code == 401


def test_wrong_pins_are_rate_limited_per_client(client):
    token = csrf_of(client)
    for _ in range(5):
        assert _login(client, "111111", token).status_code == 401
    limited = _login(client, PIN, token)  # even the right PIN waits
    assert limited.status_code == 429 and int(limited.headers["Retry-After"]) > 0
    other = client.post("/admin/login", json={"pin": PIN}, environ_base={"REMOTE_ADDR": "10.0.0.9"},
                        headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert other.status_code == 200  # another phone is not locked out


def test_limiter_five_tries_a_minute_then_a_doubling_lock_out():
    now = [0.0]
    lim = LoginLimiter(per_client=5, overall=20, window_s=60, max_lock_s=3600, clock=lambda: now[0])
    assert [lim.attempt("a") for _ in range(5)] == [0] * 5
    assert lim.attempt("a") == 60  # the sixth try in the minute waits, counted or not
    waits = []
    for _ in range(4):  # each lock-out doubles: 60, 120, 240, 480 s
        now[0] += lim.attempt("a")
        assert [lim.attempt("a") for _ in range(5)] == [0] * 5
        waits.append(lim.attempt("a"))
    assert waits == [120, 240, 480, 960]
    lim.succeeded("a")  # the right PIN at last: a clean record
    assert lim.attempt("a") == 0


def test_limiter_budget_is_for_the_whole_server_and_a_seat_press_lets_the_host_in():
    """Issue 49 #3: new addresses share one budget (20 in five minutes); then a press at the table."""
    now = [0.0]
    presence = TablePresence(window_s=60, tries_per_press=3, clock=lambda: now[0])
    lim = LoginLimiter(per_client=5, overall=20, window_s=60, budget_window_s=300, presence=presence,
                       clock=lambda: now[0])
    assert [lim.attempt(f"10.0.{i}.1") for i in range(20)] == [0] * 20  # 20 fresh addresses, one try each
    refused = lim.check("10.0.99.1")  # a 21st fresh address: not checked
    assert refused is not None and "press any seat button" in refused.reason and refused.wait == 300
    presence.pressed()  # the host presses a button at the table
    assert [lim.attempt("192.168.1.5") for _ in range(4)] == [0, 0, 0, 300]  # three tries per press
    now[0] += 61
    presence.pressed()
    now[0] += 61  # the press is stale after a minute
    assert lim.attempt("192.168.1.5") > 0
    now[0] = 301.0  # the five minutes have passed for the first tries
    assert lim.attempt("10.0.99.1") == 0


def test_a_parallel_burst_of_wrong_pins_gets_five_tries(app):
    """The check and the count are one step: 40 threads at once from one address get 5 tries."""
    import threading

    from web_fakes import csrf_of

    tried = []
    barrier = threading.Barrier(40)

    def guess() -> None:
        client = app.test_client()
        token = csrf_of(client)
        barrier.wait()
        tried.append(_login(client, "111111", token).status_code)

    threads = [threading.Thread(target=guess) for _ in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(tried).count(401) == 5 and tried.count(429) == 35


def test_many_guessers_never_lock_out_the_host(app):
    """8 addresses spend the server's budget; the host's right PIN then needs a press at the table."""
    token_of = {}
    for i in range(8):
        c = app.test_client()
        token_of[i] = (c, csrf_of(c))
    for _ in range(5):
        for i, (c, token) in token_of.items():
            c.post("/admin/login", json={"pin": "111111"}, environ_base={"REMOTE_ADDR": f"10.0.0.{i}"},
                   headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    host = app.test_client()
    token = csrf_of(host)

    def host_login():
        return host.post("/admin/login", json={"pin": PIN}, environ_base={"REMOTE_ADDR": "10.0.0.99"},
                         headers={"Origin": ORIGIN, "X-CSRF-Token": token})

    refused = host_login()
    assert refused.status_code == 429 and "press any seat button" in refused.get_json()["error"]
    app.extensions["loo"].limiter.presence.pressed()
    assert host_login().status_code == 200


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
    assert resp.status_code == 429 and "Too many wrong PINs. Try again in" in resp.get_data(as_text=True)
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


def test_deeply_nested_json_is_a_400_on_every_post_route(app, admin):
    client, token = admin
    routes = [r.rule for r in app.url_map.iter_rules() if "POST" in r.methods]
    assert "/admin/login" in routes and len(routes) >= 3
    bodies = ("[" * 60_000, '{"a":' * 10_000 + "1" + "}" * 10_000, "[" * 20 + "]" * 20,
              '{"pin": ' + "9" * 5000 + "}")
    for body in bodies:
        resp = client.post("/api/admin/pause", data=body, content_type="application/json",
                           headers={"Origin": ORIGIN, "X-CSRF-Token": token})
        assert resp.status_code == 400 and "JSON" in resp.get_json()["error"]
    for body in bodies:
        for rule in routes:  # the login (a wrong PIN, then rate-limited) and logout included
            resp = client.post(rule.replace("<name>", "pause"), data=body, content_type="application/json",
                               headers={"Origin": ORIGIN, "X-CSRF-Token": token})
            assert 400 <= resp.status_code < 500 or resp.status_code in (200, 303), (rule, resp.status_code)


def test_loads_limited_bounds_depth():
    import pytest

    from web.validate import MAX_JSON_DEPTH, loads_limited

    assert loads_limited("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)
    for text in ("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1), "[" * 200_000):
        with pytest.raises(ValueError, match="nested deeper"):
            loads_limited(text)
