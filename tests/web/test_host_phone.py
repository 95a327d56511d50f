"""The host's night on a phone (390x844) in the system Chromium, against the real controller: a
referee on a SQLite ledger whose players are the seeded bots of `table.simulate` (their real cards
vet every correction, as in `loo-table demo`), served by waitress.

Every host flow of the dashboard is driven here through the page, as a host taps it; then the
Lighthouse-style checks (contrast in both themes, 44 px targets, 200 % text, labels) run over every
page. ``LOO_DOCS_SCREENSHOTS=1`` also writes the phone views into ``docs/img/``.
"""

# ruff: noqa: F811 (the browser fixture imported from test_browser is a test argument of the same name)

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from test_browser import CHROMIUM, COUNT_SWAPS, browser, swapped  # noqa: F401 (browser: a fixture)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} is missing (apt-get install chromium)"),
]
playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect

from table.ledger import Ledger  # noqa: E402
from table.referee import Referee  # noqa: E402
from table.service import TableService  # noqa: E402
from table.simulate import DirectTransport, VirtualPlayers, run_night  # noqa: E402
from web import close_server, create_app, make_server  # noqa: E402

PIN = "000000"
PLAYERS = ["Ann", "Bea", "Cal", "Dot"]
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "img" if os.environ.get("LOO_DOCS_SCREENSHOTS") else ROOT / "artifacts"


