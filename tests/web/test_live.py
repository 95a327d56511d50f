"""Server-Sent Events: first bytes, state frames, Last-Event-ID resume, keep-alive, the stream cap."""

# ruff: noqa: F811 (the fixtures imported from web_fakes are test arguments of the same name)

from __future__ import annotations

import json
import threading
import time

from web_fakes import admin, app, client, service  # noqa: F401 (pytest fixtures, used by name)


def read_until(resp, predicate, limit_s=3.0):
    """Collect the streamed body until ``predicate(text)`` holds (the stream never ends by itself)."""
    text = ""
    deadline = time.monotonic() + limit_s
    for chunk in resp.response:
        text += chunk.decode()
        if predicate(text) or time.monotonic() > deadline:
            break
    return text


def frames(text):
    out = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line and not line.startswith(":"))
        if "event" in fields:
            out.append(fields)
    return out


def test_stream_opens_with_comment_then_full_snapshot(client, app):
    resp = client.get("/api/stream", buffered=False)
    assert resp.mimetype == "text/event-stream" and resp.headers["Cache-Control"] == "no-cache"
    text = read_until(resp, lambda t: "event: state" in t and t.endswith("\n\n"))
    resp.close()
    assert text.startswith(": open\n\n")
    (f,) = frames(text)
    assert f["id"] == "1" and f["event"] == "state" and json.loads(f["data"])["pool"] == 9
    assert app.extensions["loo"].streams.open == 0  # slot given back on close


def test_stream_delivers_each_new_version_in_order(client, service):
    resp = client.get("/api/stream", buffered=False)
    it = resp.response
    assert b": open" in next(it)

    def play():
        time.sleep(0.1)
        service.play("Cal", "2H")
        service.play("Ann", "3H")

    t = threading.Thread(target=play)
    t.start()
    text = ""
    while text.count("event: state") < 3:
        text += next(it).decode()
    t.join()
    resp.close()
    ids = [int(f["id"]) for f in frames(text)]
    assert ids == [1, 2, 3]
    assert json.loads(frames(text)[-1]["data"])["trick"]["plays"][-1]["card"] == "3H"


def test_last_event_id_resumes_with_only_what_was_missed(client, service):
    service.play("Cal", "2H")  # version 2
    service.play("Ann", "3H")  # version 3
    resp = client.get("/api/stream", headers={"Last-Event-ID": "2"}, buffered=False)
    text = read_until(resp, lambda t: "event: state" in t and t.endswith("\n\n"))
    resp.close()
    assert [f["id"] for f in frames(text)] == ["3"]


def test_up_to_date_client_gets_keepalive_comments(client):
    resp = client.get("/api/stream", headers={"Last-Event-ID": "1"}, buffered=False)
    text = read_until(resp, lambda t: ": keep-alive" in t)  # KEEPALIVE_S is 0.2 in the tests
    resp.close()
    assert ": keep-alive\n\n" in text and "event: state" not in text


def test_garbage_last_event_id_starts_afresh(client):
    resp = client.get("/api/stream", headers={"Last-Event-ID": "abc"}, buffered=False)
    text = read_until(resp, lambda t: "event: state" in t and t.endswith("\n\n"))
    resp.close()
    assert frames(text)[0]["id"] == "1"


def test_over_the_cap_clients_are_told_to_poll(client, app):
    first = client.get("/api/stream", buffered=False)
    second = client.get("/api/stream", buffered=False)
    assert app.extensions["loo"].streams.open == 2  # MAX_STREAMS is 2 in the tests
    third = client.get("/api/stream")
    text = third.get_data(as_text=True)
    (f,) = frames(text)
    assert f["event"] == "overloaded" and json.loads(f["data"])["poll_interval_ms"] == 2000
    first.close()
    second.close()
    assert app.extensions["loo"].streams.open == 0
    fourth = client.get("/api/stream", buffered=False)
    assert b": open" in next(fourth.response)
    fourth.close()


def test_stop_ends_open_streams(client, app):
    resp = client.get("/api/stream", headers={"Last-Event-ID": "1"}, buffered=False)
    next(resp.response)
    app.extensions["loo"].stop.set()
    rest = b"".join(resp.response)  # ends instead of blocking forever
    resp.close()
    assert b"event: state" not in rest


def test_an_id_from_before_a_restart_gets_the_full_snapshot(client):
    resp = client.get("/api/stream", headers={"Last-Event-ID": "900"}, buffered=False)  # now version 1
    text = read_until(resp, lambda t: "event: state" in t and t.endswith("\n\n"))
    resp.close()
    assert frames(text)[0]["id"] == "1"


def html_events(text):
    """(id, html) of every ``html`` event, joining its data lines as a browser does."""
    out = []
    for block in text.split("\n\n"):
        lines = block.split("\n")
        if "event: html" in lines:
            ident = next(line[4:] for line in lines if line.startswith("id: "))
            out.append((ident, "\n".join(line[6:] for line in lines if line.startswith("data: "))))
    return out


def test_table_view_streams_the_rendered_fragment(client, service):
    resp = client.get("/api/stream?view=table", buffered=False)
    it = resp.response
    text = ""
    while "event: html" not in text or not text.endswith("\n\n"):
        text += next(it).decode()
    service.play("Cal", "KH")
    while text.count("event: html") < 2 or not text.endswith("\n\n"):
        text += next(it).decode()
    resp.close()
    (id1, first), (id2, second) = html_events(text)
    assert (id1, id2) == ("1", "2")
    assert 'data-chips="47"' in first and "king of hearts" not in first
    assert 'aria-label="king of hearts"' in second
    assert second == client.get("/table/partial").get_data(as_text=True)  # the same fragment, rendered once


def test_admin_view_needs_the_admin_and_unknown_views_are_400(client, admin):
    anonymous = client.application.test_client()
    resp = anonymous.get("/api/stream?view=admin")
    assert resp.status_code == 401 and resp.is_json
    assert client.get("/api/stream?view=poker").status_code == 400
    logged_in, _ = admin
    resp = logged_in.get("/api/stream?view=admin", buffered=False)
    text = read_until(resp, lambda t: "event: html" in t and t.endswith("\n\n"))
    resp.close()
    assert 'data-chips-of="Ann"' in html_events(text)[0][1]
