#!/usr/bin/env bash
# Installs what Bubblescope needs on Debian 12 (apt-get, no recommends).
# Idempotent: silent and quick when everything is already present.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libsqlite3-dev libopenmpi-dev openmpi-bin libopenblas-dev
  nlohmann-json3-dev zlib1g-dev libcli11-dev libgtest-dev libbenchmark-dev
  qt6-base-dev qt6-svg-dev libqcustomplot-dev libqcustomplot2.1-qt6 xvfb xauth
  librsvg2-bin  # rsvg-convert: the e2e GUI test renders the exported SVG with it
  jq  # the predict end-to-end CLI test reads the calibration's JSON with it
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "Installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
  "${missing[@]}" >/dev/null