class Night:
    """The referee, its bots and the server; `serve()` / `stop_server()` start and stop waitress on
    the same port (a phone's page must find the table again after a restart)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.ledger = Ledger(tmp / "ledger.db")
        self.ref = Referee(self.ledger, setup={"players": PLAYERS, "variant": "three_card", "options": {},
                                               "chips": 100, "first_dealer": 0, "chip_value": "0.10"})
        self.bots = VirtualPlayers(3)
        self.ref.vet = self.bots.vet
        self.transport = DirectTransport(self.ref)
        self.service = TableService(self.ref)
        self.port = 0
        self.app = self.server = self.thread = None

    def serve(self) -> str:
        self.app = create_app(self.service, config={"STATE_DIR": self.tmp / "web", "ADMIN_PIN": PIN,
                                                    "POLL_INTERVAL_MS": 500})
        self.server = make_server(self.app, "127.0.0.1", self.port)
        self.port = self.server.effective_port
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        return f"http://127.0.0.1:{self.port}"

    def stop_server(self) -> None:
        close_server(self.app, self.server)
        self.thread.join(5)

    def act(self, steps: int = 1) -> None:
        """The people at the table do what comes next (a press, a card laid down...)."""
        with self.ref.lock:
            run_night(self.ref, self.bots, self.transport, max_steps=steps)

    def until(self, done, limit: int = 300) -> None:
        for _ in range(limit):
            with self.ref.lock:
                if done(self.ref.state):
                    return
            self.act()
        raise AssertionError("the bots never got there")

    def close(self) -> None:
        self.ledger.close()


def card_down(state) -> bool:
    deal = state.deal
    return deal is not None and deal.phase == "play" and bool(deal.current_trick)


@pytest.fixture
def night(tmp_path):
    n = Night(tmp_path)
    base = n.serve()
    yield n, base
    try:
        n.stop_server()
    except Exception:  # already stopped by the test
        pass
    n.close()


def login(browser, base, **extra):
    page = browser.new_context(**PHONE, **extra).new_page()
    page.add_init_script(COUNT_SWAPS)
    page.goto(base + "/admin")
    page.fill('input[name="pin"]', PIN)
    page.click("text=Log in")
    expect(page.locator("h1", has_text="Admin")).to_be_visible()
    return page


def shot(page, name: str, *, full: bool = False) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = str(SHOTS / f"{name}.png")
    page.screenshot(path=path, full_page=full) if hasattr(page, "goto") else page.screenshot(path=path)


def test_fix_a_card_valid_and_impossible_and_undo_says_what(night, browser):
    n, base = night
    n.until(card_down)
    with n.ref.lock:
        deal = n.ref.state.deal
        player, played = deal.current_trick[0]
        hand = n.bots.shadow(n.ref.state).hand(player)
        seen = {c for _, c in deal.current_trick} | {deal.turn_up}
        others = {c for p in PLAYERS if p != player for c in n.bots.shadow(n.ref.state).hand(p)}
    foreign = next(c for c in others if c not in seen)  # a card another player holds
    admin = login(browser, base)
    table = browser.new_context(**PHONE).new_page()
    table.add_init_script(COUNT_SWAPS)
    table.goto(base + "/")
    swapped(table)

    fix = admin.locator(f'form.fix-form[data-player="{player}"]')
    fix.locator('input[name="card"]').fill(str(foreign))
    fix.locator("button:not(.pick-card)").click()
    refusal = admin.locator("#now-result.result-fault")
    expect(refusal).to_contain_text(f"{player} does not hold")
    expect(refusal).to_contain_text("Nothing was changed.")
    shot(admin, "admin-phone-refused")
    assert n.ref.state.deal.current_trick[0] == (player, played)

    # the table is still live: the next card reaches both phones
    n.act()
    nxt = str(n.ref.state.deal.current_trick[-1][1]) if n.ref.state.deal.current_trick else None
    if nxt:
        expect(table.locator(f'#trick-plays [data-card="{nxt}"]')).to_be_visible(timeout=3000)
    expect(table.locator("#live-status")).to_have_text("live")

    # a valid fix: the player really played another card of his hand
    other = next(c for c in hand if c != played)
    fix = admin.locator(f'form.fix-form[data-player="{player}"]')
    fix.locator('input[name="card"]').fill(str(other).lower())
    fix.locator("button:not(.pick-card)").click()
    expect(admin.locator("#now-result.result-ok")).to_contain_text(f"Corrected {player}'s")
    assert n.ref.state.deal.current_trick[0] == (player, other)
    expect(table.locator(f'#trick-plays [data-card="{other}"]')).to_be_visible(timeout=3000)

    # undo names what it undid: the host's fix, the last thing done (issue 48)
    admin.on("dialog", lambda d: d.accept())
    admin.locator('button[data-command="undo"]').click()
    expect(admin.locator("#now-result.result-ok")).to_contain_text(f"Undid the fix of {player}'s card")
    assert n.ref.state.deal.current_trick[0] == (player, played)


def test_chips_rebuy_cash_out_and_end_of_night_balance(night, browser):
    n, base = night
    n.until(card_down)
    admin = login(browser, base)
    form = admin.locator("#adjust-form")
    form.locator('select[name="player"]').select_option("Ann")
    form.locator('input[value="rebuy"]').check()
    form.locator('input[name="delta"]').fill("20")
    form.locator("button").click()
    expect(form.locator(".result-ok")).to_have_text("Ann +20 chips (bought 20 more chips).")
    assert form.locator('input[name="delta"]').input_value() == ""  # cleared: no second apply by a tap
    form.locator('select[name="player"]').select_option("Bea")
    form.locator('input[value="cash_out"]').check()
    form.locator('input[name="delta"]').fill("30")
    form.locator("button").click()
    expect(form.locator(".result-ok")).to_have_text("Bea -30 chips (cashed out 30 chips).")
    assert n.service.chips_in() == {"Ann": 120, "Bea": 70, "Cal": 100, "Dot": 100}

    n.until(lambda st: st.deal is not None and st.deal.is_over)
    admin.on("dialog", lambda d: d.accept())
    admin.locator('button[data-command="end_game"]').click()
    expect(admin.locator("#end .result-ok")).to_contain_text("The game is over")
    end = browser.new_context(**PHONE).new_page()
    end.goto(base + "/end")
    expect(end.locator("h2", has_text="Who pays whom")).to_be_visible()
    assert "still in the pool" not in end.content()
    net = {r.locator("td").nth(0).inner_text(): int(r.locator("td").nth(1).inner_text().replace("−", "-"))
           for r in end.locator("table.results tbody tr").all()}
    assert sum(net.values()) == 0
    balances = n.ref.state.balances
    assert net == {p: balances[p] - n.service.chips_in()[p] for p in PLAYERS}
    owed = dict.fromkeys(PLAYERS, 0)
    for line in end.locator("ul.transfers li").all_inner_texts():
        payer, rest = line.split(" pays ")
        payee, chips = rest.split(" ")[0], int(rest.split(" ")[1])
        owed[payer] -= chips
        owed[payee] += chips
    assert owed == net  # the payouts are exactly the results
    shot(end, "end-phone")


def test_save_a_house_rule_and_the_game(night, browser):
    n, base = night
    admin = login(browser, base)
    box = admin.locator("#opt-club_law")
    expect(admin.locator("#rules-play")).to_contain_text("When clubs are trumps, everyone must play.")
    box.check()
    admin.locator("#rules-form button").click()
    expect(admin.locator("#rules-form .result-ok")).to_have_text("Saved house rules (three-card Loo).")
    assert n.ref.state.options.get("club_law") is True
    admin.evaluate("document.getElementById('rules-h').scrollIntoView()")
    shot(admin, "admin-phone-rules")
    # rules that matter only with another on are hidden until it is (Pam's rules need Pam)
    expect(admin.locator("#opt-pam_identity")).to_be_hidden()
    admin.locator("#opt-pam").check()
    expect(admin.locator("#opt-pam_identity")).to_be_visible()

    game = admin.locator("#game-form")
    game.locator('input[name="chip_value"]').fill("0.25")
    game.locator("button").click()
    expect(game.locator(".result-ok")).to_have_text("Saved chip value.")
    assert n.ref.state.chip_value == "0.25"
    game.locator("button").click()
    expect(game.locator(".result")).to_contain_text("Nothing to save")


def test_pause_and_resume_and_the_table_going_offline(night, browser):
    n, base = night
    n.until(card_down)
    admin = login(browser, base)
    table = browser.new_context(**PHONE).new_page()
    table.add_init_script(COUNT_SWAPS)
    table.goto(base + "/")
    swapped(table)
    expect(admin.locator('button[data-command="resume"]')).to_have_count(0)
    admin.locator('button[data-command="pause"]').click()
    expect(admin.locator("#now-result.result-ok")).to_contain_text("Paused")
    expect(admin.locator('button[data-command="resume"]')).to_be_visible(timeout=3000)
    expect(admin.locator('button[data-command="pause"]')).to_have_count(0)
    expect(table.locator(".banner-paused")).to_have_text(
        "Paused by the host. Buttons and cards wait until play resumes.", timeout=3000)
    shot(table, "table-phone-paused")
    admin.locator('button[data-command="resume"]').click()
    expect(admin.locator('button[data-command="pause"]')).to_be_visible(timeout=3000)
    expect(table.locator(".banner-paused")).to_have_count(0, timeout=3000)

    # the table stops: both phones say so within 5 s, and the "to act" mark is no longer shown
    n.stop_server()
    expect(table.locator("#offline")).to_be_visible(timeout=5000)
    expect(admin.locator("#offline")).to_be_visible(timeout=5000)
    expect(table.locator(".turn")).to_be_hidden()
    shot(table, "table-phone-offline")
    n.serve()  # ...and starts again on the same address: the pages catch up by themselves
    expect(table.locator("#offline")).to_be_hidden(timeout=10000)
    expect(table.locator("#live-status")).to_have_text("live")
    for context in browser.contexts:
        context.close()


# ---------------------------------------------------------------------------------------------
# Lighthouse-style checks, done in the page: WCAG contrast, target size, reflow, names.

AUDIT = """() => {
  const out = {contrast: [], small: [], unlabelled: []};
  const rgb = s => { const m = s.match(/[\\d.]+/g) || [0, 0, 0, 0]; return m.map(Number); };
  const lum = c => { const a = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * a[0] + 0.7152 * a[1] + 0.0722 * a[2]; };
  const bgOf = el => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length < 4 || c[3] > 0.5) return c; } return rgb(getComputedStyle(document.body).backgroundColor); };
  const visible = el => { const r = el.getBoundingClientRect(); const s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && !el.closest("[hidden]"); };
  for (const el of document.querySelectorAll("body *")) {
    if (!visible(el) || el.closest("svg") || el.disabled || el.closest(".qr-wrap")) continue;
    const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    let fg = rgb(getComputedStyle(el).color), bg = bgOf(el);
    let op = 1; for (let e = el; e; e = e.parentElement) op *= Number(getComputedStyle(e).opacity);
    if (op < 1) continue;  // the offline page is dimmed on purpose
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    if (ratio < 4.5) out.contrast.push(el.tagName + "." + el.className + " '" + el.textContent.trim().slice(0, 30) + "' " + ratio.toFixed(2));
  }
  for (const el of document.querySelectorAll("a, button, input, select, textarea, summary")) {
    if (!visible(el) || el.type === "hidden") continue;
    let r = el.getBoundingClientRect();
    if (el.type === "checkbox" || el.type === "radio") { const l = el.closest("label"); if (l) r = l.getBoundingClientRect(); }
    const inline = el.tagName === "A" && el.parentElement && /^(P|LI|TD|SPAN)$/.test(el.parentElement.tagName)
      && el.parentElement.textContent.trim() !== el.textContent.trim();
    if (!inline && (r.height < 44 || r.width < 44)) out.small.push(el.tagName + " '" + (el.textContent || el.name || "").trim().slice(0, 30) + "' " + Math.round(r.width) + "x" + Math.round(r.height));
  }
  for (const el of document.querySelectorAll("button, input, select, textarea")) {
    if (el.type === "hidden") continue;
    const name = (el.getAttribute("aria-label") || "").trim() || (el.labels && el.labels.length && el.labels[0].textContent.trim())
      || (el.tagName === "BUTTON" && el.textContent.trim()) || (el.getAttribute("aria-labelledby") && "by");
    if (!name) out.unlabelled.push(el.tagName + " " + (el.name || el.id));
  }
  out.width = document.documentElement.scrollWidth;
  return out;
}"""

PAGES = ["/", "/history", "/end", "/nights", "/admin"]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_lighthouse_style_checks_on_every_page(night, browser, scheme):
    n, base = night
    n.until(card_down)
    n.ref.call("pause", {})  # the banner and the Resume button are on show too
    admin = login(browser, base, color_scheme=scheme)
    page = admin.context.new_page()
    problems = {}
    for path in PAGES:
        for text_size in ("100%", "200%"):
            page.goto(base + path)
            if text_size == "200%":  # the phone's text size setting: rem and em scale, the layout reflows
                page.add_style_tag(content=":root { font-size: 32px !important; }")
            result = page.evaluate(AUDIT)
            key = f"{path} {scheme} {text_size}"
            if result["width"] > 390:
                problems[key + " width"] = result["width"]
            if text_size == "100%":
                for kind in ("contrast", "small", "unlabelled"):
                    if result[kind]:
                        problems[f"{key} {kind}"] = result[kind]
            if path == "/" and scheme == "light" and text_size == "100%":
                shot(page, "table-phone")
            if path == "/admin" and text_size == "100%":
                shot(page, f"admin-phone-{scheme}")
    assert not problems, problems


BUZZ = "navigator.vibrate = (p) => { window.__buzz = (window.__buzz || 0) + 1; return true; };"


def test_players_see_their_seat_their_turn_the_last_trick_and_the_scoresheet(night, browser):
    n, base = night
    n.until(card_down)
    phone = browser.new_context(**PHONE).new_page()
    phone.add_init_script(COUNT_SWAPS + ";\n" + BUZZ)
    phone.goto(base + "/")
    swapped(phone)
    actor = next(s["name"] for s in n.ref.snapshot()["seats"] if s["to_act"])
    phone.select_option("#me", actor)  # "I'm Bea"
    expect(phone.locator(f'.seat.mine[data-name="{actor}"]')).to_be_visible()
    expect(phone.locator("#your-turn")).to_be_visible()
    assert phone.evaluate("window.__buzz") == 1
    shot(phone, "table-phone-your-turn")
    n.act()  # the turn moves on: no banner, and no second buzz
    expect(phone.locator("#your-turn")).to_be_hidden(timeout=3000)
    phone.reload()  # the phone remembers whose it is
    expect(phone.locator(f'.seat.mine[data-name="{actor}"]')).to_be_visible()

    history = browser.new_context(**PHONE).new_page()
    history.add_init_script(COUNT_SWAPS)
    history.goto(base + "/history")
    expect(history.locator("#sheet-h")).to_have_count(0)
    # the second trick: the first shows as the last trick, with who led it and who won it
    n.until(lambda st: len(st.deal.tricks) == 1 and bool(st.deal.current_trick))
    first = n.ref.snapshot()["last_trick"]
    last = phone.locator(".last-trick")
    expect(last).to_contain_text(f"{first['plays'][0]['player']} led", timeout=3000)
    expect(last).to_contain_text(f"{first['winner']} won it.")
    n.until(lambda st: st.deal is not None and st.deal.is_over)
    looed = set(n.ref.snapshot()["last_settlement"]["looed"])
    expect(phone.locator(".seat.looed")).to_have_count(len(looed), timeout=3000)
    for name in looed:
        expect(phone.locator(f'.seat[data-name="{name}"] .badge-looed')).to_have_text("looed")
    # the dealer's press closes the deal: the History page grows a scoresheet row without a reload
    n.until(lambda st: len(st.finished) == 1)
    expect(history.locator("table.sheet tbody tr")).to_have_count(2, timeout=3000)
    after = {p: chips[1] for p, chips in n.service.chip_history().items()}
    row = history.locator("table.sheet tbody tr").nth(1)
    for i, name in enumerate(PLAYERS):
        expect(row.locator("td").nth(i)).to_contain_text(str(after[name]))
    shot(history, "history-phone")


def test_the_nights_result_as_text_to_share(night, browser):
    n, base = night
    n.until(lambda st: st.deal is not None and st.deal.is_over)
    n.ref.call("end_game", {})
    page = browser.new_context(**PHONE).new_page()
    page.goto(base + "/end")
    text = page.locator("#share-text").input_value()
    assert text.startswith("Loo night: final results\n")
    for r in n.ref.snapshot()["seats"]:
        assert f"{r['name']}: " in text
    transfers = page.locator("ul.transfers li").all_inner_texts()
    assert all(t.split(" = ")[0] in text for t in transfers) and ("Who pays whom:" in text) == bool(transfers)
    page.locator("#copy-share").click()
    expect(page.locator("#share-result")).to_have_text("Copied: paste it into the chat.")
