#!/usr/bin/env bash
# The system packages `make test` needs, with one apt run: Debian's `chromium` and
# `chromium-headless-shell` (and a font) for the browser tests, `bubblewrap` for the sandbox
# tests and `postgresql` for the store tests. Each is checked as its own script checks it
# (scripts/ensure-chromium.sh, scripts/ensure-bubblewrap.sh, scripts/pg-test-env); only what
# is missing is installed, said first on stderr. Without root (or without apt) those scripts
# say what to run.
set -euo pipefail
here="${BASH_SOURCE[0]%/*}"
missing=()
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromium-headless-shell >/dev/null 2>&1; then
    missing+=(chromium chromium-headless-shell fonts-dejavu-core)
fi
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
# A given CLAWCELL_TEST_POSTGRES_DSN is used instead of a local server (scripts/pg-test-env).
if [ -z "${CLAWCELL_TEST_POSTGRES_DSN:-}" ]; then
    compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
fi
if [ "${#missing[@]}" -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    "$BASH" "$here/ensure-chromium.sh" || true
    "$BASH" "$here/ensure-bubblewrap.sh" || true
    if [[ " ${missing[*]} " == *" postgresql "* ]]; then
        echo "ensure-test-system: the store tests need a PostgreSQL server, which is missing" \
            "and needs root to install: run 'sudo apt-get install postgresql', or set" \
            "CLAWCELL_TEST_POSTGRES_DSN to a PostgreSQL you may create schemas in" >&2
    fi
    exit 1
fi
echo "ensure-test-system: installing ${missing[*]} with apt for the tests (once)" >&2
# No default cluster: the postgresql package would otherwise create and start one on 5432.
if [[ " ${missing[*]} " == *" postgresql "* && ! -e /etc/postgresql-common/createcluster.conf ]]; then
    mkdir -p /etc/postgresql-common
    echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
