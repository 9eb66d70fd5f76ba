#!/usr/bin/env bash
# install.sh DIR: installs the pinned official MCP TypeScript SDK (@modelcontextprotocol/sdk)
# into DIR (a node_modules prefix), for tests/mcp_sdk/sdk_client.mjs.
#
# Idempotent: when DIR already holds the pinned version nothing is downloaded. Safe to run
# concurrently (parallel ctest): installs into one DIR are serialised with flock.
#
# Output: npm's chatter goes to stderr.
# Exit codes: 0 installed (or already there); 3 node or npm is missing, so the SDK test cannot
# run here (the message on stdout says what to install); anything else is a real failure.
set -euo pipefail

readonly SDK_PACKAGE="@modelcontextprotocol/sdk"
readonly SDK_VERSION="1.32.2"

if (($# != 1)); then
  echo "usage: install.sh DIR" >&2
  exit 2
fi
dir="$1"
if [[ "$dir" != /* ]]; then
  dir="$PWD/$dir"
fi
manifest="$dir/node_modules/$SDK_PACKAGE/package.json"

say() { printf 'mcp_sdk/install.sh: %s\n' "$*" >&2; }

missing=()
command -v node >/dev/null 2>&1 || missing+=(node)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if ((${#missing[@]} > 0)); then
  echo "mcp_sdk/install.sh: ${missing[*]} not found on PATH; the MCP SDK test needs Node.js and" \
    "npm to install $SDK_PACKAGE@$SDK_VERSION (Debian: apt-get install nodejs npm)"
  exit 3
fi

# True when DIR holds the pinned version.
installed() {
  [[ -f "$manifest" ]] || return 1
  local version
  version="$(node -e 'process.stdout.write(require(process.argv[1]).version)' "$manifest" \
    2>/dev/null)" || return 1
  [[ "$version" == "$SDK_VERSION" ]]
}

if installed; then
  say "$SDK_PACKAGE@$SDK_VERSION already installed in $dir"
  exit 0
fi

mkdir -p "$dir"
# One installer at a time per DIR; the others wait, then find it installed.
exec 9>"$dir/.install.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9
fi
if installed; then
  say "$SDK_PACKAGE@$SDK_VERSION installed in $dir meanwhile"
  exit 0
fi

say "installing $SDK_PACKAGE@$SDK_VERSION into $dir (node $(node --version), npm $(npm --version))"
start=$SECONDS
if ! npm install --no-audit --no-fund --save-exact --prefix "$dir" \
  "$SDK_PACKAGE@$SDK_VERSION" >&2; then
  say "npm install $SDK_PACKAGE@$SDK_VERSION failed (is the npm registry reachable?)"
  exit 1
fi
say "npm install took $((SECONDS - start)) s"

if ! installed; then
  say "npm finished but $manifest does not report version $SDK_VERSION"
  exit 1
fi
