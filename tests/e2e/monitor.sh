#!/usr/bin/env bash
# e2e monitor: what a running crawl shows of itself.
#   - 3 node daemons crawl the 10 x 200 site (depth 2) against one
#     redis-server, each serving Prometheus metrics (--metrics): a scrape
#     while they run and one when the crawl is done pass `promtool check
#     metrics`; summed over the nodes, dcrawl_responses_total{class="2xx"}
#     equals the 2xx lines of the merged pages.jsonl; per node, responses
#     plus transport errors equal the pages `dcrawl status --json` shows
#     for it; the names exported are those docker/grafana/metric-names.txt
#     lists (the dashboard's queries are checked against that list);
#   - their logs (stderr not a terminal) hold plain "progress:" lines, the
#     output files none;
#   - `dcrawl crawl` on a pseudo-terminal (script -qc) redraws its line
#     (\r + erase), piped it prints "progress:" lines, -q prints none, and
#     its summary and its last progress line agree with pages.jsonl;
#   - a bad --metrics address is one line on stderr and exit 2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster-lib.sh"
S=$(site 10 200) || exit 1
cluster_serve "$S" || exit 1
redis_start mon || exit 1

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# scrape ID FILE: the node's /metrics into FILE (bounded)
scrape() { curl -sf --max-time 5 "http://127.0.0.1:${PORT[$1]}/metrics" -o "$2"; }
# metric FILE SERIES: the value of one series line (exact name{labels})
metric() { awk -v s="$2" '$1 == s { print $2; f = 1 } END { if (!f) print "none" }' "$1"; }
# sum of a metric's series (any labels) in FILE
metric_sum() {
    awk -v n="$2" '$1 == n || index($1, n "{") == 1 { t += $2 } END { printf "%d\n", t }' "$1"
}

declare -A PORT=()
"$DCRAWL" seed --redis "$R" --depth 2 "$S/roots.txt" >"$WORK/seed.log" 2>&1
check "seeds uploaded" [ $? -eq 0 ]
for id in n1 n2 n3; do
    PORT[$id]=$(free_port)
    node_start "$id" --metrics "127.0.0.1:${PORT[$id]}" --set output.progress_interval=0.3 \
        --set politeness.delay=0.02
done

# a scrape while the crawl runs (bounded wait for the first 2xx)
mid=none
for i in $(seq 1 100); do
    if scrape n1 "$WORK/n1.mid.prom" && [ "$(metric "$WORK/n1.mid.prom" 'dcrawl_responses_total{class="2xx"}')" != 0 ]; then
        mid=$(metric "$WORK/n1.mid.prom" 'dcrawl_responses_total{class="2xx"}')
        break
    fi
    sleep 0.1
done
echo "n1 mid-crawl: $mid 2xx responses"
check "a scrape while the crawl runs shows responses" [ "$mid" != none ]
check "promtool accepts the mid-crawl scrape" promtool check metrics <"$WORK/n1.mid.prom"

crawl_wait_done "$R" 240
check "the crawl finishes within 240 s" [ $? -eq 0 ]
sleep 1 # the nodes publish every 250 ms
"$DCRAWL" status --redis "$R" --json >"$WORK/status.json" 2>&1
sum2xx=0
for id in n1 n2 n3; do
    scrape "$id" "$WORK/$id.prom"
    check "promtool accepts node $id's final scrape" promtool check metrics <"$WORK/$id.prom"
    n=$(metric "$WORK/$id.prom" 'dcrawl_responses_total{class="2xx"}')
    sum2xx=$((sum2xx + ${n/none/0}))
    resp=$(($(metric_sum "$WORK/$id.prom" dcrawl_responses_total) +
        $(metric_sum "$WORK/$id.prom" dcrawl_fetch_errors_total)))
    st=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(next((x["pages"] for x in d["nodes"] if x["id"] == sys.argv[2]), "none"))' "$WORK/status.json" "$id")
    echo "node $id: metrics responses + transport errors $resp, status pages $st"
    check "node $id: metrics and dcrawl status count the same pages" [ "$resp" = "$st" ]
    check "node $id: node_info names it" grep -q "^dcrawl_node_info{node=\"$id\"" "$WORK/$id.prom"
