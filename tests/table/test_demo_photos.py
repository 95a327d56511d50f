"""The demo's revokes are proven with photos: its synthetic camera feeds the zone crops, the real
referee keeps them beside the demo's ledger, and the History and the alert show them."""

from __future__ import annotations

import pytest

from table.demo_table import TableDemo
from table.runtime import default_model_path, demo_prototypes_path, load_classifier

pytestmark = pytest.mark.skipif(not default_model_path().is_file(), reason="the shipped card model is missing")


def test_a_revoke_in_the_demo_shows_its_photo(tmp_path):
    classifier = load_classifier(None, threads=1, prototypes=demo_prototypes_path())
    demo = TableDemo(db=tmp_path / "ledger.db", players=["Ann", "Bea", "Cal", "Dot"], seed=4,
                     classifier=classifier, revoke_rate=0.3, worn=0)
    try:
        revoke_alerts: list[dict] = []
        demo.referee.on_change = lambda snap: revoke_alerts.extend(
            a for a in snap["alerts"] if a["kind"] == "revoke" and a not in revoke_alerts)
        summary = demo.play(2)
        assert summary.revokes_caught >= 1, summary
        assert summary.revokes_with_photo == summary.revokes_in_records >= 1
        assert summary.photos_kept >= summary.revokes_with_photo
        assert revoke_alerts and all(demo.photos.read(a["photo"]) for a in revoke_alerts)
        for deal in demo.service.deals():
            for r in deal.get("revokes", []):
                assert demo.photos.read(r["photo"])[:2] == b"\xff\xd8"
    finally:
        demo.close()
