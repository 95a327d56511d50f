#!/usr/bin/env bash
# Install loo-table on Raspberry Pi OS (bookworm or trixie, 64-bit) on a Pi 4 or Pi 5.
#
# Idempotent: run it again after `git pull` to update; it keeps /etc/loo-table/config.toml, the
# system user and the ledger, and only does what is missing or out of date.
# `--dry-run` prints every step (as the command it would run) and changes nothing.
set -euo pipefail

PROG=install-pi.sh
SRC_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX=/opt/loo-table
CONFIG_DIR=/etc/loo-table
UNIT_DIR=/etc/systemd/system
SERVICE_USER=loo-table  # the units name this user
STATE_DIR=/var/lib/loo-table
# The oldest picamera2 whose capture timeout works (MIN_PICAMERA2 in vision/sources/picamera2.py).
MIN_PICAMERA2=0.3.20
DRY_RUN=0
START=1
# Overridable for tests and odd systems (documented in --help).
OS_RELEASE="${LOO_OS_RELEASE:-/etc/os-release}"
BOARD_MODEL_FILE="${LOO_BOARD_MODEL:-/proc/device-tree/model}"
ARCH="${LOO_ARCH:-}"

usage() {
  cat <<EOF
Usage: sudo deploy/install-pi.sh [--dry-run] [--no-start] [--prefix DIR] [--config-dir DIR]
                                 [--unit-dir DIR] [--os-release FILE] [--help]

Installs loo-table from this checkout ($SRC_DIR) on Raspberry Pi OS bookworm or trixie (arm64),
Pi 4 or Pi 5:
  1. apt packages: python3-venv, python3-pip, python3-picamera2 (at least $MIN_PICAMERA2; an older
     one is upgraded), python3-lgpio, sqlite3
  2. system user '$SERVICE_USER' in the gpio and video groups
  3. a virtual environment in PREFIX/venv with --system-site-packages (so apt's camera stack is
     visible) and pip constraints that keep apt's numpy (bookworm: numpy<2, opencv<4.12)
  4. CONFIG_DIR/config.toml from the shipped default (an existing file is never overwritten)
  5. systemd units: loo-table.service (enabled, restarted) and loo-table-backup.timer (nightly),
     written with this install's PREFIX and CONFIG_DIR

The app is built from a scratch copy of the checkout, so no root-owned build/ is left in it.

Options:
  --dry-run          print every step and change nothing (needs no root)
  --no-start         install and enable, but do not (re)start the service now
  --prefix DIR       where the venv and docs go (default: $PREFIX; not under /home or /root,
                     which the service cannot see)
  --config-dir DIR   where config.toml goes (default: $CONFIG_DIR)
  --unit-dir DIR     where the unit files go (default: $UNIT_DIR)
  --os-release FILE  read the OS release from FILE (default: /etc/os-release; env LOO_OS_RELEASE)
  -h, --help         show this help

Environment: LOO_BOARD_MODEL (file naming the board, default /proc/device-tree/model),
LOO_ARCH (Debian architecture, default: dpkg --print-architecture).
After installing: journalctl -u loo-table -f   (see docs/operations.md)
EOF
}