done
# the names exported = the list the dashboard is checked against
names=$(grep -v '^#' "$WORK/n1.prom" | sed -E 's/[{ ].*//; s/_(bucket|sum|count)$//' | sort -u)
if [ -f "$SRC/docker/grafana/metric-names.txt" ]; then
    want=$(grep -v '^#' "$SRC/docker/grafana/metric-names.txt" | sed '/^$/d' | sort -u)
    missing=$(comm -13 <(echo "$names") <(echo "$want"))
    echo "dashboard names not exported: ${missing:-none}"
    check "every name docker/grafana/metric-names.txt lists is exported" [ -z "$missing" ]
fi
nodes_stop
check "SIGTERM: every node exits 0" [ "$NODES_STOP_RC" -eq 0 ]

# merge the three nodes' outputs (one folder per depth, every node's files)
for id in n1 n2 n3; do
    for d in "$WORK/$id"/depth-*; do
        mkdir -p "$WORK/all/${d##*/}" && ln "$d"/* "$WORK/all/${d##*/}/"
    done
done
"$DCRAWL" merge "$WORK/all" >"$WORK/merge.log" 2>&1
check "the nodes' outputs merge" [ $? -eq 0 ]
lines=$(python3 -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) if 200 <= json.loads(l)["status"] < 300))' "$WORK/all/merged/pages.jsonl")
echo "2xx: metrics summed over nodes $sum2xx, merged pages.jsonl $lines"
check "sum of dcrawl_responses_total{class=2xx} = 2xx lines of merged pages.jsonl" [ "$sum2xx" = "$lines" ]
check "node logs hold plain progress lines" grep -q '^progress: depth [0-9]' "$WORK/n1.log"
check "no progress text in the output files" \
    bash -c "! grep -rqs 'progress:' '$WORK'/n1/depth-* '$WORK'/all/merged"

# dcrawl crawl: terminal, pipe, -q
root=$(head -1 "$S/roots.txt")
script -qc "'$DCRAWL' crawl --depth 1 --out '$WORK/tty' --set politeness.delay=0.15 $root" \
    "$WORK/tty.typescript" >/dev/null 2>&1
check "on a terminal the progress line is redrawn" \
    grep -qa "$(printf '\r\033\\[K')depth [0-9] |" "$WORK/tty.typescript"
"$DCRAWL" crawl --depth 1 --out "$WORK/pipe" --set politeness.delay=0.02 \
    --set output.progress_interval=0.2 "$root" >"$WORK/pipe.out" 2>"$WORK/pipe.err"
check "piped: plain progress lines on stderr" grep -q '^progress: depth [0-9] |' "$WORK/pipe.err"
check "piped: no terminal escapes" bash -c "! grep -qa \$'\\033' '$WORK/pipe.err'"
p200=$(python3 -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["status"] == 200))' "$WORK/pipe/merged/pages.jsonl")
s200=$(sed -nE 's/.* ([0-9]+) fetched with a 2xx status.*/\1/p' "$WORK/pipe.out")
last=$(grep '^progress:' "$WORK/pipe.err" | tail -1 | sed -nE 's/.*\| [0-9]+ responses \(([0-9]+) 2xx\).*/\1/p')
echo "crawl: pages.jsonl 200s $p200, summary 2xx $s200, last progress line 2xx $last"
check "summary 2xx = pages.jsonl 200s" [ "$s200" = "$p200" ]
check "the last progress line does not count more than the summary" [ "${last:-0}" -le "$s200" ]
"$DCRAWL" crawl -q --depth 1 --out "$WORK/quiet" --set politeness.delay=0.02 \
    --set output.progress_interval=0.2 "$root" >"$WORK/quiet.out" 2>"$WORK/quiet.err"
check "-q: no progress lines" bash -c "! grep -q 'progress' '$WORK/quiet.err' '$WORK/quiet.out'"

"$DCRAWL" crawl --depth 0 --out "$WORK/bad" --metrics 300.1.2.3:99 "$root" >"$WORK/bad.out" 2>"$WORK/bad.err"
rc=$?
cat "$WORK/bad.err"
check "bad --metrics address: exit 2" [ $rc -eq 2 ]
check "bad --metrics address: one line on stderr" [ "$(wc -l <"$WORK/bad.err")" -eq 1 ]
serve_stop
finish
