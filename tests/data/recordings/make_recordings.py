"""Re-create the committed test recordings (deterministic): ``python tests/data/recordings/make_recordings.py``.

Each recording is a short MPEG-4 video (640×360, 15 fps) of a small synthetic table (560 × 320 mm
between marker centres, three zones) filmed close enough for cards to be about 70 px tall, with
sensor noise, a hand and its shadow. ``expected.json`` lists the events each must produce;
``layout.json`` is the zone layout (the calibration comes from the markers in the first frame).
Why videos: inter-frame compression keeps four sequences under 1 MB, and replaying them exercises
the video path of the replay source as a real recording would.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2

from vision.geometry import TableLayout, Zone
from vision.synthetic import HandPose, PlacedCard, SyntheticTable

HERE = Path(__file__).resolve().parent
SIZE = (640, 360)
FPS = 15
LAYOUT = TableLayout(560.0, 320.0, (
    Zone("seat:0", 60.0, 100.0, 130.0, 130.0),
    Zone("turn_up", 215.0, 100.0, 130.0, 130.0),
    Zone("seat:1", 370.0, 100.0, 130.0, 130.0),
))


def table() -> SyntheticTable:
    return SyntheticTable(seed=31, size=SIZE, layout=LAYOUT, texture="cloth", dark=True, tilt_deg=10)


def centre(zone: str, dx: float = 0.0, dy: float = 0.0) -> tuple[float, float]:
    x, y = LAYOUT.zone(zone).center
    return x + dx, y + dy


def bring(zone: str, card: str, angle: float) -> list[dict]:
    """A hand carries the card in from below, lets go and withdraws."""
    x, y = centre(zone)
    steps = []
    for k in range(5):
        d = 160 - 35 * k
        held = PlacedCard(card, x, y + d, angle)
        steps.append({"hand": HandPose(x, y + d + 45, 90, height=40), "held": held})
    steps.append({"place": PlacedCard(card, x, y, angle), "hand": HandPose(x, y + 50, 90, height=15)})
    for k in range(3):
        steps.append({"hand": HandPose(x, y + 140 + 70 * k, 90, height=40)})
    return steps


def take(zone: str) -> list[dict]:
    x, y = centre(zone)
    return ([{"hand": HandPose(x, y + 30, 90, height=10)}, {"remove": zone, "hand": HandPose(x, y + 40, 90, height=10)}]
            + [{"hand": HandPose(x, y + 120 + 80 * k, 90, height=40)} for k in range(3)])


def rest(n: int) -> list[dict]:
    return [{} for _ in range(n)]


SCENARIOS: dict[str, tuple[list[dict], list[list]]] = {
    "occlusion": (
        rest(4) + bring("seat:0", "QH", 6) + rest(8)
        + [{"hand": HandPose(*centre("seat:0", 15, 5), 90, height=8)} for _ in range(20)]  # a hand rests on it
        + [{"hand": HandPose(*centre("seat:1", 0, 0), 0, height=8)} for _ in range(15)]  # over an empty zone
        + rest(8),
        [["card_placed", "seat:0", "QH"]],
    ),
    "slide": (
        rest(4)
        + [{"slide": PlacedCard("9S", centre("seat:1")[0] + 110 - 3 * k, centre("seat:1")[1], 4),
            "hand": HandPose(centre("seat:1")[0] + 110 - 3 * k + 40, centre("seat:1")[1], 0, height=10)}
           for k in range(37)]
        + [{"place": PlacedCard("9S", centre("seat:1")[0] + 2, centre("seat:1")[1], 4)}]  # let go where it stopped
        + [{"hand": HandPose(centre("seat:1")[0] + 150 + 80 * k, centre("seat:1")[1], 0, height=40)} for k in range(3)]
        + rest(10),
        [["card_placed", "seat:1", "9S"]],
    ),
    "replace": (
        rest(4) + bring("seat:0", "KS", -8) + rest(8) + take("seat:0") + rest(8)
        + bring("seat:0", "4C", 10) + rest(10),
        [["card_placed", "seat:0", "KS"], ["card_removed", "seat:0", "KS"], ["zone_cleared", "seat:0", None],
         ["card_placed", "seat:0", "4C"]],
    ),
    "conflict": (
        rest(4) + bring("seat:0", "AH", 0) + rest(8) + bring("seat:1", "AH", 5) + rest(8)
        + take("seat:0") + rest(10),
        [["card_placed", "seat:0", "AH"], ["conflict", "seat:1", "AH"], ["card_removed", "seat:0", "AH"],
         ["zone_cleared", "seat:0", None], ["card_placed", "seat:1", "AH"]],
    ),
}


def render(t: SyntheticTable, steps: list[dict], path: Path) -> int:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), FPS, SIZE)
    if not writer.isOpened():
        raise SystemExit(f"{path}: cannot write mp4v video")
    lying: dict[str, PlacedCard] = {}
    for i, step in enumerate(steps):
        if "place" in step:
            card = step["place"]
            zone = LAYOUT.zone_at((card.x, card.y))
            assert zone is not None
            lying[zone.name] = card
        if "remove" in step:
            lying.pop(step["remove"], None)
        cards = list(lying.values())
        if "slide" in step:
            cards.append(step["slide"])
        writer.write(t.render(cards, hand=step.get("hand"), held=step.get("held"), frame_index=i))
    writer.release()
    return len(steps)


def main() -> None:
    import argparse

    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    t = table()
    expected = {}
    for name, (steps, events) in SCENARIOS.items():
        n = render(t, steps, HERE / f"{name}.mp4")
        expected[name] = {"frames": n, "events": events}
        print(f"{name}.mp4: {n} frames, {(HERE / f'{name}.mp4').stat().st_size // 1024} kB")
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")
    (HERE / "layout.json").write_text(json.dumps(LAYOUT.to_dict(), indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
