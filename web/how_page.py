"""How to play with the referee: one page for the players and the host (docs/how-to-play.md)."""

from __future__ import annotations

from flask import Blueprint, render_template

bp = Blueprint("how", __name__)


@bp.get("/how")
def how() -> str:
    return render_template("how.html")
