"""Fixtures for the dashboard tests: the in-memory service, an app on a temp state dir, an admin."""

from __future__ import annotations

import pytest
from web_fakes import ORIGIN, PIN, FakeService, csrf_of

from web import create_app


@pytest.fixture
def service() -> FakeService:
    return FakeService()


@pytest.fixture
def app(service: FakeService, tmp_path):
    return create_app(service, config={"STATE_DIR": tmp_path, "ADMIN_PIN": PIN, "KEEPALIVE_S": 0.2,
                                       "STREAM_WAIT_S": 0.05, "MAX_STREAMS": 2})


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def admin(client):
    """A test client logged in as admin; returns (client, csrf token)."""
    token = csrf_of(client)
    resp = client.post("/admin/login", json={"pin": PIN}, headers={"Origin": ORIGIN, "X-CSRF-Token": token})
    assert resp.status_code == 200, resp.get_json()
    return client, resp.get_json()["csrf_token"]
