#!/usr/bin/env bash
# Builds this JavaScript connector into a Quarry component:
#   OUT/js-notion.wasm + OUT/js-notion.toml   (OUT: $1, default ./build)
# with `jco componentize` (pinned in package.json, locked with integrity
# hashes in package-lock.json), installed by npm into $NODE_TOOLS (default
# ./.tools). (`npm install` from the lock file rather than `npm ci`: npm 11's
# `ci` refuses lock files that hold other platforms' optional packages.)
#
# Flags: `--disable http fetch-event` leaves out the engine's own fetch(),
# which would import wasi:http (refused by the host: the only way out is
# quarry:connector/http). stdio, clocks and random stay: their WASI imports
# are answered by the host's deny-all WASI (output discarded), so
# console.log, Date.now() and Math.random() work.
# package.json pins @bytecodealliance/preview2-shim 0.25.0: with the 0.26.1
# jco 1.35.0 pulls in, `jco componentize` cannot read the WIT folder
# ("failed to get path metadata ... os error 44").
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(realpath -m "${1:-$here/build}")"
tools="$(realpath -m "${NODE_TOOLS:-$here/.tools}")"
wit="$(realpath -m "${QUARRY_WIT:-$here/../../../wit/v1}")"

if [ ! -x "$tools/node_modules/.bin/jco" ] || ! cmp -s "$here/package-lock.json" "$tools/.package-lock.source"; then
    if [ -n "${QUARRY_NO_INSTALL:-}" ]; then
        echo "build.sh: jco is not installed as locked and QUARRY_NO_INSTALL is set" >&2
        exit 1
    fi
    rm -rf "$tools"
    mkdir -p "$tools"
    cp "$here/package.json" "$here/package-lock.json" "$tools/"
    (cd "$tools" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
    cp "$here/package-lock.json" "$tools/.package-lock.source"
fi

mkdir -p "$out"
start=$(date +%s%N)
"$tools/node_modules/.bin/jco" componentize "$here/connector.js" \
    --wit "$wit" --world-name connector \
    --disable http fetch-event \
    --out "$out/js-notion.wasm" >/dev/null
ms=$(( ($(date +%s%N) - start) / 1000000 ))
cp "$here/connector.toml" "$out/js-notion.toml"
printf 'built js-notion: %s (%s bytes) in %s ms with jco %s\n' \
    "$out/js-notion.wasm" "$(stat -c %s "$out/js-notion.wasm")" "$ms" \
    "$("$tools/node_modules/.bin/jco" --version)"
