#!/usr/bin/env bash
# Make sure `chromium` and `chromium-headless-shell` are on PATH for the browser tests: the
# Control UI's tests (tests/ui/browser) drive the headless shell, and so does the browser
# tool (tests/tools/browser) when headless, as a user's would; one of its tests names the
# full `chromium`, which a window needs. Playwright drives these
# system executables; its own browser download is not used. When one is missing, root on a
# Debian-like system gets both through apt (said first, on stderr); anyone else is told the
# one command to run.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 && command -v chromium-headless-shell >/dev/null 2>&1; then
    exit 0
fi
packages=(chromium chromium-headless-shell fonts-dejavu-core)
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-chromium: the browser tests need chromium, which is missing and needs root to" \
        "install: run 'sudo apt-get install ${packages[*]}' (or put a Chromium and its headless" \
        "shell on PATH as 'chromium' and 'chromium-headless-shell'), then 'make test' again" >&2
    exit 1
fi
echo "ensure-chromium: installing ${packages[*]} with apt for the browser tests" \
    "(once)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
command -v chromium >/dev/null && command -v chromium-headless-shell >/dev/null
