"""The host's night, second pass (issue 48), on a phone (390x844) in the system Chromium against
the real controller (the referee, its SQLite ledger and the seeded bots of `table.simulate`):
cards readable in both themes, chip entries that add up and can be undone, an Undo that undoes
the host's last fix, player limits the table can keep, a scoresheet that shows everyone.
"""

# ruff: noqa: F811 (the browser fixture imported from test_browser is a test argument of the same name)

from __future__ import annotations

import json
import os

import pytest
from test_browser import CHROMIUM, COUNT_SWAPS, browser, swapped  # noqa: F401 (browser: a fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing (apt-get install chromium)"),
]
playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

from test_host_phone import PHONE, card_down, login, night, shot  # noqa: E402, F401 (night: a fixture)

#: WCAG contrast of every glyph (index and pips) of every card face on the page, against the face
#: itself: the worst ratio and what it was
CARD_CONTRAST = """() => {
  const rgb = s => (s.match(/[\\d.]+/g) || [0, 0, 0]).map(Number);
  const lum = c => { const a = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * a[0] + 0.7152 * a[1] + 0.0722 * a[2]; };
  const out = [];
  for (const svg of document.querySelectorAll("svg.card:not(.back)")) {
    const face = svg.querySelector(".card-face");
    if (!face || !svg.getBoundingClientRect().width) continue;
    const paper = lum(rgb(getComputedStyle(face).fill));
    for (const t of svg.querySelectorAll("text")) {
      const ink = lum(rgb(getComputedStyle(t).fill));
      const [a, b] = [ink, paper].sort((x, y) => y - x);
      out.push([svg.getAttribute("aria-label") + " " + t.getAttribute("class"), (a + 0.05) / (b + 0.05)]);
    }
  }
  return out;
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_card_faces_are_readable_in_both_themes(night, browser, scheme):
    """Issue 48 (1): black pips took the dark theme's light grey on the white face (7♠ unreadable)."""
    n, base = night
    n.until(lambda st: card_down(st) and len(st.deal.current_trick) >= 3)
    admin = login(browser, base, color_scheme=scheme)
    table = admin.context.new_page()
    checked = {}
    for page, path in ((table, "/"), (admin, "/admin")):
        if page is table:
            page.goto(base + path)
        glyphs = page.evaluate(CARD_CONTRAST)
        assert len(glyphs) >= 9, (path, glyphs)  # the turn-up and the trick's cards, three glyphs each
        checked[path] = glyphs
    low = [(path, what, round(ratio, 2)) for path, glyphs in checked.items() for what, ratio in glyphs if ratio < 4.5]
    assert not low, low


def chips_form(page, player: str, step: str, amount: int) -> None:
    form = page.locator("#adjust-form")
    form.locator('select[name="player"]').select_option(player)
    form.locator(f'input[value="{step}"]').check()
    form.locator('input[name="delta"]').fill(str(amount))
    form.locator("button").click()


