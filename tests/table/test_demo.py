"""`loo-table demo`: the full table with nobody at it (mock pins, synthetic camera, real classifier)."""

from __future__ import annotations

import json

import pytest

from table.cli import main
from table.runtime import default_model_path

HAVE_MODEL = default_model_path().is_file()
needs_model = pytest.mark.skipif(not HAVE_MODEL, reason="the shipped card model is missing")


@needs_model
def test_headless_night_prints_a_consistent_summary(tmp_path, capsys):
    db = tmp_path / "demo.db"
    code = main(["demo", "--headless", "--hands", "2", "--seed", "4", "--db", str(db), "--revoke-rate", "0.3"])
    out = capsys.readouterr().out.strip().splitlines()[-1]
    summary = json.loads(out)
    assert code == 0, summary
    assert summary["deals"] == 2 and summary["chips_conserved"] and summary["ledger_verified"]
    assert summary["cards_seen"] >= 2 * 4  # at least the turn-ups and the cards played
    assert sum(summary["chips_at_end"].values()) + summary["pool_at_end"] == 400
    assert summary["revokes_caught"] >= summary["revokes_in_records"]
    # the ledger the demo wrote verifies on its own
    assert main(["ledger", "verify", "--db", str(db)]) == 0


@needs_model
def test_headless_demo_is_deterministic(tmp_path, capsys):
    runs = []
    for i in range(2):
        assert main(["demo", "--headless", "--hands", "1", "--seed", "9", "--db", str(tmp_path / f"{i}.db")]) == 0
        summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        summary.pop("ledger")
        runs.append(summary)
    assert runs[0] == runs[1]


@needs_model
def test_a_demo_ledger_it_cannot_use_is_one_line_and_exit_1(tmp_path, capsys):
    """--db under a file, a corrupt ledger, a ledger another table runs on: one line each."""
    from table.instance import TableLock

    (tmp_path / "file").write_text("not a folder")
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"SQLite format 3\x00" + b"\xee" * 8000)
    busy = tmp_path / "busy.db"
    cases = [(tmp_path / "file" / "ledger.db", "cannot use"), (corrupt, "is corrupt"),
             (busy, "in use by a running table")]
    with TableLock(busy):
        for db, says in cases:
            assert main(["demo", "--headless", "--hands", "1", "--db", str(db)]) == 1
            err = capsys.readouterr().err.strip()
            assert err.count("\n") == 0 and says in err, err
    assert corrupt.read_bytes().startswith(b"SQLite format 3")  # left as it was, for the host to look at


