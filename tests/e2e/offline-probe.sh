#!/usr/bin/env bash
# e2e offline-probe: a node that fetches one host when its way to the web
# goes, told apart from that host dying (node-offline.c's control probe).
# Inside a network namespace of its own (unshare -n, loopback up) two
# sites are served: A (127.0.5.1:8080, an index linking 30 pages) and B
# (127.0.5.2:8080, one page). The crawl (depth 1, politeness.delay=0.2,
# so only A's one connection is busy after B's page) is cut by an
# "unreachable" routing rule (connections fail at once with no route, as
# on a machine whose uplink went; no packet is dropped silently):
#   1. cut: A and B both, for 12 s, once A served 27 requests, then healed.
#      A failure of A is held; nothing else runs, so the node probes B,
#      which fails too: cut off, the failures go back uncounted, and once
#      healed the crawl goes on. Checks: exit 0, all 31 pages of A and B's
#      page fetched with 200, no failed line, the summary counts the
#      cut-off and the probes.
#   2. dead: A alone, for good, once A served 26 requests (fetch.retries=0).
#      The probe to B answers: the web is there, so A's failures count as
#      usual. Checks: exit 0, A's pages not fetched before the cut have a
#      line with status 0 and an error, the summary counts no cut-off and
#      at least one probe.
# Without the probe a node fetching one host gave its URLs up when cut
# off: in case 1 each of A's last pages fails twice within the 12 s (its
# one retry spent) and is written as failed.
. "$(dirname "$0")/lib.sh"
for t in unshare ip; do
    command -v "$t" >/dev/null || { fail "$t is installed"; finish; }
done
[ "$(id -u)" -eq 0 ] || { fail "runs as root (unshare -n)"; finish; }

mkdir -p "$WORK/a" "$WORK/b"
{
    echo "<html><body><h1>A</h1>"
    for i in $(seq 1 30); do echo "<p>Page <a href=\"/p$i.html\">$i</a> of A.</p>"; done
    echo "</body></html>"
} >"$WORK/a/index.html"
for i in $(seq 1 30); do echo "<html><body><p>Page $i of A, some text.</p></body></html>" >"$WORK/a/p$i.html"; done
echo "<html><body><p>B has one page.</p></body></html>" >"$WORK/b/index.html"

# lines FILE: url, status, error of every line of a pages.jsonl
lines() { python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print("%s\t%s\t%s" % (r["url"], r["status"], r.get("error") or ""))' "$1"; }

# run_case NAME CUT_PREFIX AFTER SECONDS [dcrawl settings...]: serve A and
# B, crawl both, cut CUT_PREFIX once A served AFTER requests, heal after
# SECONDS (0: never); then show the cut and the summary, check the exit
# status, and list the merged lines in $WORK/NAME/lines
run_case() {
    local name=$1 cut=$2 after=$3 secs=$4
    shift 4
    mkdir -p "$WORK/$name"
    timeout 240 unshare -n bash -c '
        dir=$1 work=$2 dcrawl=$3 cut=$4 after=$5 secs=$6
        shift 6
        ip link set lo up || exit 90
        # the local table after the rule that cuts (its usual place is
        # first, where nothing can come before it)
        ip rule add pref 100 lookup local && ip rule del pref 0 lookup local || exit 91
        serve() { # serve DIR IP LOG
            ( for fd in /proc/$BASHPID/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-"; done
              cd "$1" && exec python3 -m http.server 8080 --bind "$2" 2>"$3" >/dev/null ) &
        }
        serve "$work/a" 127.0.5.1 "$dir/a.log"; sa=$!
        serve "$work/b" 127.0.5.2 "$dir/b.log"; sb=$!
        for ip in 127.0.5.1 127.0.5.2; do
            for i in $(seq 1 50); do
                python3 -c "import socket; socket.create_connection((\"$ip\", 8080), 1)" 2>/dev/null && break
                sleep 0.1
            done
        done
        "$dcrawl" crawl --depth 1 --out "$dir/out" --set politeness.delay=0.2 \
            --set noise.enabled=false "$@" http://127.0.5.1:8080/ http://127.0.5.2:8080/ \
            >"$dir/crawl.log" 2>"$dir/crawl.err" &
        crawl=$!
        for i in $(seq 1 300); do
            [ "$(grep -c "GET /p" "$dir/a.log")" -ge "$after" ] && break
            kill -0 $crawl 2>/dev/null || break
            sleep 0.05
        done
        ip rule add pref 10 to "$cut" unreachable
        echo "cut $cut after $(grep -c "GET /p" "$dir/a.log") requests of A" >"$dir/cut.txt"
        if [ "$secs" != 0 ]; then
            sleep "$secs"
            ip rule del pref 10 to "$cut" unreachable
            echo "healed after $secs s" >>"$dir/cut.txt"
        fi
        wait $crawl
        rc=$?
        kill $sa $sb; wait $sa $sb 2>/dev/null
        exit $rc' _ "$WORK/$name" "$WORK" "$DCRAWL" "$cut" "$after" "$secs" "$@"
    local rc=$?
    cat "$WORK/$name/cut.txt" "$WORK/$name/crawl.err"
    grep -E "^  (cut off|errors)" "$WORK/$name/crawl.log"
    check "$name: crawl exits 0 ($rc)" [ $rc -eq 0 ]
    lines "$WORK/$name/out/merged/pages.jsonl" >"$WORK/$name/lines"
}

# ---- 1. cut off from everything for 12 s, 3 pages of A left ----
run_case cut 127.0.5.0/24 27 12
ok=$(awk -F'\t' '$2 == 200' "$WORK/cut/lines" | wc -l)
bad=$(awk -F'\t' '$2 != 200' "$WORK/cut/lines" | wc -l)
check "cut: all 32 pages fetched with 200 ($ok), none failed ($bad)" [ "$ok" -eq 32 ] && [ "$bad" -eq 0 ]
check "cut: the cut was seen (summary: cut off from the web, control probes)" \
    grep -Eq "cut off from the web [1-9][0-9]* times: .* [1-9][0-9]* control probes" "$WORK/cut/crawl.log"
check "cut: the cut happened mid-crawl" grep -q "healed" "$WORK/cut/cut.txt"

# ---- 2. A dies, B still answers ----
run_case dead 127.0.5.1/32 26 0 --set fetch.retries=0
okA=$(awk -F'\t' '$2 == 200 && index($1, "http://127.0.5.1:8080/p") == 1' "$WORK/dead/lines" | wc -l)
failed=$(awk -F'\t' '$2 == 0 && $3 != "" && index($1, "http://127.0.5.1:8080/p") == 1' "$WORK/dead/lines" | wc -l)
check "dead: every page of A has one line: $okA fetched before the cut, $failed given up after" \
    [ "$failed" -ge 1 ] && [ $((okA + failed)) -eq 30 ] && [ "$(wc -l <"$WORK/dead/lines")" -eq 32 ]
check "dead: no cut-off, the probe answered" \
    grep -Eq "cut off from the web 0 times: 0 failures put back uncounted; [1-9][0-9]* control probes" "$WORK/dead/crawl.log"
finish
