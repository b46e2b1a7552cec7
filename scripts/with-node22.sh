#!/usr/bin/env bash
# Runs a command with Node.js 22 first on PATH, so `node`, `npm` and everything they start run
# on 22: the machine's own node when it is 22 or later, else the binary of npm's `node` package
# (fetched once by npx into its cache).
#
#   scripts/with-node22.sh npm test
set -euo pipefail

# The Node 22 release the suite is run on when the machine has an older one.
NODE22_PACKAGE=node@22.23.3

if [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -lt 22 ]; then
  node22=$(npx --yes "$NODE22_PACKAGE" -p process.execPath)
  PATH="$(dirname "$node22"):$PATH"
  export PATH
fi
exec "$@"
