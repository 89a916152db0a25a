#!/usr/bin/env bash
# Validates docker-compose.yml (default, demo and workers profiles) with whichever compose client exists.
# No Docker engine is needed for `config`. Where no client is installed and apt can add the
# Debian one, it is installed; otherwise the check says it was skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

compose=()
if docker compose version >/dev/null 2>&1; then compose=(docker compose)
elif command -v docker-compose >/dev/null 2>&1; then compose=(docker-compose)
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "compose: installing Debian's docker-compose to validate the file"
  if timeout 240 bash -c 'apt-get update -qq >/dev/null 2>&1; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-compose >/dev/null 2>&1'; then
    compose=(docker-compose)
  fi
fi
if [ ${#compose[@]} -eq 0 ]; then
  echo "compose: skipped (no docker compose client could be found or installed)"
  exit 0
fi
"${compose[@]}" -f docker-compose.yml config -q
"${compose[@]}" -f docker-compose.yml --profile demo config -q
"${compose[@]}" -f docker-compose.yml --profile workers config -q
echo "compose: docker-compose.yml is valid (default, demo and workers profiles) with ${compose[*]}"
