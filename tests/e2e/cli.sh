#!/usr/bin/env bash
# e2e cli: help for every command; bad seed lines reported with their line
# numbers while the valid ones load; an unreachable Redis is a one-line
# error with exit status 2 (never a crash); bad settings are refused.
# The option tables (crawler/options.c): --opt=value, -h only where an
# option stands, unknown option / missing value / out-of-range number as
# one line + usage with exit 2, 300 seed files all loaded; `dcrawl config`
# and --show-origin; `dcrawl --version` is conf.h's DCRAWL_VERSION.
. "$(dirname "$0")/lib.sh"
redis_start cli || exit 1

"$DCRAWL" --help >"$WORK/help" 2>&1
check "dcrawl --help exits 0" [ $? -eq 0 ]
for c in crawl seed node merge status dedup robots config; do
    check "dcrawl --help lists $c" grep -q "^  $c " "$WORK/help"
    "$DCRAWL" $c --help >"$WORK/help-$c" 2>&1
    check "dcrawl $c --help exits 0 and shows usage" grep -q "^usage: dcrawl $c" "$WORK/help-$c"
done
for o in --seeds --depth --out --redis --config --set; do
    check "crawl --help documents $o" grep -q -- "$o" "$WORK/help-crawl"
done
check "node --help documents --exit-when-idle" grep -q -- "--exit-when-idle" "$WORK/help-node"

long="http://127.0.1.1:8080/$(head -c 3000 /dev/zero | tr '\0' a)"
{
    echo "# seeds with problems"
    echo ""
    echo "http://127.0.1.1:8080/"
    echo "garbage line"
    echo "ftp://127.0.1.1/file"
    echo "   http://127.0.1.2:8080/a.html   "
    echo "$long"
    echo "javascript:alert(1)"
    echo "http://127.0.1.1:99999/"
    echo "HTTP://127.0.1.3:8080/./x/../"
    echo "http://127.0.1.1:8080/#again"
} >"$WORK/seeds.txt"
"$DCRAWL" seed --redis "$R" "$WORK/seeds.txt" >"$WORK/seed.out" 2>"$WORK/seed.err"
rc=$?
cat "$WORK/seed.out" "$WORK/seed.err"
check "seed with bad lines exits 0" [ $rc -eq 0 ]
check "3 accepted, 1 already seen, 5 rejected" grep -q "^seeds: 3 accepted, 1 already seen, 5 rejected" "$WORK/seed.out"
for ln in 4 5 7 8 9; do
    check "bad line $ln reported with its number" grep -q "seeds.txt:$ln: " "$WORK/seed.err"
done
check "exactly 5 lines of complaints" [ "$(wc -l <"$WORK/seed.err")" -eq 5 ]
check "the overlong line is shown cut, not whole" [ "$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$WORK/seed.err")" -lt 300 ]
printf 'http://127.0.1.4:8080/\n\0bad\nhttp://127.0.1.5:8080/\n' >"$WORK/nul.txt"
"$DCRAWL" seed --redis "$R" "$WORK/nul.txt" >"$WORK/nul.out" 2>&1
check "NUL byte line rejected, others load" grep -q "^seeds: 2 accepted, 0 already seen, 1 rejected" "$WORK/nul.out"
printf 'http://127.0.1.6:8080/\n' | "$DCRAWL" seed --redis "$R" - >"$WORK/stdin.out" 2>&1
check "seeds from stdin" grep -q "^seeds: 1 accepted" "$WORK/stdin.out"

for cmd in "seed --redis redis://127.0.0.1:1 $WORK/seeds.txt" \
           "node --redis redis://127.0.0.1:1 --out $WORK/o1 --exit-when-idle" \
           "crawl --redis redis://127.0.0.1:1 --out $WORK/o2 http://127.0.1.1:8080/" \
           "seed --redis unix://$WORK/nonexistent.sock $WORK/seeds.txt"; do
    timeout 20 "$DCRAWL" $cmd >"$WORK/unreach.out" 2>"$WORK/unreach.err"
    rc=$?
    check "unreachable redis ($cmd): exit 2" [ $rc -eq 2 ]
    check "unreachable redis: one line on stderr" [ "$(wc -l <"$WORK/unreach.err")" -eq 1 ]
    cat "$WORK/unreach.err"
done
# redis.connect_wait: node keeps trying (one line says so), then gives up
timeout 20 "$DCRAWL" node --redis redis://127.0.0.1:1 --out "$WORK/o3" --exit-when-idle \
    --set redis.connect_wait=1.5 >/dev/null 2>"$WORK/wait.err"