def test_chip_entries_are_checked_confirmed_and_can_be_undone_or_changed(night, browser):
    """Issue 48 (3): "Bea cashes out 5000" with 100 chips was accepted, with no confirm and no undo."""
    n, base = night
    n.until(card_down)
    admin = login(browser, base)
    result = admin.locator("#adjust-form .result")
    held = n.ref.state.chips()["Bea"]
    chips_form(admin, "Bea", "cash_out", 5000)
    expect(result).to_have_text(f"Refused: Bea holds {held} chips, so at most {held} can be taken off, not 5000. "
                                "Nothing was changed.")
    assert n.service.chips_in()["Bea"] == 100

    asked = []
    admin.once("dialog", lambda d: (asked.append(d.message), d.dismiss()))
    chips_form(admin, "Ann", "rebuy", 150)  # more than the starting chips: asked again, and declined
    expect(admin.locator('#adjust-form input[name="delta"]')).to_have_value("150")
    assert asked == ["Ann buys 150 chips: more than the 100 starting chips. Record it?"]
    assert n.service.chips_in()["Ann"] == 100
    admin.once("dialog", lambda d: d.accept())
    admin.locator("#adjust-form button").click()
    expect(result).to_have_text("Ann +150 chips (bought 150 more chips).")
    chips_form(admin, "Bea", "cash_out", 30)
    expect(result).to_have_text("Bea -30 chips (cashed out 30 chips).")
    assert n.service.chips_in() == {"Ann": 250, "Bea": 70, "Cal": 100, "Dot": 100}

    log = admin.locator("ul.chip-log li")
    expect(log).to_have_count(2, timeout=3000)
    admin.once("dialog", lambda d: d.accept())
    admin.locator("button[aria-label=\"Undo Bea's -30 chips\"]").click()
    expect(admin.locator("#now-result")).to_have_text("Undid Bea's cash-out of 30 chips.")
    expect(admin.locator("ul.chip-log li.undone")).to_contain_text("Bea -30 · cashed out 30 chips · undone")
    ann = admin.locator("form.amend-form").first
    ann.locator('input[name="delta"]').fill("50")
    ann.locator("button").click()
    expect(admin.locator("#now-result")).to_have_text("Changed Ann's rebuy of 150 chips to +50.")
    expect(admin.locator("ul.chip-log")).to_contain_text("Ann +50 · bought 150 more chips · changed from +150")
    admin.locator("#chip-log-h").scroll_into_view_if_needed()
    shot(admin, "admin-phone-chip-log")
    assert n.service.chips_in() == {"Ann": 150, "Bea": 100, "Cal": 100, "Dot": 100}
    kinds = [r["kind"] for r in n.service.ledger_rows()]
    assert kinds.count("adjust_chips") == 2 and kinds.count("chips_amended") == 2  # every step kept

    # the night still adds up: a finished deal settles from the amended chips
    n.until(lambda st: len(st.finished) == 1)
    with n.ref.lock:
        st = n.ref.state
        assert sum(st.balances.values()) + st.pool == sum(n.service.chips_in().values())


SUITS = {"C": "\u2663", "D": "\u2666", "H": "\u2665", "S": "\u2660"}


def pretty(card) -> str:
    text = str(card)
    return text[:-1] + SUITS[text[-1]]


def test_undo_after_a_fix_brings_the_card_back(night, browser):
    """Issue 48 (4): after "Corrected Cal's 7♠ to K♠", Undo removed the card from the trick."""
    n, base = night
    n.until(card_down)
    with n.ref.lock:
        player, played = n.ref.state.deal.current_trick[0]
        other = next(c for c in n.bots.shadow(n.ref.state).hand(player) if c != played)
    admin = login(browser, base)
    admin.on("dialog", lambda d: d.accept())
    fix = admin.locator(f'form.fix-form[data-player="{player}"]')
    fix.locator('input[name="card"]').fill(str(other))
    fix.locator("button:not(.pick-card)").click()
    expect(admin.locator("#now-result.result-ok")).to_contain_text(f"Corrected {player}'s")
    admin.locator('button[data-command="undo"]').click()
    expect(admin.locator("#now-result")).to_have_text(f"Undid the fix of {player}'s card: back to {pretty(played)}.")
    assert n.ref.state.deal.current_trick[0] == (player, played)  # the card is on the table as it was
    expect(admin.locator(".admin-plays li").first).to_contain_text(player)
    expect(admin.locator(f'.admin-plays svg[aria-label="{_name(played)}"]')).to_be_visible(timeout=3000)
    # the next Undo undoes the last card laid, as before
    last_player, last_card = n.ref.state.deal.current_trick[-1]
    admin.locator('button[data-command="undo"]').click()
    expect(admin.locator("#now-result")).to_have_text(f"Undid {last_player}'s {pretty(last_card)}.")


def _name(card) -> str:
    from web.cards import card_name

    return card_name(str(card))


