"""A corpus of hostile and damaged files for every command that reads one: one line, non-zero exit.

Each file is made here: JSON nested 100,000 deep or holding a 5,000-digit number for `score`, a
few-kilobyte PNG that declares 30000 x 30000 pixels for `identify`, binary and deeply nested TOML
for `pins --config`, ledgers with bytes changed in their rows or pages for `ledger verify` and
`run`, and backups that are damaged or not in the backup list for `backup --restore`. A command
that raised would fail the test with its traceback; one that printed two lines fails the check.
"""

from __future__ import annotations

import shutil
import struct
import zlib
from pathlib import Path

import pytest
from test_ledger import _played_ledger
from test_run import write_config

from table.cli import main


def _one_line_failure(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert code != 0, argv
    assert err and "\n" not in err and "Traceback" not in err, err
    return err


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    body = zlib.compress(b"\0" * (3 * 1000 + 1) * 1000, 9)  # a few kB that inflate to megabytes
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


SCORE_FILES = {
    "deep.json": "[" * 100_000,
    "deep-object.json": '{"a":' * 100_000,
    "bigint.json": '{"id": ' + "9" * 5000 + "}",
    "deep-record.json": '{"format": "loo-hand/1", "id": "x", "deal": ' + "[" * 800 + "]" * 800 + "}",
    "binary.json": bytes(range(256)) * 4,
    "empty.json": "",
    "nan.json": '[{"format": "loo-hand/1", "chips": NaN}]',
}


@pytest.mark.parametrize("name", sorted(SCORE_FILES))
def test_score_hostile_json(tmp_path, capsys, name):
    path = tmp_path / name
    content = SCORE_FILES[name]
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    _one_line_failure(capsys, ["score", str(path)])


CONFIG_FILES = {
    "binary.toml": bytes(range(256)) * 10,
    "deep.toml": b"a = " + b"[" * 100_000,
    "nul.toml": b'[game]\nplayers = ["A\x00"]\n',
    "inline-deep.toml": b"a = " + b"{b = " * 5000,
}


@pytest.mark.parametrize("name", sorted(CONFIG_FILES))
def test_pins_on_a_hostile_config(tmp_path, capsys, name):
    path = tmp_path / name
    path.write_bytes(CONFIG_FILES[name])
    assert path.name in _one_line_failure(capsys, ["pins", "--config", str(path)])


def test_identify_refuses_a_decompression_bomb_before_decoding(tmp_path, capsys):
    from vision.image_file import MAX_PIXELS, UnreadableImage, declared_size, read_image

    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(_png(30000, 30000))
    assert bomb.stat().st_size < 100_000 and declared_size(bomb.read_bytes()) == (30000, 30000)
    with pytest.raises(UnreadableImage, match="30000 x 30000 pixels is more than the 120 megapixels"):
        read_image(bomb)
    import cv2
    import numpy as np

    ok, jpeg = cv2.imencode(".jpg", np.zeros((48, 64, 3), np.uint8))
    assert ok and declared_size(jpeg.tobytes()) == (64, 48)
    forged = bytearray(jpeg.tobytes())
    sof = forged.find(b"\xff\xc0")
    forged[sof + 5:sof + 9] = struct.pack(">HH", 60000, 60000)
    (tmp_path / "forged.jpg").write_bytes(bytes(forged))
    assert 60000 * 60000 > MAX_PIXELS
    with pytest.raises(UnreadableImage, match="60000 x 60000"):
        read_image(tmp_path / "forged.jpg")
    small = tmp_path / "small.png"
    small.write_bytes(_png(1000, 1000))
    assert read_image(small).shape == (1000, 1000, 3)
    code = main(["identify", str(bomb)])
    err = capsys.readouterr().err.strip()
    assert code != 0 and err.count("\n") == 0 and "megapixels" in err


def _row_damages(db: Path) -> list[bytes]:
    """Copies of ``db`` with one byte of one row's JSON changed: some still valid JSON with another
    value, some no longer UTF-8 or no longer JSON. SQLite's page checks see none of them."""
    raw = db.read_bytes()
    spots = [i for i in range(len(raw)) if raw[i:i + 2] == b'":'][:54]
    copies = []
    for n, at in enumerate(spots):
        data = bytearray(raw)
        data[at + 2] = (b"\xff", b"7", b"{", b" ")[n % 4][0]
        copies.append(bytes(data))
    return copies


def test_ledger_verify_on_corrupted_copies(tmp_path, capsys):
    good = _played_ledger(tmp_path)
    copies = _row_damages(good)
    assert len(copies) == 54
    reasons = set()
    for n, data in enumerate(copies):
        copy = tmp_path / f"copy{n}.db"
        copy.write_bytes(data)
        reasons.add(_one_line_failure(capsys, ["ledger", "verify", "--db", str(copy)]).split(":")[1])
    assert reasons  # every copy failed with one line


def test_ledger_verify_on_randomly_damaged_pages_never_raises(tmp_path, capsys):
    import random

    good = _played_ledger(tmp_path)
    raw = good.read_bytes()
    rng = random.Random(23)
    for n in range(54):
        data = bytearray(raw)
        at = rng.randrange(100, len(raw) - 16)
        data[at:at + 16] = rng.randbytes(16)
        copy = tmp_path / f"page{n}.db"
        copy.write_bytes(bytes(data))
        code = main(["ledger", "verify", "--db", str(copy)])
        captured = capsys.readouterr()
        assert code in (0, 1) and "\n" not in captured.err.strip()  # damage in free space is harmless


def test_run_on_a_ledger_with_a_damaged_row_names_the_backup(tmp_path, capsys):
    from table.backup import backup_database

    state = tmp_path / "state"
    state.mkdir()
    db = state / "ledger.db"
    shutil.copy(_played_ledger(tmp_path), db)
    info = backup_database(db, state / "backups")
    raw = db.read_bytes()
    assert raw.count(b'"delta":7') == 1
    db.write_bytes(raw.replace(b'"delta":7', b'"delta":9'))  # still valid JSON: only the chain shows it
    cfg = write_config(tmp_path)
    err = _one_line_failure(capsys, ["run", "--config", str(cfg), "--mock-pins", "--quiet"])
    assert "is corrupt" in err and "hash does not match" in err and f"--restore {info.path}" in err


def test_run_refuses_the_default_pin(tmp_path, capsys):
    cfg = write_config(tmp_path, web='host = "127.0.0.1"\nport = 0\nadmin_pin = "000000"')
    err = _one_line_failure(capsys, ["run", "--config", str(cfg), "--mock-pins", "--quiet"])
    assert "web.admin_pin is 000000" in err
    assert not (tmp_path / "state").exists()  # refused before anything was created


def test_restore_of_hostile_backups(tmp_path, capsys):
    from table.backup import backup_database

    good = _played_ledger(tmp_path)
    dest = tmp_path / "backups"
    backup_database(good, dest)
    for n, data in enumerate([b"not a database" * 100, b"SQLite format 3\x00" + b"\xee" * 8000,
                              _row_damages(good)[3]]):
        (dest / f"ledger-2026010{n + 1}T000000Z.db").write_bytes(data)
        err = _one_line_failure(capsys, ["backup", "--db", str(good), "--dest", str(dest), "--restore",
                                         f"ledger-2026010{n + 1}T000000Z.db"])
        assert "not usable" in err


def test_run_at_a_terminal_asks_for_a_new_pin_instead_of_the_default():
    from table.cli import CommandError
    from table.commands.run import ask_new_pin

    answers = iter(["12", "000000", "4321", "4322", "4321", "4321"])
    assert ask_new_pin("cfg.toml", ask=lambda _prompt: next(answers), tries=4) == "4321"  # short, default, mismatch, ok
    with pytest.raises(CommandError, match="no new admin PIN chosen"):
        ask_new_pin("cfg.toml", ask=lambda _prompt: "000000")


# -- issue 49 #7 and #8: more hostile inputs, each one line and a non-zero exit --------------------


BIG_INT_CONFIG = "[game]\nchips = " + "9" * 5000 + "\n"


@pytest.mark.parametrize("argv", [["pins", "--config"], ["ledger", "verify", "--config"],
                                  ["run", "--mock-pins", "--quiet", "--config"]])
def test_a_5000_digit_integer_in_the_config(tmp_path, capsys, argv):
    cfg = tmp_path / "big.toml"
    cfg.write_text(BIG_INT_CONFIG)
    err = _one_line_failure(capsys, [*argv, str(cfg)])
    assert "big.toml: not valid TOML" in err


@pytest.mark.parametrize("argv", [["identify"], ["score"], ["pins", "--config"]])
def test_devices_and_fifos_are_never_read(tmp_path, capsys, argv):
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in ("/dev/zero", str(fifo)):  # one reads forever, the other waits forever for a writer
        err = _one_line_failure(capsys, [*argv, path])
        assert "not a regular file" in err and path in err


def test_a_run_length_bmp_declaring_a_huge_image_is_refused_before_decoding(tmp_path, capsys):
    from vision.image_file import declared_size

    header = struct.pack("<2sIHHI", b"BM", 0, 0, 0, 54 + 1024)
    info = struct.pack("<IiiHHIIiiII", 40, 10_900, 10_900, 1, 8, 1, 0, 2835, 2835, 256, 0)  # BI_RLE8
    bomb = tmp_path / "bomb.bmp"
    bomb.write_bytes(header + info + b"\0" * 1024 + b"\x00\x01" * 100)
    assert bomb.stat().st_size < 2000 and declared_size(bomb.read_bytes()) == (10_900, 10_900)
    err = _one_line_failure(capsys, ["identify", str(bomb)])
    assert "declares 10900 x 10900 pixels" in err


def test_python_m_table_cli_fails_in_one_line_too(tmp_path):
    import subprocess
    import sys

    cfg = tmp_path / "big.toml"
    cfg.write_text(BIG_INT_CONFIG)
    done = subprocess.run([sys.executable, "-m", "table.cli", "pins", "--config", str(cfg)],
                          capture_output=True, text=True, timeout=120)
    err = done.stderr.strip()
    assert done.returncode == 1 and "\n" not in err and "Traceback" not in err and "not valid TOML" in err


@pytest.mark.parametrize("argv", [["ledger", "export", "--format", "csv", "--db"], ["pins", "--format", "json"]])
def test_a_reader_that_stops_early_gets_no_traceback(tmp_path, argv):
    """`loo-table ledger export | head`: the pipe closes after a few bytes."""
    import subprocess
    import sys

    if argv[0] == "ledger":
        argv = [*argv, str(_played_ledger(tmp_path))]
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte, as `head` is after its lines
    try:
        done = subprocess.run([sys.executable, "-m", "table", *argv], stdout=write_end, stderr=subprocess.PIPE,
                              timeout=120)
    finally:
        os.close(write_end)
    assert done.stderr.decode() == "" and done.returncode == 141


@pytest.mark.parametrize(("text", "needle"), [
    ("[game]\noptions = {no_such_rule = true}\n", "game.options: unknown option 'no_such_rule'"),
    ('[model]\npath = "{missing}/model.onnx"\n', "model.path:"),
    ('[model]\ndetector = "{missing}/detector.onnx"\n', "model.detector:"),
    ('[camera]\ncalibration = "{missing}/cal.json"\n', "camera.calibration:"),
])
def test_pins_config_checks_what_run_would_refuse(tmp_path, capsys, text, needle):
    cfg = tmp_path / "c.toml"
    cfg.write_text(text.replace("{missing}", str(tmp_path / "missing")))
    err = _one_line_failure(capsys, ["pins", "--config", str(cfg)])
    assert needle in err


def test_score_reads_standard_input_within_its_bound():
    """`loo-table score - < /dev/zero`: one line once the bound is passed, not a MemoryError."""
    import subprocess
    import sys

    with open("/dev/zero", "rb") as zero:
        done = subprocess.run([sys.executable, "-m", "table", "score", "-"], stdin=zero, capture_output=True,
                              text=True, timeout=300)
    err = done.stderr.strip()
    assert done.returncode == 1 and "\n" not in err and "more than the" in err