rc=$?
cat "$WORK/wait.err"
check "redis.connect_wait against an unreachable redis: exit 2 ($rc)" [ $rc -eq 2 ]
check "redis.connect_wait: one line that it waits, one that it gave up" \
    bash -c '[ "$(wc -l <"$1")" -eq 2 ] && grep -q "trying again for up to 2 s (redis.connect_wait)" "$1"' _ "$WORK/wait.err"
# ... and connects once Redis is there (started 1 s after the node)
rm -f "$WORK/late.sock"
( sleep 1; exec redis-server --port 0 --unixsocket "$WORK/late.sock" --save "" >/dev/null 2>&1 ) &
late=$!
timeout 30 "$DCRAWL" seed --redis "unix://$WORK/late.sock" --set redis.connect_wait=20 \
    "$WORK/seeds.txt" >"$WORK/late.out" 2>"$WORK/late.err"
rc=$?
kill $late 2>/dev/null; wait $late 2>/dev/null
check "redis.connect_wait: seed reaches a Redis that starts later ($rc)" \
    bash -c '[ "$1" -eq 0 ] && grep -q "^seeds: " "$2"' _ "$rc" "$WORK/late.out"
"$DCRAWL" seed --redis "$R" --set politeness.delay=abc "$WORK/seeds.txt" >/dev/null 2>"$WORK/badset.err"
check "bad --set value: exit 2" [ $? -eq 2 ]
check "bad --set names the key" grep -q "politeness.delay" "$WORK/badset.err"
"$DCRAWL" seed --redis "$R" --set nosuch.key=1 "$WORK/seeds.txt" >/dev/null 2>&1
check "unknown key: exit 2" [ $? -eq 2 ]
"$DCRAWL" bogus >/dev/null 2>&1
check "unknown command: exit 2" [ $? -eq 2 ]
check "conf/dcrawl.conf loads" "$DCRAWL" seed --redis "$R" --config "$SRC/conf/dcrawl.conf" "$WORK/seeds.txt" >/dev/null 2>&1

# ---- option tables ----
# usage_err NAME EXPECTED-FIRST-LINE CMD...: exit 2, stdout empty, stderr is
# exactly the message then the command's usage line
usage_err() {
    local what=$1 want=$2; shift 2
    "$DCRAWL" "$@" >"$WORK/ue.out" 2>"$WORK/ue.err"
    local rc=$?
    check "$what: exit 2" [ $rc -eq 2 ]
    check "$what: message" [ "$(sed -n 1p "$WORK/ue.err")" = "$want" ]
    check "$what: usage line follows" grep -q "^usage: dcrawl $1 " <(sed -n 2p "$WORK/ue.err")
    check "$what: nothing on stdout (not help)" [ ! -s "$WORK/ue.out" ]
}
usage_err "merge --mem 0" "dcrawl merge: --mem wants an integer in 1..1048576, not '0'" merge "$WORK" --mem 0
usage_err "merge --mem=x" "dcrawl merge: --mem wants an integer in 1..1048576, not 'x'" merge "$WORK" --mem=x
usage_err "unknown option" "dcrawl seed: unknown option --bogus" seed --redis "$R" --bogus "$WORK/seeds.txt"
usage_err "unknown short option" "dcrawl node: unknown option -x" node --out "$WORK/o3" -x
usage_err "missing value" "dcrawl seed: --redis needs a value (URL)" seed "$WORK/seeds.txt" --redis
usage_err "flag given a value" "dcrawl node: --exit-when-idle takes no value" node --out "$WORK/o3" --exit-when-idle=1
usage_err "-j out of range" "dcrawl dedup: -j wants an integer in 1..64, not '65'" dedup --redis "$R" -j 65
usage_err "--watch 0" "dcrawl status: --watch wants a number in 0.1..86400, not '0'" status --redis "$R" --watch 0
usage_err "stray argument" "dcrawl status: unexpected argument 'extra'" status --redis "$R" extra
usage_err "merge: a second DIR" "dcrawl merge: unexpected argument 'b'" merge a b
usage_err "--out -h is a value, not help" "dcrawl crawl: give --out DIR and --seeds FILE or URLs" crawl --out -h
usage_err "--keep -h is a value" "dcrawl merge: unknown --keep policy: -h" merge "$WORK" --keep -h
"$DCRAWL" seed --redis "$R" -h "$WORK/nosuch" >"$WORK/h.out" 2>&1
check "-h as an option is help, anywhere on the line" [ $? -eq 0 -a "$(sed -n 1p "$WORK/h.out")" = "usage: dcrawl seed --redis URL [--depth N] [options] FILE|- [FILE...]" ]
"$DCRAWL" help merge >"$WORK/h2.out" 2>&1
check "dcrawl help merge = dcrawl merge --help" cmp -s "$WORK/h2.out" <("$DCRAWL" merge --help)
: >"$WORK/empty-robots.txt"
"$DCRAWL" robots "$WORK/empty-robots.txt" -- -h /a >"$WORK/r.out" 2>&1
check "-h after -- is an argument" [ $? -eq 0 -a "$(cat "$WORK/r.out")" = "$(printf 'allowed -h\nallowed /a')" ]