def test_the_phone_seats_no_more_players_than_the_table_wires(night, browser):
    """Issue 48 (6): the phone accepted 10 players on a table wired for 8, and `loo-table run`
    then refused to start again."""
    n, base = night
    admin = login(browser, base)
    form = admin.locator("#game-form")
    expect(form).to_contain_text("this table wires 8 seats")
    form.locator('textarea[name="players"]').fill("\n".join(f"P{i}" for i in range(10)))
    form.locator("button").click()
    expect(form.locator(".result-fault")).to_have_text("Refused: a table has 2 to 8 players. Nothing was changed.")
    n.ref.buttons = 6  # a header wired for six seats
    admin.reload()
    form = admin.locator("#game-form")
    form.locator('textarea[name="players"]').fill("\n".join(f"P{i}" for i in range(7)))
    form.locator("button").click()
    expect(form.locator(".result-fault")).to_have_text(
        "Refused: this table wires 6 seats, so at most 6 players can sit down, not 7; a newcomer can still join "
        "later under A player joins. Nothing was changed.")
    assert n.ref.state.players == ["Ann", "Bea", "Cal", "Dot"]
    form.locator('textarea[name="players"]').fill("\n".join(f"P{i}" for i in range(6)))
    form.locator("button").click()
    expect(form.locator(".result-ok")).to_have_text("Saved players.")
    assert len(n.ref.state.players) == 6


def test_the_scoresheet_shows_five_players_at_390px_and_rebuys_apart_from_play(night, browser):
    """Issue 48 (5): with 5 players only 3 columns showed at 390 px, and a rebuy was folded into
    the deal's change ("Ann 144 (+44)" was +50 bought and -6 played)."""
    n, base = night
    n.ref.call("add_player", {"player": "Evangeline", "chips": 100})  # a fifth, with a long name
    n.until(card_down)
    n.service.command("adjust_chips", {"player": "Ann", "delta": 50, "reason": "bought 50 more chips"})
    n.until(lambda st: len(st.finished) == 1)
    page = browser.new_context(**PHONE).new_page()
    page.goto(base + "/history")
    sheet = page.locator("table.sheet")
    expect(sheet.locator("thead th")).to_have_count(6)
    outside = page.evaluate("""() => {
      const box = document.querySelector('.scoresheet .table-scroll');
      const out = [];
      for (const el of document.querySelectorAll('table.sheet th, table.sheet td')) {
        const r = el.getBoundingClientRect();
        if (r.left < 0 || r.right > window.innerWidth) out.push(el.textContent.trim() + ' ' + Math.round(r.right));
      }
      return {out, scrolls: box.scrollWidth > box.clientWidth};
    }""")
    assert outside == {"out": [], "scrolls": False}, outside
    history = n.service.chip_history()["Ann"]
    cell = sheet.locator("tbody tr").nth(1).locator("td").nth(0)
    played = history[1] - history[0] - 50
    expect(cell.locator("b")).to_have_text(str(history[1]))
    expect(cell.locator(".bought")).to_have_text("bought 50")
    if played:
        expect(cell.locator(".pos, .neg")).to_have_text(f"{played:+d}")
    else:
        expect(cell.locator(".pos, .neg")).to_have_count(0)
    shot(page, "scoresheet-phone-5-players")


def test_the_smaller_things_on_the_admin_page(night, browser):
    """Issue 48 (7): a rule title one letter per line, "Forget what the camera learned" with no
    confirm and its answer off-screen, two players "Ann" who look the same, a lower-case lockout."""
    n, base = night
    admin = login(browser, base)
    widths = admin.evaluate("""() => Array.from(document.querySelectorAll('#rules-form .rule-title'))
      .filter(t => t.getBoundingClientRect().width > 0)
      .map(t => [t.textContent, t.getClientRects().length])""")
    narrow = [w for w in widths if w[1] > 2]  # lines each title takes
    assert widths and not narrow, narrow  # "When the night ends" took a line per letter

    asked = []
    admin.once("dialog", lambda d: (asked.append(d.message), d.accept()))
    button = admin.locator("#reset-deck-form button")
    button.scroll_into_view_if_needed()
    button.click()
    answer = admin.locator("#reset-deck-form .result")
    expect(answer).to_have_text("Refused: this table does not learn the deck (no camera). Nothing was changed.")
    assert asked and asked[0].startswith("Forget every view of the deck")
    box = answer.bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 844  # on screen, by the button

    form = admin.locator("#join-form")
    form.locator('input[name="player"]').fill("Ann\u200b")
    form.locator("button").click()
    expect(form.locator(".result-fault")).to_contain_text("Ann")
    assert n.ref.state.players == ["Ann", "Bea", "Cal", "Dot"]

    other = browser.new_context(**PHONE).new_page()
    other.goto(base + "/admin")
    for _ in range(6):
        other.fill('input[name="pin"]', "111111")
        other.click("text=Log in")
    error = other.locator("#login-error")
    expect(error).to_contain_text("Too many wrong PINs. Try again in ")
    first = int(other.locator("#retry-left").inner_text())
    expect(other.locator("form.login button")).to_be_disabled()
    expect(other.locator("#retry-left")).not_to_have_text(str(first), timeout=3000)  # it counts down
    assert int(other.locator("#retry-left").inner_text()) < first


