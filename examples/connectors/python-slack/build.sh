#!/usr/bin/env bash
# Builds this Python connector into a Quarry component:
#   OUT/python-slack.wasm + OUT/python-slack.toml   (OUT: $1, default ./build)
# with componentize-py (pinned and hash-checked in requirements.txt),
# installed into a venv of its own ($PY_TOOLS, default ./.tools).
#
# Every WASI import of the component (componentize-py links all of WASI
# 0.2) is answered by the host's deny-all WASI: no files, no environment,
# no sockets, output discarded. The only way out is quarry:connector/http.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(realpath -m "${1:-$here/build}")"
tools="$(realpath -m "${PY_TOOLS:-$here/.tools}")"
wit="$(realpath -m "${QUARRY_WIT:-$here/../../../wit/v1}")"

want="$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
if [ ! -x "$tools/bin/componentize-py" ] || [ "$(cat "$tools/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
    if [ -n "${QUARRY_NO_INSTALL:-}" ]; then
        echo "build.sh: componentize-py is not installed as pinned and QUARRY_NO_INSTALL is set" >&2
        exit 1
    fi
    rm -rf "$tools"
    python3 -m venv "$tools"
    "$tools/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        --require-hashes --only-binary :all: -r "$here/requirements.txt"
    echo "$want" > "$tools/.requirements.sha256"
fi

mkdir -p "$out"
start=$(date +%s%N)
"$tools/bin/componentize-py" -d "$wit" -w connector componentize \
    -p "$here" app -o "$out/python-slack.wasm" >/dev/null
ms=$(( ($(date +%s%N) - start) / 1000000 ))
cp "$here/connector.toml" "$out/python-slack.toml"
printf 'built python-slack: %s (%s bytes) in %s ms with %s\n' \
    "$out/python-slack.wasm" "$(stat -c %s "$out/python-slack.wasm")" "$ms" \
    "$("$tools/bin/componentize-py" --version)"
