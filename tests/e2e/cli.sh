#!/usr/bin/env bash
# e2e cli: help for every command; bad seed lines reported with their line
# numbers while the valid ones load; an unreachable Redis is a one-line
# error with exit status 2 (never a crash); bad settings are refused.
. "$(dirname "$0")/lib.sh"
redis_start cli || exit 1

"$DCRAWL" --help >"$WORK/help" 2>&1
check "dcrawl --help exits 0" [ $? -eq 0 ]
for c in crawl seed node merge status; do
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
"$DCRAWL" seed --redis "$R" --set politeness.delay=abc "$WORK/seeds.txt" >/dev/null 2>"$WORK/badset.err"
check "bad --set value: exit 2" [ $? -eq 2 ]
check "bad --set names the key" grep -q "politeness.delay" "$WORK/badset.err"
"$DCRAWL" seed --redis "$R" --set nosuch.key=1 "$WORK/seeds.txt" >/dev/null 2>&1
check "unknown key: exit 2" [ $? -eq 2 ]
"$DCRAWL" bogus >/dev/null 2>&1
check "unknown command: exit 2" [ $? -eq 2 ]
check "conf/dcrawl.conf loads" "$DCRAWL" seed --redis "$R" --config "$SRC/conf/dcrawl.conf" "$WORK/seeds.txt" >/dev/null 2>&1
finish