@needs_model
def test_five_card_demo_claims_a_flush_and_shows_pam(tmp_path, capsys):
    """Seed 77 deals Ann a flush in deal 1 (Cal holds Pam): the bots show both on the dashboard's
    command path, through the real camera, pins and referee."""
    db = tmp_path / "five.db"
    assert main(["demo", "--headless", "--variant", "five_card", "--hands", "1", "--seed", "77",
                 "--db", str(db)]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["flushes_claimed"] == 1 and summary["pam_shown"] == 1
    assert summary["chips_conserved"] and summary["ledger_verified"] and summary["deals"] == 1


def test_text_mode_is_kept(capsys):
    assert main(["demo", "--text", "--hands", "1", "--seed", "2", "--ascii"]) == 0
    assert capsys.readouterr().out.strip()


def _summaries_without_and_with(tmp_path, capsys, flag: str, args: list[str]) -> dict[bool, dict]:
    """Two headless demo nights, the same but for ``flag``: their JSON summaries keyed by whether
    the flag was given."""
    got = {}
    for extra in ([], [flag]):
        assert main(["demo", "--headless", *args, "--db", str(tmp_path / f"{len(extra)}.db"), *extra]) == 0
        got[bool(extra)] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    return got


@needs_model
def test_demo_reads_with_the_enrolled_demo_deck_unless_told_not_to(tmp_path, capsys):
    """Seed 1, one deal, every card coffee-stained over its indices (--worn 52). The demo reads
    through the demo deck's enrolment unless told not to. A stained card looks like none of the
    clean enrolled views, so enrolment has no say on it and both readers judge it by the network's
    own rule: they ask the host about the same cards (before enrolment fell back that way, its
    stricter rule asked about more). Every card the host corrected was one flagged as unsure.
    (The night's deck learning is off in both: it would teach them differently.)"""
    got = _summaries_without_and_with(tmp_path, capsys, "--no-enrolled-deck",
                                      ["--hands", "1", "--seed", "1", "--worn", "52", "--no-deck-learning"])
    for summary in got.values():
        assert summary["cards_misread"] <= summary["cards_unsure"] and summary["chips_conserved"], got
    assert got[False]["enrolled_deck"] and not got[True]["enrolled_deck"], got
    assert got[False]["cards_unsure"] == got[True]["cards_unsure"] > 0, got


@needs_model
def test_the_night_learns_the_worn_deck_and_accepts_nothing_wrong(tmp_path, capsys):
    """Seed 5 with 12 stained cards and no enrolment, a few deals with and without learning: the
    summary counts unsure cards deal by deal, the learning night enrols the host's answers, asks
    no more than the night without it, and neither accepts a wrong card (the whole 40-deal night
    over seeds 1-5 is bench/deck_learning.py's)."""
    got = _summaries_without_and_with(tmp_path, capsys, "--no-deck-learning",
                                      ["--hands", "4", "--seed", "5", "--no-enrolled-deck", "--worn", "12"])
    for s in got.values():
        assert len(s["cards_unsure_by_deal"]) == s["deals"] == 4 and sum(s["cards_unsure_by_deal"]) == s["cards_unsure"]
        assert s["cards_accepted_wrong"] == 0 and s["cards_misread"] <= s["cards_unsure"]
    learned, plain = got[False], got[True]
    assert learned["deck_learned"]["from_host"] > 0 and plain["deck_learned"] == {}
    assert learned["cards_unsure"] <= plain["cards_unsure"] and plain["cards_unsure"] > 0


def _demo_with_a_joiner(tmp_path, *, wired, said):
    """Seed 4, four bots, three deals; between the first and the second the host seats Eve from
    the command API (the Admin page's "A player joins")."""
    from table.demo_table import TableDemo
    from table.runtime import demo_prototypes_path, load_classifier

    classifier = load_classifier(None, threads=1, prototypes=demo_prototypes_path())
    demo = TableDemo(db=tmp_path / "join.db", players=["Ann", "Bea", "Cal", "Dot"], seed=4,
                     classifier=classifier, worn=0, revoke_rate=0.0, wired=wired, log=said.append)
    answers = []

    def join_after_the_first_deal(intent):
        deal = demo.referee.state.deal
        if not answers and deal is not None and deal.is_over:
            answers.append(demo.service.command("add_player", {"player": "Eve", "chips": 60})["message"])

    try:
        summary = demo.play(3, on_step=join_after_the_first_deal)
        events = list(demo.ledger.iter_events())
        return demo.referee.state, summary, answers, events, demo.service.chips_in()
    finally:
        demo.close()


@needs_model
@pytest.mark.parametrize("wired", [None, 4])
def test_a_late_joiner_plays_the_demo_night(tmp_path, wired):
    """Eve joins between deals: the demo (as host) draws a zone for her seat, her bot presses
    the mock button of seat 5 when the header wires it (by default, every seat the config wires)
    or the Admin page's stand-in when it does not (wired=4), the camera reads her cards, and the
    night closes with its chips summing to zero."""
    said = []
    state, summary, answers, events, chips_in = _demo_with_a_joiner(tmp_path, wired=wired, said=said)
    assert len(answers) == 1 and answers[0].startswith("Eve joins with 60 chips in seat 5")
    assert ("has no button" in answers[0]) == (wired == 4)
    assert state.players == ["Ann", "Bea", "Cal", "Dot", "Eve"] and state.game_over
    assert summary.deals == 3 and summary.chips_conserved and summary.ledger_verified, summary.problems
    assert [("Eve" in f["record"]["players"]) for f in state.finished] == [False, True, True]
    assert len(set(state.chip_history["Eve"])) > 1  # her chips moved with the deals she played
    assert sum(state.balances[p] - chips_in[p] for p in state.players) == 0 and state.pool_now() == 0
    zones = [e.data["zones"] for e in events if e.kind == "zones"]
    assert len(zones) == 1 and sorted(zones[0]) == ["seat:4"]  # the four zones there were stay put
    eves = [e.data for e in events if e.kind == "action" and str(e.data["action"]).startswith("Eve:")]
    sources = {d.get("source") for d in eves}
    assert {"camera", "button"} <= sources  # her cards through the camera in her new zone; her declarations
    on_page = [m for m in said if m.startswith("Eve ") and "seat button on the dashboard" in m]
    assert bool(on_page) == (wired == 4)  # ... by the Admin page's seat button where seat 5 has none
