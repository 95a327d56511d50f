"""How to play with the referee: the page every phone opens (Help), the same text in
docs/how-to-play.md, and the printable mat of the table as the camera watches it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from camera_rig import CameraTable
from web_fakes import PIN, FakeService

from table.cli import main
from web import create_app

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def rig(tmp_path):
    table = CameraTable(tmp_path)
    app = create_app(table.service, config={"STATE_DIR": tmp_path / "web", "ADMIN_PIN": PIN},
                     pictures=table.pictures)
    yield table, app.test_client()
    table.close()


def test_every_phone_finds_the_help_and_it_says_what_the_docs_say(rig):
    table, client = rig
    assert 'href="/how"' in client.get("/").get_data(as_text=True)
    page = client.get("/how").get_data(as_text=True)
    doc = (ROOT / "docs" / "how-to-play.md").read_text(encoding="utf-8")
    headings = re.findall(r'<h2 id="[^"]+">([^<]+)</h2>', page)
    assert headings and headings == re.findall(r"^## (.+)$", doc, re.M)
    for meaning in re.findall(r"<dt>([^<]+)</dt>", page):  # what each light means, in both
        assert f"| {meaning} |" in doc
    for gesture in ("to play", "to pass", "to take the miss", "Waiting for the host to check a card"):
        assert gesture in page and gesture in doc
    assert 'src="/mat.svg"' in page and (ROOT / "docs" / "img" / "table-mat.svg").is_file()


def test_the_mat_is_the_tables_own_with_the_players_names(rig):
    table, client = rig
    resp = client.get("/mat.svg")
    assert resp.status_code == 200 and resp.mimetype == "image/svg+xml"
    svg = resp.get_data(as_text=True)
    assert svg.count('<g class="zone"') == len(table.scene.layout.zones)
    for name in ("Ann", "Bea", "Cal", "Dot", "turn-up", "stock"):
        assert f">{name}</text>" in svg
    assert svg.count('<g class="marker"') == 4
    download = client.get("/mat.svg?download=1")
    assert download.headers["Content-Disposition"] == 'attachment; filename="loo-table-mat.svg"'


def test_without_pictures_the_mat_says_why(tmp_path):
    client = create_app(FakeService(), config={"STATE_DIR": tmp_path, "ADMIN_PIN": PIN}).test_client()
    resp = client.get("/mat.svg")
    assert resp.status_code == 404 and "camera" in resp.get_json()["error"]
    assert client.get("/how").status_code == 200  # the page itself needs no camera


def test_loo_table_mat_writes_the_svg_and_refuses_in_one_line(tmp_path, capsys):
    out = tmp_path / "mat.svg"
    assert main(["mat", "--seats", "3", "--players", "Ann,Bea,Cal", "-o", str(out)]) == 0
    svg = out.read_text(encoding="utf-8")
    assert ">Ann</text>" in svg and ">turn-up (trumps)</text>" in svg and 'width="880mm"' in svg
    assert main(["mat", "--seats", "12"]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == "loo-table mat: seats must be 2..8, got 12"
    assert main(["mat", "--table-mm", "100", "100"]) == 1
    assert main(["mat", "-o", str(tmp_path / "no" / "such" / "dir" / "m.svg")]) == 1
    assert "cannot write" in capsys.readouterr().err
