#!/usr/bin/env bash
# Installs the Debian packages of ci/packages.txt, and nothing from anywhere else.
# Idempotent and quiet: when every package is already installed it does nothing at all.
set -euo pipefail
cd "$(dirname "$0")"

mapfile -t packages < <(grep -vE '^\s*(#|$)' packages.txt)
missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
