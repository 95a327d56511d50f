"""The host's night, second pass (issue 48), on a phone (390x844) in the system Chromium against
the real controller (the referee, its SQLite ledger and the seeded bots of `table.simulate`):
cards readable in both themes, chip entries that add up and can be undone, an Undo that undoes
the host's last fix, player limits the table can keep, a scoresheet that shows everyone.
"""

# ruff: noqa: F811 (the browser fixture imported from test_browser is a test argument of the same name)

from __future__ import annotations

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