def test_the_smaller_things_on_the_table_and_end_pages(night, browser):
    """Issue 48 (7): "1 chips", "Bea 5♣ , Cal 8♥ ,", the trick below the fold in landscape, and
    "= 0.00" on every line when money per chip is 0."""
    n, base = night
    n.until(lambda st: st.deal is not None and len(st.deal.tricks) == 1 and bool(st.deal.current_trick))
    held = n.ref.state.chips()["Bea"]
    n.service.command("adjust_chips", {"player": "Bea", "delta": 1 - held, "reason": "cashed out"})
    page = browser.new_context(**PHONE).new_page()
    page.goto(base + "/")
    expect(page.locator('.seat[data-name="Bea"] .chips')).to_have_text("1 chip")
    last = page.locator(".last-trick p").inner_text()
    assert " ," not in last and " ." not in last and last.count(",") == 3, last

    wide = browser.new_context(viewport={"width": 844, "height": 390}, is_mobile=True, has_touch=True).new_page()
    wide.add_init_script(COUNT_SWAPS)
    wide.goto(base + "/")
    swapped(wide)  # the live fragment as the stream delivers it
    top = wide.locator("#trick-plays").bounding_box()
    layout = wide.evaluate("""() => Array.from(document.querySelectorAll('#live > *, main > *'))
      .map(e => e.className + ' ' + Math.round(e.getBoundingClientRect().top))""")
    assert top is not None and top["y"] + top["height"] <= 390, (top, layout)  # the cards, without scrolling
    shot(wide, "table-phone-landscape")

    n.until(lambda st: st.deal is not None and st.deal.is_over)
    n.ref.call("update_settings", {"chip_value": "0"})
    n.ref.call("end_game", {})
    end = browser.new_context(**PHONE).new_page()
    end.goto(base + "/end")
    expect(end.locator("h2", has_text="Who pays whom")).to_be_visible()
    assert "0.00" not in end.locator("main").inner_text()
    expect(end.locator("table.results thead th")).to_have_count(2)


