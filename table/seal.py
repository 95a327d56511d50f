"""The ledger's seal: a key only the service reads, and the night's head noted outside the ledger.

Why: the hash chain alone is public arithmetic. Someone with the file could delete the last rows
(and lower ``sqlite_sequence``), edit a reason and recompute every hash, or append a back-dated
"Dan +300", and ``verify`` said ok. Now

- every event is sealed as it is written: ``mac = HMAC-SHA256(key, hash)``, with the key in
  ``ledger.key`` beside the ledger (0600, made by the service at its first start), so an event
  edited, inserted or appended without the key fails ``ledger verify`` run as the service's user;
- the controller notes the head (its seq, hash and seal) in ``<ledger>.heads`` whenever it moves,
  and the End of night page shows its code (``event 412 · 3f9c0a1b2c3d4e5f``) for the host to keep:
  events cut from the end fall short of the noted head, and ``ledger verify --noted 412:3f9c...``
  checks the code the host kept even when the file beside the ledger was changed too.

What root (or anyone who can read the key) can still do: read the key, rewrite and re-seal the
whole chain, and rewrite ``<ledger>.heads``. Only a code the host noted away from the Pi (the End
of night page, a screenshot, the group chat) then shows that the night before it was changed.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from table.files import write_private

if TYPE_CHECKING:  # the ledger imports nothing of this module; typed only
    from table.ledger import Ledger

KEY_FILE = "ledger.key"
#: How many hex digits of the seal the host is shown and asked to keep (64 bits).
CODE_DIGITS = 16


class SealError(Exception):
    """The key cannot be read or made; ``str()`` is one line naming the file."""


def key_path(ledger: Path | str) -> Path:
    return Path(ledger).with_name(KEY_FILE)


def heads_path(ledger: Path | str) -> Path:
    path = Path(ledger)
    return path.with_name(path.name + ".heads")


def load_key(ledger: Path | str, *, create: bool) -> bytes | None:
    """The sealing key beside ``ledger``; made (0600) when missing and ``create``. None when it is
    missing and not to be made; ``SealError`` when it is there but unreadable or damaged."""
    path = key_path(ledger)
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        if not create:
            return None
        key = secrets.token_bytes(32)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_private(path, key.hex() + "\n")
        return key
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise SealError(f"{path}: cannot read the ledger's key ({reason}); run as the table's user "
                        "(sudo -u loo-table ...)") from None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise SealError(f"{path}: not a ledger key (64 hex digits); it was changed: keep the file for "
                        "the record and restore the key from a backup of the state folder")
    return key


def code(seal: str) -> str:
    """What the host keeps: the seal's first ``CODE_DIGITS`` hex digits."""
    return seal[:CODE_DIGITS]


@dataclass(frozen=True)
class Head:
    """A noted head: the last event's seq, chain hash and seal, and when it was noted."""

    seq: int
    hash: str
    seal: str
    at: float = 0.0

    def describe(self) -> str:
        return f"event {self.seq} · {code(self.seal)}"


class HeadNotary:
    """Notes the ledger's head in ``<ledger>.heads`` when it moves (the controller calls ``note``
    about once a second and at stop). The file holds the latest head only: the highest one is
    the one that shows a cut tail."""

    def __init__(self, ledger: Ledger, *, clock: Callable[[], float] = time.time) -> None:
        self.ledger = ledger
        self.path = heads_path(ledger.path)
        self._clock = clock
        self._last = -1

    def note(self) -> Head | None:
        seq, digest = self.ledger.head()
        if seq == self._last or seq == 0:
            return None
        seal = self.ledger.seal(seq)
        if seal is None:
            return None  # a ledger written without a key: nothing to note
        head = Head(seq, digest, seal, float(self._clock()))
        write_private(self.path, json.dumps({"seq": seq, "hash": digest, "seal": seal, "at": head.at}) + "\n")
        self._last = seq
        return head


def noted_head(ledger: Path | str) -> Head | None:
    """The head noted beside ``ledger`` (None when there is none or it cannot be read as one)."""
    try:
        raw = json.loads(heads_path(ledger).read_text(encoding="ascii")[:4096])
        return Head(int(raw["seq"]), str(raw["hash"]), str(raw["seal"]), float(raw.get("at", 0.0)))
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None


def parse_noted(text: str) -> tuple[int, str]:
    """``SEQ:CODE`` as the host noted it (``412:3f9c0a1b2c3d4e5f``; spaces and "event" ignored)."""
    cleaned = text.lower().replace("event", "").replace("·", ":").replace(" ", "")
    seq_text, _, hexcode = cleaned.partition(":")
    if not seq_text.isdigit() or len(seq_text) > 12 or len(hexcode) < 8 or len(hexcode) > 64 or any(
            c not in "0123456789abcdef" for c in hexcode):
        raise ValueError(f"--noted {text!r}: expected EVENT:CODE as the End of night page shows it "
                         "(e.g. 412:3f9c0a1b2c3d4e5f)")
    return int(seq_text), hexcode


def check_heads(ledger: Ledger, key: bytes | None, noted: tuple[int, str] | None = None) -> list[str]:
    """Problems between the ledger and its noted heads: the one in ``<ledger>.heads`` and the code
    the host kept (``noted``). Needs the key to trust a seal; call after ``verify_chain(key)``."""
    from table.ledger import seal_of

    problems: list[str] = []
    last, _ = ledger.head()
    heads = []
    kept = noted_head(ledger.path)
    if kept is not None:
        heads.append((kept.seq, kept.seal, f"the head noted in {heads_path(ledger.path).name}"))
        digest = ledger.hash_at(kept.seq)
        if digest is not None and digest != kept.hash:
            problems.append(f"event {kept.seq} does not match the head noted in {heads_path(ledger.path).name}: "
                            "the events up to it were changed")
    if noted is not None:
        heads.append((noted[0], noted[1], "the code you noted"))
    for seq, seal, source in heads:
        if seq > last:
            problems.append(f"the ledger ends at event {last} but {source} is event {seq}: "
                            "events were removed from the end")
            continue
        digest = ledger.hash_at(seq)
        if digest is None:
            problems.append(f"event {seq} ({source}) is missing from the ledger")
            continue
        if key is None:
            continue  # without the key a stored seal proves nothing; verify says it was not checked
        if not seal_of(key, digest).startswith(seal):
            problems.append(f"event {seq} does not match {source}: the events up to it were changed "
                            "(or the code was mistyped)")
    return problems
