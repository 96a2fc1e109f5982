#!/usr/bin/env bash
# deps.sh: install what dcrawl needs to build, test and demo on Debian 12
# (apt-get; run as root). Installs only what is missing.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libcurl4-openssl-dev libgumbo-dev
      libhiredis-dev libssl-dev zlib1g-dev libdeflate-dev libpsl-dev redis-server nginx-light python3
      curl procps docker-compose openssl util-linux)
command -v node >/dev/null 2>&1 || pkgs+=(nodejs npm)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "deps: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