def test_a_join_and_a_rule_change_asked_mid_deal_wait_for_the_next_deal(night, browser):
    """Issue 48 (2): both were refused during a deal (even before its first card); they now wait
    for the next deal, shown as such, cancellable, and the ledger says when each was asked and
    when it was applied."""
    n, base = night
    n.until(card_down)
    admin = login(browser, base)
    admin.on("dialog", lambda d: d.accept())
    join = admin.locator("#join-form")
    join.locator('input[name="player"]').fill("Eve")
    join.locator('input[name="chips"]').fill("80")
    join.locator("button").click()
    expect(admin.locator("#join-form .result-ok")).to_have_text(
        "Eve joins with 80 chips from the next deal (deal 2): asked while deal 1 is played, it waits for it; "
        "Cancel is under From the next deal.")
    admin.locator("#opt-club_law").check()
    admin.locator("#rules-form button").click()
    expect(admin.locator("#rules-form .result-ok")).to_contain_text("The new house rules apply from the next deal (deal 2)")
    expect(admin.locator("#opt-club_law")).to_be_checked()  # the page shows what will apply, not a refused value
    join.locator('input[name="player"]').fill("Fay")
    join.locator("button").click()
    expect(admin.locator("#join-form .result-ok")).to_contain_text("Fay joins with")

    queued = admin.locator(".queued li")
    expect(queued).to_have_count(3, timeout=3000)
    expect(queued.nth(0)).to_contain_text("Eve joins with 80 chips · from the next deal (asked in deal 1)")
    expect(queued.nth(1)).to_contain_text("The new house rules: Club law · from the next deal")
    admin.locator("#queued-h").scroll_into_view_if_needed()
    shot(admin, "admin-phone-next-deal")
    table = browser.new_context(**PHONE).new_page()  # the players see it too
    table.goto(base + "/")
    expect(table.locator(".next-deal")).to_have_text(
        "From the next deal: Eve joins with 80 chips; the new house rules; Fay joins with 100 chips.")
    admin.locator('button[aria-label^="Cancel: Fay joins"]').click()
    expect(admin.locator("#now-result")).to_have_text("Cancelled: Fay joins with 100 chips will not happen.")
    expect(queued).to_have_count(2, timeout=3000)
    assert n.ref.state.players == PLAYERS_4 and n.ref.state.options.get("club_law") is not True

    n.until(lambda st: st.deal_number == 2)  # the bots play on; the dealer's press starts deal 2
    assert n.ref.state.players == [*PLAYERS_4, "Eve"] and n.ref.state.options.get("club_law") is True
    expect(queued).to_have_count(0, timeout=3000)
    rows = [{**r, "data": json.loads(r["data"])} for r in n.service.ledger_rows()]
    seq = {r["seq"]: r for r in rows}
    kinds = [(r["kind"], r["data"]) for r in rows]
    asked = [r for r in rows if r["kind"] == "change_queued"]
    assert [a["data"]["kind"] for a in asked] == ["player_joined", "settings", "player_joined"]
    closed = next(r["seq"] for r in rows if r["kind"] == "deal_closed")
    started = next(r["seq"] for r in rows if r["kind"] == "deal_started" and r["data"]["number"] == 2)
    joined = next(r for r in rows if r["kind"] == "player_joined")
    rules = next(r for r in rows if r["kind"] == "settings" and r["data"].get("queued"))
    assert closed < joined["seq"] < rules["seq"] < started  # applied at the boundary, in the order asked
    assert seq[joined["data"]["queued"]]["data"]["data"] == {"player": "Eve", "chips": 80}
    assert seq[rules["data"]["queued"]]["kind"] == "change_queued"
    assert ("change_cancelled", {"target": asked[2]["seq"], "reason": "cancelled by the host"}) in kinds


PLAYERS_4 = ["Ann", "Bea", "Cal", "Dot"]


def test_the_host_picks_a_card_instead_of_typing_it(night, browser):
    """Issue 48: "a card picker rather than typing 10H", wherever the host names a card."""
    n, base = night
    n.until(card_down)
    with n.ref.lock:
        player, played = n.ref.state.deal.current_trick[0]
        other = next(c for c in n.bots.shadow(n.ref.state).hand(player) if c != played)
    admin = login(browser, base)
    for where in ("#fix-any-form", "#missed-form", f'form.fix-form[data-player="{player}"]'):
        expect(admin.locator(f"{where} button.pick-card")).to_be_visible()
    admin.locator(f'form.fix-form[data-player="{player}"] button.pick-card').click()
    picker = admin.locator("#card-picker")
    expect(picker).to_be_visible()
    sizes = picker.evaluate("""d => Array.from(d.querySelectorAll('button')).map(b => {
      const r = b.getBoundingClientRect(); return [b.textContent, Math.round(r.width), Math.round(r.height), Math.round(r.right)]; })""")
    assert len(sizes) == 4 + 13 + 1 and all(w >= 44 and h >= 44 and right <= 390 for _, w, h, right in sizes), sizes
    text = str(other)
    rank, suit = text[:-1], text[-1]
    words = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
    picker.locator(f'button[data-rank="{rank}"]').click()  # a rank first: it asks for the suit
    expect(admin.locator("#picker-now")).to_have_text("First the suit.")
    picker.locator(f'button[aria-label="{words[suit]}"]').click()
    expect(picker.locator(f'button[aria-label="{words[suit]}"]')).to_have_attribute("aria-pressed", "true")
    shot(admin, "admin-phone-card-picker")
    picker.locator(f'button[data-rank="{rank}"]').click()
    expect(picker).to_be_hidden()
    fix = admin.locator(f'form.fix-form[data-player="{player}"]')
    expect(fix.locator('input[name="card"]')).to_have_value(text)
    fix.locator('button:not(.pick-card)').click()
    expect(admin.locator("#now-result.result-ok")).to_contain_text(f"Corrected {player}'s")
    assert n.ref.state.deal.current_trick[0] == (player, other)


