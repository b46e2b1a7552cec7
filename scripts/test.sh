#!/usr/bin/env bash
# The whole test suite on a fresh machine (README.md, "Tests"): installs what the tests need and
# is missing, where it can, then runs `npm test` on Node.js 22.
#
# Needs: Node.js 20 or later with npm, and network access to npm's registry. The tests also
# start redis-server, nats-server (JetStream) and Debian's chromium: whichever is missing is
# installed with apt-get (as root, or through sudo without a password); elsewhere, install them
# first. Node 22 comes from npm's `node` package when the machine's node is older
# (scripts/with-node22.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v nats-server >/dev/null 2>&1 || missing+=(nats-server)
[ -x /usr/bin/chromium ] || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo -n)
  if ! command -v apt-get >/dev/null 2>&1 || ! "${sudo[@]}" true 2>/dev/null; then
    echo "scripts/test.sh: missing ${missing[*]}; install them (Debian: apt-get install ${missing[*]}) and run again" >&2
    exit 1
  fi
  echo "scripts/test.sh: installing ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Dependencies: installed when absent, or older than the lockfile.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  scripts/with-node22.sh npm ci --no-audit --no-fund
fi

scripts/with-node22.sh npm test
