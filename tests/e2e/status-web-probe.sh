#!/usr/bin/env bash
# status-web-probe.sh DCRAWL REDIS_URL DIR: the browser side of
# e2e-status-web, run by status-web.sh inside a network namespace of its
# own (unshare -n: only lo, brought up here), so neither the status server
# nor Chromium can reach anything but loopback; Redis is reached on its
# unix socket. Writes into DIR:
#   server.err          `dcrawl status --http 127.0.0.1:0` stderr (its URL)
#   status1.json        /status.json before the page loads
#   dom1.html dom2.html the page's DOM from headless Chromium, 4 s apart
#   refresh.html        the DOM after the page refreshed itself (a load
#                       with a virtual time budget of 3 refreshes)
#   cli.json status2.json  `dcrawl status --json`, then /status.json
#   status-page.png     a 1280x900 screenshot
#   server.rc           the server's exit status after SIGTERM
# Every step is bounded (timeout); exit 0 when the steps ran, the checks
# are status-web.sh's.
set -uo pipefail
DCRAWL=$1 R=$2 D=$3
ip link set lo up || exit 90
"$DCRAWL" status --redis "$R" --http 127.0.0.1:0 --interval 1 2>"$D/server.err" &
srv=$!
url=
for _ in $(seq 1 100); do
    url=$(grep -o 'http://[^ ]*' "$D/server.err" 2>/dev/null | head -1)
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { echo "probe: the status server printed no URL" >&2; kill $srv; exit 91; }

# chromium_run NAME ARG...: headless Chromium, its own profile and HOME,
# no background traffic; bounded by 90 s
chromium_run() {
    local name=$1
    shift
    mkdir -p "$D/chrome-$name"
    HOME=$D/chrome-$name timeout 90 chromium --headless=new --no-sandbox --disable-gpu \
        --disable-dev-shm-usage --no-first-run --disable-background-networking \
        --disable-component-update --disable-sync --user-data-dir="$D/chrome-$name/profile" \
        "$@" 2>>"$D/chromium.log"
}

curl -s -m 10 "${url}status.json" >"$D/status1.json"
chromium_run dom1 --virtual-time-budget=1500 --dump-dom "$url" >"$D/dom1.html"
sleep 4
chromium_run dom2 --virtual-time-budget=1500 --dump-dom "$url" >"$D/dom2.html"
chromium_run refresh --virtual-time-budget=3500 --dump-dom "$url" >"$D/refresh.html"
chromium_run shot --hide-scrollbars --window-size=1280,900 --virtual-time-budget=1500 \
    --screenshot="$D/status-page.png" "$url" >/dev/null
timeout 30 "$DCRAWL" status --redis "$R" --json >"$D/cli.json"
curl -s -m 10 "${url}status.json" >"$D/status2.json"
kill -TERM $srv
for _ in $(seq 1 100); do kill -0 $srv 2>/dev/null || break; sleep 0.1; done
kill -9 $srv 2>/dev/null
wait $srv
echo $? >"$D/server.rc"
exit 0
