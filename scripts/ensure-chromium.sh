#!/usr/bin/env bash
# Make sure a `chromium` is on PATH for the browser tests (tests/ui/browser).
# Playwright drives this system executable; its own browser download is not used. When it is
# missing, root on a Debian-like system gets Debian's `chromium` through apt (said first, on
# stderr); anyone else is told the one command to run.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
packages=(chromium fonts-dejavu-core)
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-chromium: the browser tests need chromium, which is missing and needs root to" \
        "install: run 'sudo apt-get install ${packages[*]}' (or put any Chromium on PATH as" \
        "'chromium'), then 'make test' again" >&2
    exit 1
fi
echo "ensure-chromium: installing ${packages[*]} with apt for the browser tests" \
    "(once)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
command -v chromium >/dev/null
