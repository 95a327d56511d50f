"""Test doubles for the dashboard tests: an in-memory TableService and request helpers.

The fake's snapshot is a ``web.snapshot.Snapshot`` like the controller's; test_snapshot_shape.py
checks both against that shape.

Kept in a uniquely named module instead of a conftest.py: several test folders have no
``__init__.py``, and pytest keeps only one module named ``conftest`` in ``sys.modules``, so a
second conftest would break ``from conftest import ...`` elsewhere. Test modules import the
fixtures they use from here (``from web_fakes import admin, app, client, service``).
"""

from __future__ import annotations

import copy
import threading
from typing import Any

import pytest

from web import create_app
from web.commands import DashboardCommand, parse_command, to_payload
from web.snapshot import Snapshot

PIN = "246810"
ORIGIN = "http://localhost"


class FakeService:
    """Thread-safe in-memory table: enough state to render every page and apply every command."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.commands: list[tuple[str, dict[str, Any]]] = []
        self.refuse: str | None = None  # make command() raise ValueError(refuse)
        self._settings: dict[str, Any] = {
            "players": ["Ann", "Bea", "Cal"], "variant": "three_card", "options": {},
            "starting_chips": 50, "chip_value": "0.10", "game_started": True,
            "zones": {"seat:0": {"x": 0.0, "y": 0.0, "width": 120.0, "height": 160.0}},
        }
        self._state: Snapshot = {
            "version": 1, "status": {"state": "ready", "message": ""}, "variant": "three_card",
            "deal_number": 2, "phase": "play", "pool": 9, "turn_up": "7H", "trump": "H",
            "seats": [
                {"index": 0, "name": "Ann", "chips": 47, "dealer": False, "to_act": True,
                 "declaration": "play", "tricks_won": 0},
                {"index": 1, "name": "Bea", "chips": 53, "dealer": False, "to_act": False,
                 "declaration": "play", "tricks_won": 1},
                {"index": 2, "name": "Cal", "chips": 41, "dealer": True, "to_act": False,
                 "declaration": "pass", "tricks_won": 0},
            ],
            "trick": {"number": 2, "plays": [{"player": "Bea", "card": "AH"}]},
            "alerts": [{"id": 5, "kind": "unsure", "seat": "Ann", "message": "Ann's card is unclear",
                        "needs_confirmation": True, "card": "8C", "top3": [["8C", 0.61], ["6C", 0.3], ["9C", 0.05]]}],
            "last_settlement": {"paid": {"Bea": 3}, "looed": {"Cal": 3}, "pool_after": 3},
            "game_over": False,
            "commands": {"misdeal": False, "call_civil": False, "replay": False,
                         "claim_flush": [], "show_pam": []},
        }
        self._history: list[dict[str, Any]] = [copy.deepcopy(self._state)]
        self.history = {"Ann": [50, 50, 47], "Bea": [50, 47, 53], "Cal": [50, 53, 41]}  # pool holds 9
        self._deals = [{
            "number": 1, "dealer": "Bea", "turn_up": "2S", "trump": "S",
            "declarations": [["Cal", "play"], ["Ann", "play"], ["Bea", "play"]],
            "tricks": [{"plays": [["Cal", "AS"], ["Ann", "3S"], ["Bea", "4S"]], "winner": "Cal"}],
            "revokes": [{"player": "Ann", "trick": 1, "rule": "must_head", "witness": "KS",
                         "message": "Ann revoked in trick 1: held KS when spades were led"}],
            "paid": {"Cal": 3}, "looed": {"Ann": 3}, "pool_after": 0,
            "balances_after": {"Ann": 47, "Bea": 47, "Cal": 53}, "flush_winner": None, "finished": True,
        }]
        self.records = [{"format": "loo-hand/1", "id": "deal-1", "variant": "three_card",
                         "players": ["Ann", "Bea", "Cal"], "dealer": "Bea",
                         "balances_before": {"Ann": 50, "Bea": 50, "Cal": 50}, "pool_before": 0,
                         "turn_up": "2S", "declarations": [], "tricks": []}]
        self.ledger = [
            {"seq": 1, "kind": "deal_start", "player": "", "amount": 0, "reason": ""},
            {"seq": 2, "kind": "adjust", "player": "Ann", "amount": -3, "reason": "=HYPERLINK(1)"},
        ]

    # ---------------------------------------------------------------- protocol
    def snapshot(self) -> Snapshot:
        with self._cond:
            return copy.deepcopy(self._state)

    def changes_since(self, version: int, timeout: float) -> list[dict[str, Any]]:
        with self._cond:
            self._cond.wait_for(lambda: self._state["version"] > version, timeout=timeout)
            return [{"id": s["version"], "event": "state", "data": copy.deepcopy(s)}
                    for s in self._history if s["version"] > version]

    def deals(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._deals)

    def hand_records(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self.records)

    def ledger_rows(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self.ledger)

    def ledger_head(self) -> dict[str, Any]:
        return {"seq": len(self.ledger), "hash": "ab12" * 16}

    def chip_history(self) -> dict[str, list[int]]:
        return copy.deepcopy(self.history)

    def nights(self) -> list[dict[str, Any]]:
        net = {p: chips[-1] - chips[0] for p, chips in self.history.items()}
        return [{"started": 0.0, "ended": 0.0, "players": list(net), "net": net, "chip_value": "0",
                 "currency": "", "deals": 0, "tonight": True, "over": False}]

    def bought_history(self) -> dict[str, list[int]]:
        return {p: [0] * len(chips) for p, chips in self.history.items()}

    def chips_in(self) -> dict[str, int]:
        return {p: chips[0] for p, chips in self.history.items()}

    def settings(self) -> dict[str, Any]:
        with self._cond:
            return copy.deepcopy(self._settings)

    def command(self, command: DashboardCommand | str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        if isinstance(command, str):  # a test's shortcut: checked as the dashboard checks it
            command = parse_command(command, payload or {}, self.settings())
        name, payload = command.NAME, to_payload(command)
        with self._cond:
            if self.refuse:
                raise ValueError(self.refuse)
            seats = {s["name"]: s for s in self._state["seats"]}
            if name == "adjust_chips":
                if payload["player"] not in seats:
                    raise ValueError(f"no player {payload['player']!r} at the table")
                seats[payload["player"]]["chips"] += payload["delta"]
            elif name == "correct_card":
                if "zone" in payload:  # a card the camera missed: played in that seat's zone
                    if payload["zone"] == "turn_up":
                        self._state["turn_up"], self._state["trump"] = payload["card"], payload["card"][-1]
                    else:
                        who = self._state["seats"][int(payload["zone"][5:])]["name"]
                        self._state["trick"]["plays"].append({"player": who, "card": payload["card"]})
                elif "alert_id" in payload:
                    self._state["alerts"] = [a for a in self._state["alerts"] if a["id"] != payload["alert_id"]]
                    seats["Ann"]["chips"] -= 1  # the correction moves chips, as a re-scored deal would
                else:
                    for play in self._state["trick"]["plays"]:
                        if play["player"] == payload["player"]:
                            play["card"] = payload["card"]
            elif name == "confirm_card":
                self._state["alerts"] = [a for a in self._state["alerts"] if a["id"] != payload["alert_id"]]
            elif name == "pause":
                self._state["status"] = {"state": "paused", "message": "paused by the host"}
            elif name == "resume":
                self._state["status"] = {"state": "ready", "message": ""}
            elif name == "end_game":
                self._state["game_over"] = True
            elif name == "claim_flush":
                valid = len({c[-1] for c in payload["cards"]}) == 1  # the engine also ranks Pam etc.
                self._state.setdefault("flush_claims", []).append(
                    {"player": payload["player"], "cards": payload["cards"], "valid": valid})
                commands = self._state["commands"]
                commands["claim_flush"] = [n for n in commands["claim_flush"] if n != payload["player"]]
                if valid:
                    self._state["phase"] = "over"
                    commands["show_pam"] = list(commands["claim_flush"])
            elif name == "show_pam":
                self._state.setdefault("pam_shown", []).append(payload["player"])
                commands = self._state["commands"]
                commands["show_pam"] = [n for n in commands["show_pam"] if n != payload["player"]]
            elif name == "misdeal":
                self._state["phase"], self._state["trick"] = "over", None
                self._state["commands"] = {**self._state["commands"], "misdeal": False}
            elif name in ("update_settings", "set_zones"):
                self._settings.update(payload)
            self.commands.append((name, payload))
            self._bump()
            return {"ok": True, "version": self._state["version"], "message": f"{name} done"}

    # ---------------------------------------------------------------- test helpers
    def play(self, player: str, card: str) -> int:
        """A card played at the table (what the referee would publish)."""
        with self._cond:
            self._state["trick"]["plays"].append({"player": player, "card": card})
            self._bump()
            return int(self._state["version"])

    def set_state(self, **changes: Any) -> int:
        """Replace top-level snapshot keys (a phase, flush claims…) as the referee would publish."""
        with self._cond:
            self._state.update(copy.deepcopy(changes))
            self._bump()
            return int(self._state["version"])

    def set_options(self, **options: Any) -> None:
        """Change the effective house rules (the controller's ``settings()["options"]``)."""
        with self._cond:
            self._settings["options"].update(options)
            self._bump()

    def _bump(self) -> None:
        self._state["version"] += 1
        self._history.append(copy.deepcopy(self._state))
        self._cond.notify_all()


def csrf_of(client) -> str:
    """Open the admin page (which creates the session's CSRF token) and read the token back."""
    client.get("/admin")
    with client.session_transaction() as sess:
        return str(sess["csrf"])



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
