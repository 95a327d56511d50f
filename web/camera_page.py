"""Pictures for the host: the camera view, the unsure card's picture, the photos that prove.

``GET /admin/camera.jpg`` is the table as the camera sees it, the zones drawn and each card as
read (the Admin page reloads it about once a second: no video stream to hold a thread). It and
``/admin/alert/<id>.jpg`` (the zone of the card the camera is unsure of) are for the logged-in
host only: hands and faces are in the camera's view. ``/photo/<hash>.jpg`` is a photo kept beside
the ledger (a revoke, a card out of turn, a correction): a small crop of one zone, shown in the
alert and the History to everyone at the table, like the sentence it proves.
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify, request

from table.contract.camera_setup import check_calibrate
from table.contract.pictures import Picture
from web import web_state
from web.security import ApiError, admin_required, is_admin

bp = Blueprint("pictures", __name__)


def _jpeg(pic: Picture | None, missing: str, *, private: bool, immutable: bool = False) -> Response:
    if pic is None:
        raise ApiError(404, missing)  # not a server fault: nothing to show (yet)
    if request.if_none_match.contains(pic.tag):
        resp = Response(status=304)
    else:
        resp = Response(pic.jpeg, mimetype="image/jpeg")
    resp.set_etag(pic.tag)
    if immutable:  # named by its hash: it never changes
        resp.headers["Cache-Control"] = ("private, " if private else "public, ") + "max-age=31536000, immutable"
    else:
        resp.headers["Cache-Control"] = "no-store, private" if private else "no-cache"
    return resp


@bp.get("/admin/camera.jpg")
def camera_view() -> Response:
    """The camera view (401 without the host's session; 404 until the camera gave a frame)."""
    if not is_admin():
        raise ApiError(401, "admin login required")
    pictures = web_state().pictures
    pic = pictures.camera_view() if pictures is not None else None
    return _jpeg(pic, "no picture from the camera yet", private=True)


@bp.get("/admin/alert/<int:alert_id>.jpg")
def alert_picture(alert_id: int) -> Response:
    """The picture kept with an alert (the zone of the card the camera asks about)."""
    if not is_admin():
        raise ApiError(401, "admin login required")
    pictures = web_state().pictures
    pic = pictures.alert_picture(alert_id) if pictures is not None else None
    return _jpeg(pic, f"no picture with alert {alert_id}", private=True, immutable=True)


@bp.post("/api/admin/calibrate")
@admin_required
def calibrate() -> Response:
    """Calibrate the camera from its latest frame (the markers, or four corners tapped on the
    picture) while the table runs; the figures and warnings come back for the page to show."""
    setup = web_state().camera_setup
    if setup is None:
        raise ApiError(404, "this table has no camera to calibrate")
    payload = request.get_json(silent=True) if request.data else {}
    try:
        report = setup.calibrate(check_calibrate(payload))
    except ValueError as err:
        raise ApiError(400, str(err)) from None
    return jsonify(report)


@bp.get("/mat.svg")
def table_mat() -> Response:
    """The printable mat (SVG at real size) of the table as the camera watches it now; anyone at
    the table may print it (it shows the zones and the markers, no picture)."""
    pictures = web_state().pictures
    svg = pictures.table_mat() if pictures is not None else None
    if svg is None:
        raise ApiError(404, "no table mat yet: the camera has not given its first picture")
    resp = Response(svg, mimetype="image/svg+xml")
    resp.headers["Cache-Control"] = "no-cache"
    if request.args.get("download") == "1":
        resp.headers["Content-Disposition"] = 'attachment; filename="loo-table-mat.svg"'
    return resp


@bp.get("/photo/<name>.jpg")
def photo(name: str) -> Response:
    """A stored photo by its SHA-256 (404 for any other name)."""
    pictures = web_state().pictures
    pic = pictures.photo(name) if pictures is not None else None
    return _jpeg(pic, "no such photo", private=False, immutable=True)
