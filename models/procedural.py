"""Procedural deck designs: randomised French-suited decks drawn as SVG with system fonts.

Why: the 28 open deck designs share a handful of index fonts and pip shapes, so a network trained
on them alone learns *those* glyphs and stumbles on a deck whose spades or queens are drawn a
little differently (the held-out ``orell`` deck: spades read as clubs, Q as K). Drawing many more
designs (domain randomisation) teaches the network what every deck has in common: the rank letter
in a corner, a suit glyph below it, pips in the standard layout, one colour for hearts and
diamonds and another for spades and clubs.

Each design picks an index font and weight (DejaVu, Liberation, URW base35, FreeFont: whatever
fontconfig has, with fallbacks), a suit-glyph font, index size and position, two or four indices,
pip size and spacing, ink colours, paper tint, corner radius and border. Court cards get the
picture of a court card from another, *training* deck (any rank or suit), so only the index tells
J, Q and K apart. Rendering uses ``rsvg-convert`` (Debian ``librsvg2-bin``), like the real decks.
Everything is driven by a seed: one seed, one design.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from vision.labels import FACES

#: Index fonts (families fontconfig resolves; a missing one falls back to a sans, still a design).
INDEX_FONTS = (
    "DejaVu Sans", "DejaVu Serif", "DejaVu Sans Condensed", "DejaVu Sans Mono", "Liberation Sans",
    "Liberation Serif", "Liberation Sans Narrow", "Nimbus Roman", "Nimbus Sans", "Nimbus Sans Narrow",
    "Nimbus Mono PS", "C059", "P052", "URW Bookman", "URW Gothic", "FreeSans", "FreeSerif",
)
#: Fonts with the four filled suit glyphs (U+2660 ♠, U+2663 ♣, U+2665 ♥, U+2666 ♦).
SUIT_FONTS = (
    "DejaVu Sans", "DejaVu Serif", "FreeSans", "FreeSerif", "Standard Symbols PS", "C059", "P052",
    "URW Bookman", "Nimbus Roman", "Liberation Sans", "Liberation Serif",
)
SUIT_GLYPH = {"S": "\u2660", "C": "\u2663", "H": "\u2665", "D": "\u2666"}

#: Standard pip layouts: (column 0..1, row 0..1) per rank.
_L, _M, _R = 0.0, 0.5, 1.0
PIPS: dict[str, list[tuple[float, float]]] = {
    "2": [(_M, 0), (_M, 1)],
    "3": [(_M, 0), (_M, 0.5), (_M, 1)],
    "4": [(_L, 0), (_R, 0), (_L, 1), (_R, 1)],
    "5": [(_L, 0), (_R, 0), (_M, 0.5), (_L, 1), (_R, 1)],
    "6": [(_L, 0), (_R, 0), (_L, 0.5), (_R, 0.5), (_L, 1), (_R, 1)],
    "7": [(_L, 0), (_R, 0), (_M, 0.25), (_L, 0.5), (_R, 0.5), (_L, 1), (_R, 1)],
    "8": [(_L, 0), (_R, 0), (_M, 0.25), (_L, 0.5), (_R, 0.5), (_M, 0.75), (_L, 1), (_R, 1)],
    "9": [(_L, 0), (_R, 0), (_L, 1 / 3), (_R, 1 / 3), (_M, 0.5), (_L, 2 / 3), (_R, 2 / 3), (_L, 1), (_R, 1)],
    "10": [(_L, 0), (_R, 0), (_M, 1 / 6), (_L, 1 / 3), (_R, 1 / 3), (_L, 2 / 3), (_R, 2 / 3), (_M, 5 / 6),
           (_L, 1), (_R, 1)],
}
COURTS = ("J", "Q", "K")


def _hex(bgr: Sequence[float] | np.ndarray) -> str:
    b, g, r = (int(np.clip(v, 0, 255)) for v in bgr)
    return f"#{r:02x}{g:02x}{b:02x}"


def _ink(rng: np.random.Generator, red: bool) -> str:
    """An ink colour: a red (scarlet to crimson) or a black (pure to dark navy/brown)."""
    if red:
        return _hex((rng.uniform(0, 60), rng.uniform(0, 50), rng.uniform(170, 240)))
    v = rng.uniform(0, 45)
    return _hex((v + rng.uniform(0, 25), v, v + rng.uniform(0, 10)))


class Design:
    """One random deck design (all its choices drawn from ``seed``)."""

    def __init__(self, seed: int, height: int = 240) -> None:
        rng = np.random.default_rng(seed)
        self.h = height
        self.w = int(round(height * rng.uniform(0.64, 0.73)))
        self.radius = self.w * rng.uniform(0.02, 0.09)
        self.paper = _hex(rng.uniform(228, 255, 3) - np.array([rng.uniform(0, 18), rng.uniform(0, 8), 0.0]))
        self.border = _hex(rng.uniform(0, 120, 3)) if rng.random() < 0.45 else ""
        self.index_font = str(rng.choice(INDEX_FONTS))
        self.index_weight = "bold" if rng.random() < 0.45 else "normal"
        self.suit_font = str(rng.choice(SUIT_FONTS))
        self.rank_size = height * rng.uniform(0.085, 0.15)
        self.suit_size = self.rank_size * rng.uniform(0.6, 1.05)
        self.index_x = self.w * rng.uniform(0.07, 0.13)  # centre of the index column
        self.index_y = height * rng.uniform(0.02, 0.05)  # top of the rank
        self.gap = self.rank_size * rng.uniform(-0.05, 0.2)
        self.four_indices = rng.random() < 0.15
        self.condensed_ten = rng.random() < 0.4
        self.red = _ink(rng, True)
        self.black = _ink(rng, False)
        self.pip_size = height * rng.uniform(0.1, 0.16)
        self.pip_box = (self.w * rng.uniform(0.24, 0.3), height * rng.uniform(0.14, 0.2))  # (x inset, y inset)
        self.turn_lower_pips = rng.random() < 0.85
        self.ace_size = height * rng.uniform(0.18, 0.42)
        self.frame = (self.w * rng.uniform(0.16, 0.24), height * rng.uniform(0.1, 0.16))
        self.frame_pip = rng.random() < 0.5
        self.court_seed = int(rng.integers(2**31))
        self._keep_pips_clear_of_index()
        # where the lone middle pip of the 7 and the 9 sits differs between real decks (on the 9:
        # the centre, or high up where a 10 has its upper middle pip): vary it, or the network
        # learns "a middle pip up there means ten"
        self.centre_pip = {"7": float(rng.choice([0.25, 1 / 6, 1 / 3])), "9": float(rng.choice([0.5, 1 / 6, 0.4]))}

    @property
    def ten_width(self) -> float:
        """Width the "10" index gets: its natural width (about 1.2 em), condensed, or what fits the margin."""
        natural = self.rank_size * (0.95 if self.condensed_ten else 1.2)
        return min(natural, 2 * (self.index_x - 1.0))

    def _keep_pips_clear_of_index(self) -> None:
        """Shrink (then move) the pips, and narrow the court frame, so neither covers the index column."""
        index_right = self.index_x + max(self.ten_width / 2, 0.4 * self.suit_size) + self.w * 0.015
        self.frame = (max(self.frame[0], index_right), self.frame[1])
        ix, iy = self.pip_box
        if ix - 0.42 * self.pip_size < index_right:
            self.pip_size = max(self.h * 0.08, (ix - index_right) / 0.42)
            ix = max(ix, index_right + 0.42 * self.pip_size)
            self.pip_box = (ix, iy)

    # -- SVG -----------------------------------------------------------------------------------
    def _text(self, x: float, y: float, s: str, size: float, font: str, colour: str, weight: str = "normal",
              turn: bool = False, squeeze: bool = False) -> str:
        """``s`` centred on (x, y); the baseline offset is an approximation that works for these fonts."""
        base = y + size * 0.36
        rot = f' transform="rotate(180 {x:.1f} {y:.1f})"' if turn else ""
        squash = f' textLength="{self.ten_width:.1f}" lengthAdjust="spacingAndGlyphs"' if squeeze else ""
        esc = s.replace("&", "&amp;")
        return (f'<text x="{x:.1f}" y="{base:.1f}" font-family="{font}" font-size="{size:.1f}" '
                f'font-weight="{weight}" fill="{colour}" text-anchor="middle"{squash}{rot}>{esc}</text>')

    def _index(self, rank: str, suit: str, colour: str) -> str:
        cy_rank = self.index_y + self.rank_size / 2
        cy_suit = self.index_y + self.rank_size + self.gap + self.suit_size / 2
        squeeze = rank == "10"  # always fitted to the margin (a clipped "10" reads as "0")
        one = (self._text(self.index_x, cy_rank, rank, self.rank_size, self.index_font, colour, self.index_weight,
                          squeeze=squeeze)
               + self._text(self.index_x, cy_suit, SUIT_GLYPH[suit], self.suit_size, self.suit_font, colour))
        cx, cy = self.w / 2, self.h / 2
        parts = [one, f'<g transform="rotate(180 {cx:.1f} {cy:.1f})">{one}</g>']
        if self.four_indices:
            dx = self.w - 2 * self.index_x  # the same index in the other corner, not mirrored
            parts.append(f'<g transform="translate({dx:.1f} 0)">{one}</g>')
            parts.append(f'<g transform="rotate(180 {cx:.1f} {cy:.1f}) translate({dx:.1f} 0)">{one}</g>')
        return "".join(parts)

    def svg(self, label: str) -> str:
        rank, suit = label[:-1], label[-1]
        colour = self.red if suit in "DH" else self.black
        w, h = self.w, self.h
        stroke = f' stroke="{self.border}" stroke-width="1.5"' if self.border else ""
        body = [f'<rect x="0.75" y="0.75" width="{w - 1.5}" height="{h - 1.5}" rx="{self.radius:.1f}" '
                f'fill="{self.paper}"{stroke}/>']
        glyph = SUIT_GLYPH[suit]
        if rank in PIPS:
            ix, iy = self.pip_box
            for col, row in PIPS[rank]:
                if rank in self.centre_pip and col == _M:
                    row = self.centre_pip[rank]
                x = ix + col * (w - 2 * ix)
                y = iy + row * (h - 2 * iy)
                body.append(self._text(x, y, glyph, self.pip_size, self.suit_font, colour,
                                       turn=self.turn_lower_pips and row > 0.5))
        elif rank == "A":
            body.append(self._text(w / 2, h / 2, glyph, self.ace_size, self.suit_font, colour))
        elif self.frame_pip:  # court: a small pip by the picture frame (the picture goes in later)
            fx, fy = self.frame
            body.append(self._text(fx + self.pip_size * 0.4, fy + self.pip_size * 0.4, glyph, self.pip_size * 0.6,
                                   self.suit_font, colour))
        body.append(self._index(rank, suit, colour))
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">'
                + "".join(body) + "</svg>")

    # -- raster --------------------------------------------------------------------------------
    def render(self, label: str) -> np.ndarray:
        """BGRA render of one face (court pictures not yet pasted)."""
        import cv2

        png = subprocess.run(["rsvg-convert", "-f", "png"], input=self.svg(label).encode(), capture_output=True,
                             check=True, timeout=60).stdout
        img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_UNCHANGED)
        if img is None or img.ndim != 3 or img.shape[2] != 4:
            raise RuntimeError(f"rsvg-convert gave no RGBA image for procedural {label}")
        return img

    def index_boxes(self) -> list[tuple[int, int, int, int]]:
        """(x0, y0, x1, y1) of each index corner: the index and a little paper around it."""
        pad = self.w * 0.015
        x1 = int(np.ceil(self.index_x + max(self.ten_width / 2, 0.4 * self.suit_size) + pad))
        y1 = int(np.ceil(self.index_y + self.rank_size + self.gap + self.suit_size + pad))
        w, h = self.w, self.h
        boxes = [(0, 0, x1, y1), (w - x1, h - y1, w, h)]
        if self.four_indices:
            boxes += [(w - x1, 0, w, y1), (0, h - y1, x1, h)]
        return boxes

    def paste_picture(self, img: np.ndarray, picture: np.ndarray, *, full_bleed: bool = False) -> None:
        """Fill the court frame of ``img`` (in place) with ``picture`` (BGR), leaving the indices clear.

        With ``full_bleed`` the picture fills the whole face but for the index corners, as on GNOME
        orell's courts (a held-out design whose J♦ and J♣ were read as backs: a face covered by
        a dense picture looked more like a patterned back than like the framed courts trained on).
        """
        import cv2

        if full_bleed:
            keep = img.copy()
            h, w = img.shape[:2]
            img[:, :, :3] = cv2.resize(picture, (w, h), interpolation=cv2.INTER_AREA)
            for x0, y0, x1, y1 in self.index_boxes():
                img[y0:y1, x0:x1] = keep[y0:y1, x0:x1]
            return  # alpha untouched: the rounded corners stay transparent
        fx, fy = self.frame
        x0, y0, x1, y1 = int(fx), int(fy), int(self.w - fx), int(self.h - fy)
        if self.frame_pip:
            x0 += int(self.pip_size * 0.8)
        pic = cv2.resize(picture, (x1 - x0, y1 - y0), interpolation=cv2.INTER_AREA)
        img[y0:y1, x0:x1, :3] = pic
        img[y0:y1, x0:x1, 3] = 255
        cv2.rectangle(img, (x0, y0), (x1 - 1, y1 - 1), (40, 40, 40, 255), 1)


def court_pictures(decks: dict[str, dict[str, np.ndarray]]) -> list[np.ndarray]:
    """The middle (picture) of every court card of ``decks``: BGR crops clear of the index corners."""
    out = []
    for name in sorted(decks):
        for label, img in sorted(decks[name].items()):
            if label[:-1] in COURTS:
                h, w = img.shape[:2]
                out.append(img[int(h * 0.16) : int(h * 0.84), int(w * 0.2) : int(w * 0.8), :3].copy())
    return out


def procedural_deck(seed: int, pictures: Sequence[np.ndarray], *, height: int = 240,
                    workers: int = 2, full_bleed: float = 0.0) -> dict[str, np.ndarray]:
    """label -> BGRA render for the 52 faces of design ``seed`` (no back: procedural backs cover it).

    With chance ``full_bleed`` the design's court pictures fill the face (``Design.paste_picture``);
    that draw has a stream of its own, so that at 0 every design is what it was before the option.
    """
    design = Design(seed, height)
    bleed = full_bleed > 0 and float(np.random.default_rng([seed, 1]).random()) < full_bleed
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        renders = dict(zip(FACES, pool.map(design.render, FACES), strict=True))
    if pictures:
        rng = np.random.default_rng(design.court_seed)
        for label in FACES:
            if label[:-1] in COURTS:
                pic = pictures[int(rng.integers(len(pictures)))]
                design.paste_picture(renders[label], pic[::-1, ::-1] if rng.random() < 0.5 else pic,
                                     full_bleed=bleed)
    return renders
