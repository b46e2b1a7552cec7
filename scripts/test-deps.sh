#!/usr/bin/env bash
# What the test suite needs beside npm's packages (README.md, "Tests"): redis-server,
# nats-server (JetStream) and Debian's chromium. Whichever is missing is installed with apt-get
# (as root, or through sudo without a password); elsewhere it says what to install. Runs before
# `npm test` (its `pretest`) and in `.ci/run`; with everything there it only looks.
set -euo pipefail

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v nats-server >/dev/null 2>&1 || missing+=(nats-server)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo -n)
if ! command -v apt-get >/dev/null 2>&1 || ! "${sudo[@]}" true 2>/dev/null; then
  echo "scripts/test-deps.sh: missing ${missing[*]}; install them (Debian: apt-get install ${missing[*]}) and run again" >&2
  exit 1
fi
echo "scripts/test-deps.sh: installing ${missing[*]}"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
