"""The helpers behind the pages: settlement, chart, card images, QR, server sizing."""

from __future__ import annotations

import io
import itertools
import random
from decimal import Decimal

import pytest
from flask import Flask

from web.cards import card_svg, normalize_card
from web.chart import chip_chart
from web.qr import dashboard_url, print_qr, qr_svg
from web.server import recommended_threads, waitress_options
from web.settle import fewest_transfers, money, parse_chip_value


def brute_min_transfers(net):
    """n − (most zero-sum groups), by trying every partition (tiny inputs only)."""
    items = [v for v in net.values() if v]
    best = 0

    def parts(seq):
        if not seq:
            yield []
            return
        first, rest = seq[0], seq[1:]
        for p in parts(rest):
            for i in range(len(p)):
                yield p[:i] + [[first] + p[i]] + p[i + 1:]
            yield [[first]] + p

    for p in parts(items):
        if all(sum(g) == 0 for g in p):
            best = max(best, len(p))
    return len(items) - best if items else 0


def test_fewest_transfers_is_optimal_and_settles_everyone():
    rng = random.Random(6)
    for _ in range(150):
        n = rng.randint(2, 7)
        values = [rng.choice([-30, -20, -10, -5, 5, 10, 20, 30, rng.randint(-40, 40)]) for _ in range(n - 1)]
        values.append(-sum(values))
        net = {f"p{i}": v for i, v in enumerate(values)}
        transfers = fewest_transfers(net)
        left = dict(net)
        for t in transfers:
            assert t.chips > 0 and t.payer != t.payee
            left[t.payer] += t.chips
            left[t.payee] -= t.chips
        assert all(v == 0 for v in left.values())
        assert len(transfers) == brute_min_transfers(net), net


def test_pairs_are_found_before_a_chain():
    # greedy would chain A->D, B->D, B->C...; the optimum pays in two pairs and a triple
    net = {"A": -7, "B": 7, "C": -3, "D": 3, "E": -5, "F": 2, "G": 3}
    assert len(fewest_transfers(net)) == 4


def test_fewest_transfers_refuses_unbalanced_results():
    with pytest.raises(ValueError, match="sum to 1"):
        fewest_transfers({"a": 1})


def test_chip_value_parsing_and_money():
    assert parse_chip_value("0.10") == Decimal("0.10")
    assert money(-7, Decimal("0.10")) == "-0.70"
    for bad in ("x", "-1", "1e9", "NaN", "0.123456", True, None, "inf"):
        with pytest.raises(ValueError):
            parse_chip_value(bad)


def test_normalize_card():
    assert [normalize_card(c) for c in ("10h", "th", " js ", "AS")] == ["10H", "10H", "JS", "AS"]
    for bad in ("1H", "11C", "AX", "", "10", None):
        with pytest.raises(ValueError):
            normalize_card(bad)


def test_card_svg_is_accessible_and_coloured():
    red = str(card_svg("QD"))
    assert 'aria-label="queen of diamonds"' in red and 'class="card red"' in red and "\u2666" in red
    assert 'class="card black"' in str(card_svg("10S"))
    assert "face-down" in str(card_svg(None))
    with pytest.raises(ValueError):
        card_svg("ZZ")


def test_chip_chart_draws_one_line_per_player_and_escapes_names():
    svg = str(chip_chart({"<Ann>": [50, 47, 60], "Bea": [50, 53, 40]}))
    assert svg.count("<polyline") == 2 and "&lt;Ann&gt;" in svg and "<Ann>" not in svg
    assert "No deals yet" in str(chip_chart({}))
    assert str(chip_chart({"Solo": [50]})).count("<circle") == 1  # a single point still shows


def test_qr_svg_and_terminal_print():
    assert "<svg" in str(qr_svg("http://192.0.2.1:8000/"))
    out = io.StringIO()
    print_qr("http://192.0.2.1:8000/", out)
    text = out.getvalue()
    assert text.startswith("Dashboard: http://192.0.2.1:8000/") and "\u2588" in text
    assert dashboard_url("192.0.2.1", 8000) == "http://192.0.2.1:8000/"
    assert dashboard_url("::1", 80) == "http://[::1]:80/"
    assert dashboard_url("0.0.0.0", 8000).startswith("http://")


def test_server_sizing_leaves_threads_free_of_streams():
    assert recommended_threads(64) == 72
    app = Flask("x")
    app.config.update(MAX_STREAMS=10, KEEPALIVE_S=15)
    opts = waitress_options(app)
    assert opts["threads"] == 18 and opts["connection_limit"] >= 500 and opts["channel_timeout"] >= 30
    assert opts["max_request_body_size"] == 64 * 1024
    with pytest.raises(ValueError):
        recommended_threads(-1)


def test_exact_search_limit_falls_back_to_greedy_for_huge_tables():
    net = {f"p{i}": v for i, v in enumerate(itertools.chain([5] * 10, [-5] * 10))}
    transfers = fewest_transfers(net)
    assert len(transfers) == 10
