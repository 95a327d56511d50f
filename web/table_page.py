"""The Table page: seats, chips, pool, trump, whose turn, the trick, alerts; live-updated."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Response, render_template, request

from web import web_state
from web.qr import phone_url, qr_svg

bp = Blueprint("table", __name__)


def etag_for(kind: str, version: int) -> str:
    """A strong ETag from the snapshot version (versions only grow; ``boot`` covers a restart)."""
    return f"{kind}-{web_state().boot}-{version}"


def not_modified(etag: str) -> bool:
    return request.if_none_match.contains(etag)


def with_etag(resp: Response, etag: str, version: int) -> Response:
    resp.set_etag(etag)
    resp.headers["X-Loo-Version"] = str(version)
    return resp


def fragment_response(kind: str, snapshot: Mapping[str, Any], render: Any, *, cache_control: str) -> Response:
    """A live HTML fragment for `snapshot`, or 304 when the client already has this version."""
    version = int(snapshot.get("version", 0))
    etag = etag_for(kind, version)
    if not_modified(etag):
        return with_etag(Response(status=304), etag, version)
    resp = Response(render(snapshot), mimetype="text/html")
    resp.headers["Cache-Control"] = cache_control
    return with_etag(resp, etag, version)


def render_table_partial(snapshot: Mapping[str, Any]) -> str:
    """The live part of the Table page, rendered once per version however many phones ask."""
    return web_state().fragment("table", int(snapshot.get("version", 0)),
                                lambda: render_template("_table.html", s=snapshot))


@bp.get("/")
def index() -> str:
    snapshot = web_state().service.snapshot()
    url = phone_url(request.host_url)
    return render_template("table.html", s=snapshot, partial=render_table_partial(snapshot), qr=qr_svg(url), url=url)


@bp.get("/table/partial")
def partial() -> Response:
    """The live fragment for the page's script (SSE says when; ETag makes polling cheap)."""
    return fragment_response("table", web_state().service.snapshot(), render_table_partial,
                             cache_control="no-cache")


@bp.get("/qr.svg")
def qr() -> Response:
    return Response(str(qr_svg(phone_url(request.host_url))), mimetype="image/svg+xml")
