"""The deck artwork the card model learns from (and the designs it never sees).

Every deck is French-suited with English indices (A K Q J) and two colours. Which decks are used,
which are held out for evaluation, and why the rest of the installed artwork is left out is
recorded here once and quoted by the model card (``models/README.md``).

Rendering uses ``rsvg-convert`` (Debian ``librsvg2-bin``); exporting one element id of a deck SVG
gives a canvas that may be far larger than the card, so each render is cropped to its opaque
bounding box. Renders are cached under ``models/work/render/<deck>/<label>.png`` (git-ignored).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vision.labels import FACES

GNOME_DIR = Path("/usr/share/aisleriot/cards")
KDE_DIR = Path("/usr/share/carddecks")
ROOT = Path(__file__).resolve().parent
NPM_DIR = Path(os.environ.get("LOO_NPM_DIR", ROOT / "work" / "npm" / "node_modules"))
RENDER_DIR = ROOT / "work" / "render"

_SUIT_WORD = {"C": "club", "D": "diamond", "H": "heart", "S": "spade"}
_RANK_WORD = {"A": "1", "J": "jack", "Q": "queen", "K": "king"}
_RANK_NUM = {"A": "1", "J": "11", "Q": "12", "K": "13"}
_RANK_HERUKA = {"10": "T"}


@dataclass(frozen=True)
class Deck:
    """One deck design: where its artwork lives, how to name a card in it, and its role."""

    name: str
    kind: str  # "gnome" (one svgz, ids suit_rank), "kde" (one svgz, ids rank_suit), "files" (one svg per card)
    source: str  # package that ships it
    licence: str
    held_out: bool = False
    style: str = "realistic"  # or "stylised"
    path: str = ""  # svgz for gnome/kde, folder for files
    pattern: str = ""  # for "files": e.g. "{num}{suit_lower}.svg"
    back: str = ""  # for "files": back image path relative to the folder ("" = none)

    def svg_path(self) -> Path:
        if self.kind == "gnome":
            return GNOME_DIR / self.path
        if self.kind == "kde":
            folder = KDE_DIR / self.path
            found = sorted(folder.glob("*.svgz")) + sorted(folder.glob("*.svg"))
            return found[0] if found else folder / "missing.svgz"
        return NPM_DIR / self.path

    def element_id(self, label: str) -> str:
        if label == "back":
            return "back"
        rank, suit = label[:-1], label[-1]
        if self.kind == "gnome":
            return f"{_SUIT_WORD[suit]}_{_RANK_WORD.get(rank, rank)}"
        return f"{_RANK_WORD.get(rank, rank)}_{_SUIT_WORD[suit]}"

    def file_for(self, label: str) -> Path | None:
        folder = NPM_DIR / self.path
        if label == "back":
            return (folder / self.back) if self.back else None
        rank, suit = label[:-1], label[-1]
        name = self.pattern.format(
            num=_RANK_NUM.get(rank, rank),
            heruka=_RANK_HERUKA.get(rank, rank),
            suit=suit,
            suit_lower=suit.lower(),
        )
        return folder / name

    def available(self) -> bool:
        if self.kind == "files":
            f = self.file_for("AS")
            return f is not None and f.is_file()
        return self.svg_path().is_file()


def _g(name: str, held_out: bool = False, style: str = "realistic") -> Deck:
    return Deck(name=f"gnome-{name}", kind="gnome", source="gnome-cards-data", licence="GPL-3+",
                held_out=held_out, style=style, path=f"{name}.svgz")


def _k(name: str, held_out: bool = False, style: str = "realistic", licence: str = "GPL-2+") -> Deck:
    return Deck(name=f"kde-{name}", kind="kde", source="kdegames-card-data-kf5", licence=licence,
                held_out=held_out, style=style, path=f"svg-{name}")


HERUKA = "@heruka_urgyen/react-playing-cards/src/images"

#: Every deck the recipe knows. ``held_out=True`` decks are never trained on; they measure
#: accuracy on designs the network has not seen. Designs shipped twice (GNOME and KDE dondorf,
#: paris, tigullio) are trained on together, never split across train and held-out.
DECKS: tuple[Deck, ...] = (
    # realistic, trained
    _g("anglo"), _g("anglo_bitmap"), _g("anglo_modern"), _g("anglo_poker"),
    _g("gnomangelo"), _g("gnomangelo_bitmap"), _g("paris"), _g("dondorf"), _g("tigullio"),
    _g("atlasnye"),
    _k("gm-paris"), _k("dondorf"), _k("tigullio-international"),
    # stylised, trained
    _g("neoclassical", style="stylised"), _g("ornamental", style="stylised"),
    _g("plastic", style="stylised"), _g("simplistic", style="stylised"), _g("tango", style="stylised"),
    _k("oxygen", style="stylised"), _k("oxygen-white", style="stylised"), _k("oxygen-air", style="stylised"),
    _k("jolly-royal", style="stylised"), _k("nicu-white", style="stylised"),
    _k("nicu-ornamental", style="stylised"), _k("penguins", style="stylised"),
    _k("ancient-egyptians", style="stylised", licence="LGPL-2+"),
    # the demo's deck (vision/assets renders it for the synthetic table): must be read well
    Deck(name="heruka-2color", kind="files", source="npm @heruka_urgyen/react-playing-cards", licence="CC0-1.0",
         style="realistic", path=f"{HERUKA}/2color", pattern="{heruka}{suit}.svg", back="../back.svg"),
    Deck(name="heruka-2color-bf", kind="files", source="npm @heruka_urgyen/react-playing-cards",
         licence="CC0-1.0", style="realistic", path=f"{HERUKA}/2color-bf", pattern="{heruka}{suit}.svg"),
    # held out: realistic designs the network never sees
    Deck(name="younestouati-standard", kind="files", source="npm @younestouati/playing-cards-standard-deck",
         licence="LGPL-3.0", held_out=True, path="@younestouati/playing-cards-standard-deck/cards",
         pattern="{num}{suit_lower}.svg"),  # its back.svg is a square tile, not a card back
    _k("standard", held_out=True),
    _g("bellot", held_out=True),
    _g("orell", held_out=True),
)

#: Installed artwork that is deliberately not used, with the reason the model card quotes.
LEFT_OUT: dict[str, str] = {
    "gnome-anglo_modern_4_color, gnome-neoclassical_4_color": "four-colour suits (clubs green, diamonds blue)",
    "gnome-ancient_french, gnome-guyenne-classic": "French-language indices (R D V)",
    "gnome-berlin, gnome-rheinland, gnome-lattmann": "German indices or German-suited",
    "gnome-atlasnye_skat, gnome-Атласные, gnome-slavic_costumes": "Skat/Cyrillic indices or court cards without an English index",
    "gnome-swiss-xvii": "Swiss suits",
    "gnome-tarocco": "Italian tarot",
    "gnome-tango_nuevo": "court cards without a standard index",
    "kde-future": "not card faces",
    "kde-konqi-modern, kde-xskat-french": "raster inside the SVG; does not render with rsvg-convert",
    "kde-xskat-german": "German suits",
    "heruka 4color, 4color-bf": "four-colour suits",
}


def decks(*, held_out: bool | None = None, names: Iterable[str] | None = None) -> list[Deck]:
    """Installed decks, optionally only the held-out (True) or training (False) ones."""
    wanted = set(names) if names is not None else None
    out = []
    for d in DECKS:
        if held_out is not None and d.held_out != held_out:
            continue
        if wanted is not None and d.name not in wanted:
            continue
        if d.available():
            out.append(d)
    return out


def _crop_alpha(img: np.ndarray) -> np.ndarray:
    """Crop an RGBA/BGRA render to the bounding box of its opaque pixels."""
    alpha = img[:, :, 3]
    ys, xs = np.nonzero(alpha > 8)
    if len(xs) == 0:
        raise RuntimeError("render is fully transparent")
    return img[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def _rsvg(args: list[str]) -> None:
    exe = shutil.which("rsvg-convert")
    if exe is None:
        raise RuntimeError("rsvg-convert not found: apt-get install librsvg2-bin")
    subprocess.run([exe, *args], check=True, capture_output=True, timeout=120)


def render_card(deck: Deck, label: str, height: int = 240) -> np.ndarray | None:
    """Render one card of ``deck`` as a BGRA array about ``height`` px tall (None if the deck lacks it)."""
    import cv2

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "card.png"
        if deck.kind == "files":
            src = deck.file_for(label)
            if src is None or not src.is_file():
                return None
            _rsvg(["-h", str(height), "-o", str(out), str(src)])
            img = cv2.imread(str(out), cv2.IMREAD_UNCHANGED)
            if img is None:
                return None
            if img.shape[2] == 3:
                img = np.dstack([img, np.full(img.shape[:2], 255, np.uint8)])
            return _crop_alpha(img)
        svg = deck.svg_path()
        eid = deck.element_id(label)
        # Measure at zoom 1, then render at the zoom that gives the wanted height.
        try:
            _rsvg(["-i", eid, "-z", "1", "-o", str(out), str(svg)])
        except subprocess.CalledProcessError:
            return None
        probe = cv2.imread(str(out), cv2.IMREAD_UNCHANGED)
        if probe is None or probe.ndim != 3 or probe.shape[2] != 4:
            return None
        h0 = _crop_alpha(probe).shape[0]
        zoom = height / max(h0, 1)
        _rsvg(["-i", eid, "-z", f"{zoom:.4f}", "-o", str(out), str(svg)])
        img = cv2.imread(str(out), cv2.IMREAD_UNCHANGED)
        return None if img is None else _crop_alpha(img)


def render_deck(deck: Deck, *, height: int = 240, out_dir: Path = RENDER_DIR, workers: int = 2) -> dict[str, Path]:
    """Render (or reuse cached renders of) every face and the back of ``deck``; label -> PNG path."""
    import cv2

    folder = out_dir / f"{deck.name}@{height}"
    folder.mkdir(parents=True, exist_ok=True)
    labels = list(FACES) + ["back"]

    def one(label: str) -> tuple[str, Path | None]:
        path = folder / f"{label}.png"
        missing = folder / f"{label}.missing"
        if deck.kind == "files" and deck.file_for(label) is None:
            return label, None  # the package ships no such file: never trust an old cached render
        if path.is_file():
            return label, path
        if missing.is_file():
            return label, None
        img = render_card(deck, label, height)
        if img is None or img.shape[0] < height * 0.5 or img.shape[1] < height * 0.3:
            missing.touch()
            return label, None
        cv2.imwrite(str(path), img)
        return label, path

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = dict(pool.map(one, labels))
    return {k: v for k, v in results.items() if v is not None}


def load_deck(deck: Deck, *, height: int = 240, out_dir: Path = RENDER_DIR, workers: int = 2) -> dict[str, np.ndarray]:
    """label -> BGRA array for ``deck`` (rendering what is not cached yet)."""
    import cv2

    paths = render_deck(deck, height=height, out_dir=out_dir, workers=workers)
    out: dict[str, np.ndarray] = {}
    for label, path in paths.items():
        img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        if img is not None and img.ndim == 3 and img.shape[2] == 4:
            out[label] = img
    return out


def font_deck(variant: int = 0, height: int = 120) -> dict[str, np.ndarray]:
    """A plain deck drawn with OpenCV's Hershey fonts: no artwork or rsvg needed.

    Used only by the tiny recipe (``--tiny``) so that the end-to-end test runs anywhere in seconds;
    ``variant`` changes font and layout so one variant can be held out from another.
    """
    import cv2

    fonts = [cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_COMPLEX]
    font = fonts[variant % len(fonts)]
    w = int(height * 5 / 7)
    glyph = {"C": "c", "D": "d", "H": "h", "S": "s"}
    out: dict[str, np.ndarray] = {}
    for label in [*FACES, "back"]:
        img = np.full((height, w, 4), 255, np.uint8)
        if label == "back":
            img[:, :, :3] = (60 + 40 * variant, 30, 140)
            cv2.rectangle(img, (6, 6), (w - 7, height - 7), (255, 255, 255, 255), 2)
        else:
            rank, suit = label[:-1], label[-1]
            colour = (0, 0, 200, 255) if suit in "DH" else (20, 20, 20, 255)
            text = rank + glyph[suit]
            scale = height / 170
            cv2.putText(img, text, (4, int(height * 0.2)), font, scale, colour, 2, cv2.LINE_AA)
            cv2.putText(img, text, (int(w * 0.25), int(height * 0.62)), font, scale * 2.2, colour, 3, cv2.LINE_AA)
        out[label] = img
    return out
