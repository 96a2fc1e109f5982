#!/usr/bin/env bash
# deps.sh: install what dcrawl needs to build, test, bench and demo on
# Debian 12 (apt-get; run as root). Installs only what is missing.
#
# deps.sh --check: install nothing; check that every command the build,
# the tests (tests/), scripts/ and bench/ run is on PATH, print one line
# "missing tool: X (install: apt-get install P)" per missing one and exit 1
# if any is missing (scripts/test.sh runs it after installing, so CI stops
# at once, naming the tool, instead of failing a test half-way through).
#
# TOOLS is the one list of commands and the package that provides each;
# keep it in step with what the scripts call (a fresh Debian 12 lacks bc,
# curl, nginx, node ...). The crawlers that bench/crawl-bench.sh compares
# (HTTrack, Scrapy, Crawlee) are set up by that bench, not here.
set -euo pipefail

# command:package
TOOLS=(
    cc:build-essential make:build-essential cmake:cmake pkg-config:pkg-config
    redis-server:redis-server redis-cli:redis-tools redis-sentinel:redis-sentinel
    nginx:nginx-light
    python3:python3 curl:curl openssl:openssl wget:wget bc:bc
    unshare:util-linux flock:util-linux setsid:util-linux ip:iproute2
    mount:mount umount:mount df:coreutils dd:coreutils sha1sum:coreutils
    ps:procps pkill:procps getconf:libc-bin awk:mawk gzip:gzip zcat:gzip
    timeout:coreutils docker-compose:docker-compose node:nodejs npm:npm
    promtool:prometheus script:bsdutils chromium:chromium clang:clang
    faketime:faketime
)
# libraries (no command to look for): headers and pkg-config files, and
# python3-hpack (HTTP/2 header blocks for tests/e2e/hostile2_server.py)
LIBS=(libcurl4-openssl-dev libgumbo-dev libhiredis-dev libssl-dev zlib1g-dev
      libdeflate-dev libisal-dev libpsl-dev libmicrohttpd-dev python3-hpack
      # libFuzzer (libclang_rt.fuzzer-x86_64.a) for tests/fuzz/, clang 14's
      libclang-rt-14-dev)

check_tools() {
    local t missing=0
    for t in "${TOOLS[@]}"; do
        if ! command -v "${t%%:*}" >/dev/null 2>&1; then
            echo "missing tool: ${t%%:*} (install: apt-get install ${t#*:})" >&2
            missing=1
        fi
    done
    return $missing
}

if [ "${1:-}" = --check ]; then
    check_tools
    exit $?
fi

pkgs=("${LIBS[@]}")
for t in "${TOOLS[@]}"; do
    p=${t#*:}
    # installed with node when node is missing (NodeSource's nodejs has npm)
    case $p in nodejs|npm) command -v node >/dev/null 2>&1 && continue ;; esac
    [[ " ${pkgs[*]} " == *" $p "* ]] || pkgs+=("$p")
done
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