die() { echo "$PROG: $*" >&2; exit 1; }
say() { echo "== $*"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY_RUN=1 ;;
    --no-start) START=0 ;;
    --prefix) [ $# -ge 2 ] || die "--prefix needs a directory"; PREFIX="$2"; shift ;;
    --config-dir) [ $# -ge 2 ] || die "--config-dir needs a directory"; CONFIG_DIR="$2"; shift ;;
    --unit-dir) [ $# -ge 2 ] || die "--unit-dir needs a directory"; UNIT_DIR="$2"; shift ;;
    --os-release) [ $# -ge 2 ] || die "--os-release needs a file"; OS_RELEASE="$2"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
  shift
done

# The units get these paths written into them (sed), and systemd splits ExecStart= at spaces.
for dir in "$PREFIX" "$CONFIG_DIR"; do
  case "$dir" in
    /home|/home/*|/root|/root/*) die "$dir: the service runs with ProtectHome=yes and cannot see it; choose another directory" ;;
    /*) ;;
    *) die "$dir: give an absolute path" ;;
  esac
  [[ "$dir" =~ ^/[A-Za-z0-9._/+-]*$ ]] || die "$dir: use letters, digits and . _ / + - only (the path goes into the systemd units)"
done
VENV="$PREFIX/venv"
CONSTRAINTS="$PREFIX/constraints.txt"
CONFIG="$CONFIG_DIR/config.toml"

# run CMD...: do it, or in a dry run print it (shell-quoted, so the plan can be pasted).
run() {
  if [ "$DRY_RUN" = 1 ]; then
    printf '+'; printf ' %q' "$@"; printf '\n'
  else
    "$@"
  fi
}

# stage_source DIR: copy the checkout into DIR, without git, virtual environments and old builds.
# pip builds a source tree in place (setuptools writes build/ and *.egg-info beside pyproject.toml):
# run as root on the checkout itself, that leaves root-owned files a later `make` cannot replace.
stage_source() {
  if [ "$DRY_RUN" = 1 ]; then
    printf '+ copy %s to %s (without .git, .venv, build/, *.egg-info)\n' "$SRC_DIR" "$1"
  else
    mkdir -p "$1"
    tar -C "$SRC_DIR" --exclude=./.git --exclude=./.venv --exclude=./build --exclude='*.egg-info' -cf - . \
      | tar -C "$1" -xf -
  fi
}

# render_unit NAME: systemd/NAME with this install's prefix and config directory written in.
render_unit() {
  sed -e "s#/opt/loo-table#$PREFIX#g" -e "s#/etc/loo-table#$CONFIG_DIR#g" "$SRC_DIR/systemd/$1"
}

# write_file PATH MODE: write stdin to PATH atomically (or print it in a dry run).
write_file() {
  local path="$1" mode="$2" content
  content="$(cat)"
  if [ "$DRY_RUN" = 1 ]; then
    printf '+ write %s (mode %s):\n' "$path" "$mode"
    printf '%s\n' "$content" | sed 's/^/|   /'
  else
    printf '%s\n' "$content" > "$path.tmp"
    chmod "$mode" "$path.tmp"
    mv -f "$path.tmp" "$path"
  fi
}

# --- 0. where are we? ------------------------------------------------------------------------
[ -r "$OS_RELEASE" ] || die "cannot read $OS_RELEASE (not a Debian-based system?)"
# Read the two fields rather than sourcing the file: it is data, not a script.
os_field() { sed -n "s/^$1=//p" "$OS_RELEASE" | tr -d "\"'" | head -n 1; }
OS_ID="$(os_field ID)"
CODENAME="$(os_field VERSION_CODENAME)"
case "$OS_ID" in
  debian|raspbian) ;;
  *) die "unsupported OS '$OS_ID' in $OS_RELEASE: Raspberry Pi OS (debian) bookworm or trixie needed" ;;
esac
case "$CODENAME" in
  bookworm|trixie) ;;
  *) die "unsupported release '${CODENAME:-unknown}' in $OS_RELEASE: bookworm or trixie needed" ;;
esac
if [ -z "$ARCH" ]; then
  ARCH="$(dpkg --print-architecture 2>/dev/null || uname -m)"
fi
case "$ARCH" in
  arm64|aarch64) ;;
  *)
    if [ "$DRY_RUN" = 1 ]; then
      echo "warning: architecture $ARCH: the real install needs 64-bit Raspberry Pi OS (arm64)" >&2
    else
      die "architecture $ARCH: install the 64-bit Raspberry Pi OS (onnxruntime has no 32-bit ARM build)"
    fi ;;
esac
BOARD="$(tr -d '\0' < "$BOARD_MODEL_FILE" 2>/dev/null || true)"
case "$BOARD" in
  *"Raspberry Pi 5"*) BOARD_KIND=pi5 ;;
  *"Raspberry Pi 4"*|*"Compute Module 4"*) BOARD_KIND=pi4 ;;  # also matches the Pi 400
  *) BOARD_KIND=other
     echo "warning: board '${BOARD:-unknown}' is not a Pi 4 or Pi 5; continuing" >&2 ;;
esac
if [ "$DRY_RUN" = 0 ] && [ "$(id -u)" != 0 ]; then
  die "run as root (sudo $0), or use --dry-run to see the plan"
fi
[ -f "$SRC_DIR/pyproject.toml" ] || die "$SRC_DIR is not a loo-table checkout (no pyproject.toml)"
say "loo-table install: $OS_ID $CODENAME, $ARCH, board: ${BOARD:-unknown} ($BOARD_KIND), dry run: $DRY_RUN"

# --- 1. apt packages -----------------------------------------------------------------------
# picamera2 and lgpio come from apt: picamera2 needs apt's libcamera, and lgpio has no pip wheel
# for trixie's Python 3.13. gpiozero's lgpio pin factory is the one that works on a Pi 5.
APT_PACKAGES=(python3 python3-venv python3-pip python3-picamera2 python3-libcamera python3-lgpio
              python3-numpy sqlite3 ca-certificates)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
say "1. apt packages (${#missing[@]} missing)"
if [ ${#missing[@]} -gt 0 ]; then
  run env DEBIAN_FRONTEND=noninteractive apt-get update
  run env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi
# picamera2 before 0.3.20 ignores capture_request(wait=...): a stalled camera would hang the camera
# thread until the watchdog restarts the service (vision/sources/picamera2.py, MIN_PICAMERA2).
picamera2_version() { dpkg-query -W -f='${Version}' python3-picamera2 2>/dev/null || true; }
PICAMERA2_VERSION="$(picamera2_version)"
if [ -z "$PICAMERA2_VERSION" ]; then
  [ "$DRY_RUN" = 1 ] || die "python3-picamera2 is not installed after apt-get install; install it by hand and run again"
  echo "python3-picamera2: the version is checked once it is installed (at least $MIN_PICAMERA2)"
elif ! dpkg --compare-versions "$PICAMERA2_VERSION" ge "$MIN_PICAMERA2"; then
  echo "python3-picamera2 $PICAMERA2_VERSION is older than $MIN_PICAMERA2 (its capture timeout does not work): upgrading it"
  run env DEBIAN_FRONTEND=noninteractive apt-get update
  run env DEBIAN_FRONTEND=noninteractive apt-get install -y --only-upgrade python3-picamera2
  PICAMERA2_VERSION="$(picamera2_version)"
  if [ "$DRY_RUN" = 0 ] && ! dpkg --compare-versions "$PICAMERA2_VERSION" ge "$MIN_PICAMERA2"; then
    die "python3-picamera2 $PICAMERA2_VERSION is older than $MIN_PICAMERA2 even after an upgrade: a stalled camera would hang; update Raspberry Pi OS (sudo apt full-upgrade) and run again"
  fi
else
  echo "python3-picamera2 $PICAMERA2_VERSION (at least $MIN_PICAMERA2)"
fi

# --- 2. the service user ---------------------------------------------------------------------
say "2. system user $SERVICE_USER (groups gpio, video)"
if ! id -u "$SERVICE_USER" >/dev/null 2>&1; then
  run useradd --system --user-group --home-dir "$STATE_DIR" --no-create-home \
      --shell /usr/sbin/nologin --comment "loo-table card referee" "$SERVICE_USER"
fi
for group in gpio video; do
  if ! getent group "$group" >/dev/null 2>&1; then
    # Raspberry Pi OS ships both groups with udev rules; elsewhere the device nodes stay root's.
    run groupadd --system "$group"
  fi
  if ! id -nG "$SERVICE_USER" 2>/dev/null | tr ' ' '\n' | grep -qx "$group"; then
    run usermod --append --groups "$group" "$SERVICE_USER"
  fi
done

# --- 3. virtual environment and the app --------------------------------------------------------
say "3. virtual environment $VENV (--system-site-packages) and pip constraints"
run install -d -m 0755 "$PREFIX" "$PREFIX/docs"
# Keep pip from replacing apt's numpy: apt's picamera2 stack is compiled against it.
case "$CODENAME" in
  bookworm)
    # numpy 1.24 from apt; a numpy 2 in the venv breaks picamera2 ("numpy.dtype size changed"),
    # and opencv-python-headless 4.12+ requires numpy 2.
    write_file "$CONSTRAINTS" 0644 <<'EOF'
# loo-table pip constraints for Raspberry Pi OS bookworm (written by deploy/install-pi.sh)
numpy<2
opencv-python-headless<4.12
EOF
    ;;
  trixie)
    # numpy 2.x from apt; any numpy 2 wheel is ABI-compatible with it, numpy 1 is not.
    # opencv-python-headless 4.10 is the first built for numpy 2.
    write_file "$CONSTRAINTS" 0644 <<'EOF'
# loo-table pip constraints for Raspberry Pi OS trixie (written by deploy/install-pi.sh)
numpy>=2,<3
opencv-python-headless>=4.10
EOF
    ;;
esac
if [ ! -x "$VENV/bin/python" ]; then
  run python3 -m venv --system-site-packages "$VENV"
elif ! grep -q '^include-system-site-packages = true' "$VENV/pyvenv.cfg" 2>/dev/null; then
  die "$VENV exists without --system-site-packages; remove it and run again"
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1
if [ "$DRY_RUN" = 1 ]; then
  STAGE="${TMPDIR:-/tmp}/loo-table-build.XXXXXX"
else
  STAGE="$(mktemp -d "${TMPDIR:-/tmp}/loo-table-build.XXXXXX")"
  trap 'rm -rf "$STAGE"' EXIT
fi
stage_source "$STAGE/src"
# Install the dependencies within the constraints, then the app itself afresh (same version number
# after a `git pull` would otherwise count as "already satisfied").
run "$VENV/bin/pip" install --constraint "$CONSTRAINTS" "$STAGE/src"
run "$VENV/bin/pip" install --constraint "$CONSTRAINTS" --no-deps --force-reinstall "$STAGE/src"
# Fail now, not at the first game night, if the camera stack and GPIO are not visible in the venv.
run "$VENV/bin/python" -c "import numpy, cv2, onnxruntime, gpiozero, lgpio, picamera2; print('imports ok: numpy', numpy.__version__)"
run install -m 0644 "$SRC_DIR/docs/operations.md" "$SRC_DIR/docs/hardware.md" "$PREFIX/docs/"

# --- 4. the config ---------------------------------------------------------------------------
say "4. config $CONFIG"
run install -d -m 0750 -o root -g "$SERVICE_USER" "$CONFIG_DIR"
CALIBRATION="$STATE_DIR/calibration.json"
if [ -e "$CONFIG" ]; then
  echo "keeping the existing $CONFIG (never overwritten; the shipped default is $SRC_DIR/table/default_config.toml)"
else
  # The shipped default, with the camera calibration kept in the state directory: the service user
  # can write it there (`loo-table calibrate`), and the config directory stays root's.
  grep -q '^calibration = ""' "$SRC_DIR/table/default_config.toml" \
    || die "table/default_config.toml has no 'calibration = \"\"' line to point at $CALIBRATION"
  sed "s#^calibration = \"\"#calibration = \"$CALIBRATION\"#" "$SRC_DIR/table/default_config.toml" \
    | write_file "$CONFIG" 0640
  run chown "root:$SERVICE_USER" "$CONFIG"
fi
# A bad key is reported in one line now rather than by a failing service.
run "$VENV/bin/loo-table" pins --config "$CONFIG"

# --- 5. systemd units ------------------------------------------------------------------------
say "5. systemd units in $UNIT_DIR"
UNITS=(loo-table.service loo-table-backup.service loo-table-backup.timer)
[ -d "$UNIT_DIR" ] || run install -d -m 0755 "$UNIT_DIR"
for unit in "${UNITS[@]}"; do
  if ! render_unit "$unit" | cmp -s - "$UNIT_DIR/$unit"; then
    render_unit "$unit" | write_file "$UNIT_DIR/$unit" 0644
  fi
done
run systemctl daemon-reload
run systemctl enable loo-table.service loo-table-backup.timer
if [ "$START" = 1 ]; then
  run systemctl restart loo-table.service
  run systemctl start loo-table-backup.timer
fi
if [ ! -e "$CALIBRATION" ]; then
  echo "next: calibrate the camera (docs/operations.md, 'First start'); until then the service reports"
  echo "      'camera.calibration: ... does not exist' in: journalctl -u loo-table"
fi
say "done. Logs: journalctl -u loo-table -f; dashboard: http://$(hostname).local:8000"
