#!/bin/sh
# Re-render the committed "heruka-2color" deck from the npm package's SVG sources.
# Why a script: the PNGs are committed (run time needs no apt/npm), but anyone must be able to
# reproduce them. Needs `rsvg-convert` (apt librsvg2-bin) and
#   npm install --prefix models/work/npm @heruka_urgyen/react-playing-cards
# Usage (from the repository root): sh vision/assets/decks/render_heruka.sh [HEIGHT_PX]
set -eu
HEIGHT="${1:-168}"
SRC="models/work/npm/node_modules/@heruka_urgyen/react-playing-cards/src/images"
OUT="vision/assets/decks/heruka-2color"
[ -d "$SRC/2color" ] || { echo "missing $SRC (npm install first)" >&2; exit 1; }
mkdir -p "$OUT"
for suit in C D H S; do
  for rank in 2 3 4 5 6 7 8 9 T J Q K A; do
    name="$rank$suit"; [ "$rank" = T ] && name="10$suit"
    rsvg-convert -h "$HEIGHT" "$SRC/2color/$rank$suit.svg" -o "$OUT/$name.png"
  done
done
rsvg-convert -h "$HEIGHT" "$SRC/back.svg" -o "$OUT/back.png"
echo "rendered $(ls "$OUT"/*.png | wc -l) cards at ${HEIGHT}px into $OUT"
