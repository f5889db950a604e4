#!/usr/bin/env bash
# Make sure Debian's bubblewrap is installed for the shell sandbox tests (tests/tools/test_shell_sandbox.py).
# `exec` runs commands inside `bwrap` when it works; those tests use `sandbox = "required"`.
set -euo pipefail
if command -v bwrap >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "bwrap is missing: install Debian's 'bubblewrap' package (apt-get install bubblewrap)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null
command -v bwrap >/dev/null
