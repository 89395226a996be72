#!/bin/sh
# Installs the Debian packages dvicontact needs, if any is missing.
# Run as root (or with sudo available); does nothing when all are present.
set -e
PKGS="meson ninja-build python3 pkg-config gcc libc6-dev libsuitesparse-dev libopenblas0-serial liblapacke-dev libcjson-dev libcmocka-dev libhdf5-dev libfclib-dev zlib1g-dev"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing"
if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "error: missing packages:$missing (run as root or install them)" >&2
    exit 1
fi
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
