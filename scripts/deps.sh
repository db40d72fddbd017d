#!/usr/bin/env bash
# Installs what poot's build and tests need on Debian 12: the apt packages
# listed in scripts/deps/apt-*.txt and the PyPI packages in scripts/deps/pip-*.txt
# (one name a line, '#' comments). Idempotent and quiet when all is present.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
list() { cat "$here"/deps/$1-*.txt 2>/dev/null | sed 's/#.*//' | tr -s ' \t' '\n' | sed '/^$/d' | sort -u; }

apt_pkgs=$(list apt)
missing=()
for p in $apt_pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing apt packages: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

pip_pkgs=$(list pip)
if [ -n "$pip_pkgs" ]; then
  py=${PYTHON:-python3}
  need=()
  for p in $pip_pkgs; do
    name=${p%%[<>=!]*}
    $py -m pip show -q "$name" >/dev/null 2>&1 || need+=("$p")
  done
  if [ ${#need[@]} -gt 0 ]; then
    echo "deps: installing pip packages: ${need[*]}"
    $py -m pip install -q --disable-pip-version-check --root-user-action=ignore "${need[@]}"
  fi
fi