def test_nights_are_kept_with_running_totals_csv_and_a_currency(night, browser):
    """Issue 48: past nights kept (date, players, result), each player's running total across
    nights, exportable as CSV; money shown with the currency set in the settings."""
    import csv
    import io

    n, base = night
    admin = login(browser, base)
    admin.on("dialog", lambda d: d.accept())
    game = admin.locator("#game-form")
    game.locator('input[name="currency"]').fill("£")
    game.locator("button").click()
    expect(game.locator(".result-ok")).to_have_text("Saved currency.")
    n.until(lambda st: st.deal is not None and st.deal.is_over)
    n.ref.call("end_game", {})
    first = {r["player"]: r["chips"] for r in n.service.nights()[-1:] for r in
             [{"player": p, "chips": c} for p, c in r["net"].items()]}
    end = browser.new_context(**PHONE).new_page()
    end.goto(base + "/end")
    assert "£" in end.locator("table.results").inner_text()
    admin.reload()
    admin.locator('button[data-command="new_night"]').click()
    expect(admin.locator("#end .result-ok")).to_contain_text("A new night: night 2 for Ann, Bea, Cal, Dot")
    n.until(lambda st: len(st.finished) == 1)  # tonight's first deal, so its results so far count too
    tonight = n.service.nights()[-1]["net"]

    page = browser.new_context(**PHONE).new_page()
    page.goto(base + "/nights")
    expect(page.locator("article.night")).to_have_count(2)
    expect(page.locator("#night-1 h3")).to_contain_text("Night 1 · 20")  # its date
    expect(page.locator("#night-1")).to_contain_text("Ann, Bea, Cal, Dot")
    totals = {r.locator("td").nth(0).inner_text(): int(r.locator("td").nth(1).inner_text())
              for r in page.locator("table.totals tbody tr").all()}
    assert totals == {p: first[p] + tonight[p] for p in first}
    assert "£" in page.locator("table.totals").inner_text()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, width
    shot(page, "nights-phone", full=True)
    rows = list(csv.DictReader(io.StringIO(page.request.get(base + "/nights.csv").text())))
    assert len(rows) == 8 and {r["night"] for r in rows} == {"1", "2"}
    last = {r["player"]: int(r["running_total_chips"]) for r in rows if r["night"] == "2"}
    assert last == totals


def test_a_leave_asked_mid_deal_waits_for_the_deal_to_end(night, browser):
    """Issue 48 (2): a player leaving during a deal leaves at its end, shown until then and
    kept in the night's results."""
    n, base = night
    n.until(card_down)
    admin = login(browser, base)
    admin.on("dialog", lambda d: d.accept())
    leave = admin.locator("#leave-form")
    leave.locator('select[name="player"]').select_option("Dot")
    leave.locator("button").click()
    expect(leave.locator(".result-ok")).to_contain_text("Dot leaves with their chips from the next deal (deal 2)")
    expect(admin.locator(".queued li")).to_contain_text("Dot leaves with their chips · from the next deal")
    assert n.ref.state.players == PLAYERS_4
    n.until(lambda st: st.deal_number == 2)
    assert n.ref.state.players == ["Ann", "Bea", "Cal"]
    took = n.service.chip_history()["Dot"][-1]
    end = browser.new_context(**PHONE).new_page()
    end.goto(base + "/end")
    row = end.locator("table.results tbody tr", has_text="Dot")
    expect(row.locator("td").nth(1)).to_have_text(f"{took - 100:+d}")  # what Dot took minus the 100 brought
