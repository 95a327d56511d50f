"""QR codes that open the dashboard: an SVG for the table page, text for the terminal at start."""

from __future__ import annotations

import socket
import sys
from functools import lru_cache
from typing import TextIO

import segno
from markupsafe import Markup


def lan_address() -> str:
    """This machine's address on the LAN (no packet is sent: a UDP connect only picks a route)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.connect(("10.255.255.255", 1))
        return str(sock.getsockname()[0])
    except OSError:
        return "127.0.0.1"
    finally:
        sock.close()


def dashboard_url(host: str, port: int) -> str:
    """The URL phones should open: the LAN address when the server listens on every interface."""
    if host in ("0.0.0.0", "", "::"):
        host = lan_address()
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}/"


LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def phone_url(host_url: str) -> str:
    """The address a phone should open, from the one this page was asked for: a page opened on the
    Pi itself says 127.0.0.1, which no phone can reach, so that becomes the LAN address."""
    from urllib.parse import urlsplit

    parts = urlsplit(host_url)
    if (parts.hostname or "") in LOOPBACK:
        return dashboard_url("0.0.0.0", parts.port or 80)
    return host_url


@lru_cache(maxsize=8)
def qr_svg(url: str) -> Markup:
    """The QR code as inline SVG, black on white with its quiet zone (dark mode would hurt scanning)."""
    svg = segno.make(url, error="m").svg_inline(scale=4, dark="#000", light="#fff", svgclass="qr",
                                               title=url)
    return Markup(svg)


def print_qr(url: str, out: TextIO | None = None) -> None:
    """Print the URL and its QR code to the terminal (the controller calls this at start)."""
    out = out or sys.stdout
    qr = segno.make(url, error="m")
    print(f"Dashboard: {url}  (scan the code with a phone)", file=out)
    qr.terminal(out=out, compact=True)
    out.flush()