mkdir -p "$WORK/many"
for i in $(seq 1 300); do echo "http://127.0.1.9:8080/many/$i.html" >"$WORK/many/s$i.txt"; done
"$DCRAWL" seed --redis="$R" --depth=2 "$WORK"/many/s*.txt >"$WORK/many.out" 2>&1
check "seed with 300 files (--opt=value): exit 0" [ $? -eq 0 ]
check "all 300 files loaded, the seeds' range reported" [ "$(cat "$WORK/many.out")" = "seeds: 300 accepted, 0 already seen, 0 rejected, 0 over scope.host_budget (300 URLs read)
seeds: non-public ranges allowed (scope.private_addresses=seeds): 127.0.0.0/8" ]

# ---- dcrawl config ----
noenv=(env $(compgen -e | grep '^DCRAWL_' | sed 's/^/-u /'))
nkeys=$(grep -cE '^[a-z0-9_]+ = ' "$SRC/conf/dcrawl.conf")
"${noenv[@]}" "$DCRAWL" config >"$WORK/cfg.out" 2>&1
check "config: exit 0" [ $? -eq 0 ]
check "config: one key=value line per setting ($nkeys)" [ "$(grep -c '^[a-z0-9_]*\.[a-z0-9_]*=' "$WORK/cfg.out")" -eq "$nkeys" -a "$(wc -l <"$WORK/cfg.out")" -eq "$nkeys" ]
check "config: defaults shown" grep -qx 'fetch.timeout=30.0' "$WORK/cfg.out"
printf '# test\n[fetch]\ntimeout = 45\n' >"$WORK/o.conf"
"${noenv[@]}" DCRAWL_FETCH_RETRIES=2 "$DCRAWL" config --config "$WORK/o.conf" --set crawl.depth=5 \
    --show-origin >"$WORK/orig.out" 2>&1
check "config --show-origin: exit 0" [ $? -eq 0 ]
tab=$(printf '\t')
check "origin: file:PATH:LINE" grep -qxF "file:$WORK/o.conf:3${tab}fetch.timeout=45.0" "$WORK/orig.out"
check "origin: --set" grep -qxF -- "--set${tab}crawl.depth=5" "$WORK/orig.out"
check "origin: environment" grep -qxF "env:DCRAWL_FETCH_RETRIES${tab}fetch.retries=2" "$WORK/orig.out"
check "origin: default" grep -qxF "default${tab}fetch.connect_timeout=10.0" "$WORK/orig.out"
check "origin: every line has one" [ "$(grep -c "^[^${tab}]*${tab}[a-z0-9_]*\.[a-z0-9_]*=" "$WORK/orig.out")" -eq "$nkeys" ]
"$DCRAWL" config --set=fetch.timeout=7 >"$WORK/cfg2.out" 2>&1
check "config --set=k=v" grep -qx 'fetch.timeout=7.0' "$WORK/cfg2.out"
"$DCRAWL" config --set fetch.timeout=never >/dev/null 2>"$WORK/cfg3.err"
check "config: bad --set exit 2" [ $? -eq 2 ]

# ---- one version ----
ver=$(sed -n 's/^#define DCRAWL_VERSION "\(.*\)"$/\1/p' "$SRC/conf/conf.h")
check "conf.h defines DCRAWL_VERSION" [ -n "$ver" ]
check "dcrawl --version is conf.h's version" [ "$("$DCRAWL" --version)" = "dcrawl $ver" ]
check "User-Agent default carries it" grep -qxF "crawl.user_agent=dcrawl/$ver (+https://example.org/dcrawl)" "$WORK/cfg.out"
finish
