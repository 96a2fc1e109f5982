# polite-lib.sh: helpers for the tests that run tests/e2e/polite_server.py
# (sourced after lib.sh). The server is stopped by the EXIT trap.
SERVER_PIDS=()
polite_cleanup() {
    local p
    for p in "${SERVER_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    cleanup
}
trap polite_cleanup EXIT

# pserve NAME SITE_JSON: start the server in $WORK/NAME; sets SDIR
pserve() {
    SDIR=$WORK/$1
    mkdir -p "$SDIR"
    printf '%s' "$2" >"$SDIR/site.json"
    python3 "$SRC/tests/e2e/polite_server.py" "$SDIR/site.json" "$SDIR" --max-seconds 240 \
        >"$SDIR/server.log" 2>&1 &
    SERVER_PIDS+=($!)
    local i
    for i in $(seq 1 100); do [ -s "$SDIR/origins.json" ] && break; sleep 0.05; done
    [ -s "$SDIR/origins.json" ] || { cat "$SDIR/server.log" >&2; return 1; }
}

# fanout_site IP_A IP_B B_PAGE: the JSON of a site of two origins: a's
# root links to b's /p1 ... /p12; b serves those 12 pages and B_PAGE (one
# more page, '"PATH": {...}')
fanout_site() {
    local links='"{b}/p1"' pages=$3 i
    for i in $(seq 2 12); do links+=", \"{b}/p$i\""; done
    for i in $(seq 1 12); do pages+=", \"/p$i\": {}"; done
    printf '{"origins": {"a": {"ip": "%s", "pages": {"/": {"links": [%s]}}},\n "b": {"ip": "%s", "pages": {%s}}}}' \
        "$1" "$links" "$2" "$pages"
}

# origin NAME: "IP:PORT" of an origin of the server in $SDIR
origin() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$SDIR/origins.json" "$1"; }

# pstop: stop the last server (its log is complete afterwards)
pstop() {
    local last=$((${#SERVER_PIDS[@]} - 1))
    kill "${SERVER_PIDS[$last]}" 2>/dev/null
    wait "${SERVER_PIDS[$last]}" 2>/dev/null
    unset "SERVER_PIDS[$last]"
}

# pcrawl WHAT DEPTH [SETTING...]: crawl $SDIR/seeds.txt to DEPTH with
# COMMON and each SETTING (--set), stop the last server and check that the
# crawl exited 0 (its log shown when not)
pcrawl() {
    local what=$1 depth=$2 rc sets=()
    shift 2
    for s in "$@"; do sets+=(--set "$s"); done
    timeout 120 "$DCRAWL" crawl --seeds "$SDIR/seeds.txt" --depth "$depth" --out "$SDIR/out" \
        "${COMMON[@]}" "${sets[@]}" >"$SDIR/crawl.log" 2>&1
    rc=$?
    pstop
    check "$what: crawl exits 0" [ $rc -eq 0 ] || cat "$SDIR/crawl.log"
}

# pycheck DESCRIPTION PYTHON: run PYTHON with `reqs` (the request log, a
# list of dicts sorted by start), `org` (name -> "IP:PORT") and the
# helpers by, paths, gaps and overlap; the check
# passes when it prints nothing and exits 0; what it prints is shown.
pycheck() {
    local what=$1 out
    out=$(python3 -c '
import json, sys
reqs = sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda r: r["start"])
org = json.load(open(sys.argv[2]))
def by(name): return [r for r in reqs if r["origin"] == name]
def paths(name): return [r["path"] for r in by(name)]
def gaps(name, least):  # prints each gap (end -> next start) under least s
    rs = by(name)
    for a, b in zip(rs, rs[1:]):
        if b["start"] - a["end"] < least:
            print(name, a["path"], "->", b["path"], "gap %.4f s" % (b["start"] - a["end"]))
def overlap(rs):
    ev = sorted([(r["start"], 1) for r in rs] + [(r["end"], -1) for r in rs])
    cur = best = 0
    for _, d in ev:
        cur += d
        best = max(best, cur)
    return best
exec(sys.argv[3])
' "$SDIR/requests.jsonl" "$SDIR/origins.json" "$2")
    local rc=$?
    [ -n "$out" ] && echo "    $out"
    if [ $rc -eq 0 ] && [ -z "$out" ]; then ok "$what"; else fail "$what"; fi
}
