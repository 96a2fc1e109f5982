#!/usr/bin/env python3
"""fulldisk_check.py: the per-node output files, read byte by byte.

Reads every DIR/depth-*/*.warc.gz (a sequence of gzip members, one WARC
record each) and *.jsonl of the --out dirs and checks, one "ok"/"FAIL"
line each (exit 1 if any failed):
  - no torn WARC file: each file is whole gzip members to its last byte;
  - no torn JSON lines file: each ends with a newline, every line parses;
  - every line's records (warc_offset, warc_length) start at a response or
    revisit member of its URL and end at a member boundary of its file;
  - no orphan: every response/revisit member is the start of a line's range;
  - --lines N: the lines number exactly N (the node's count of leases it
    completed for the lines it wrote);
  - --once: each URL has exactly one line and at most one response/revisit
    record over all dirs (canonical form of gen_site.py with --bench);
  - --manifest/--depth: every URL of within_depth[D] has a 200 line.
Prints the figures as one "figures: {...}" JSON line.
"""
import argparse, collections, glob, json, os, sys, zlib

ap = argparse.ArgumentParser()
ap.add_argument("--out", action="append", required=True)
ap.add_argument("--lines", type=int)
ap.add_argument("--once", action="store_true")
ap.add_argument("--bench")
ap.add_argument("--manifest")
ap.add_argument("--depth", type=int)
ap.add_argument("--label", default="output")
a = ap.parse_args()

fails = 0


def report(ok, what):
    global fails
    print(("ok - " if ok else "FAIL - ") + a.label + ": " + what)
    fails += 0 if ok else 1


canon = lambda u: u  # noqa: E731
expected = set()
if a.bench:
    sys.path.insert(0, a.bench)
    from gen_site import canonicalize  # noqa: E402
    canon = lambda u: canonicalize(u, u)  # noqa: E731
if a.manifest:
    wd = json.load(open(a.manifest))["within_depth"]
    expected = set(wd[str(a.depth)])


def members(data):
    """(start, end, inflated) per gzip member; end None for a torn one."""
    mv, pos, n = memoryview(data), 0, len(data)
    while pos < n:
        d, out, p = zlib.decompressobj(31), [], pos
        try:
            while not d.eof and p < n:
                chunk = mv[p:p + 65536]
                out.append(d.decompress(chunk))
                p += len(chunk)
        except zlib.error:
            yield pos, None, b""
            return
        if not d.eof:
            yield pos, None, b""
            return
        end = p - len(d.unused_data)
        yield pos, end, b"".join(out)
        pos = end


def head_fields(rec):
    head = rec.split(b"\r\n\r\n", 1)[0].decode("utf-8", "replace")
    f = {}
    for ln in head.split("\r\n")[1:]:
        k, _, v = ln.partition(":")
        f[k.strip().lower()] = v.strip()
    return f


torn_warc, torn_jsonl, bad_lines, bad_ranges = [], [], [], []
starts = {}        # (warc path, offset) -> target URI of a response/revisit
ends = set()       # (warc path, member end)
records = collections.Counter()
for out in a.out:
    for path in sorted(glob.glob(os.path.join(out, "depth-*", "*.warc.gz"))):
        data = open(path, "rb").read()
        for s, e, rec in members(data):
            if e is None:
                torn_warc.append("%s at %d of %d" % (path, s, len(data)))
                break
            ends.add((path, e))
            f = head_fields(rec)
            if f.get("warc-type") in ("response", "revisit"):
                starts[(path, s)] = f.get("warc-target-uri", "")
                records[canon(f.get("warc-target-uri", ""))] += 1

lines = collections.Counter()
ok200 = set()
nlines = 0
used = set()
for out in a.out:
    for path in sorted(glob.glob(os.path.join(out, "depth-*", "*.jsonl"))):
        raw = open(path, "rb").read()
        if raw and not raw.endswith(b"\n"):
            torn_jsonl.append(path)
        for ln in raw.splitlines():
            try:
                r = json.loads(ln)
            except ValueError:
                bad_lines.append(path)
                continue
            nlines += 1
            lines[canon(r["url"])] += 1
            if r.get("status") == 200:
                ok200.add(canon(r["url"]))
            if r.get("warc_offset") is None:
                continue
            w = os.path.join(out, r["warc_file"])
            off, ln_ = r["warc_offset"], r["warc_length"]
            uri = starts.get((w, off))
            used.add((w, off))
            if uri not in (r["url"], r.get("final_url")) or (w, off + ln_) not in ends:
                bad_ranges.append("%s: %s at %d+%d" % (path, r["url"], off, ln_))

orphans = sorted(k for k in starts if k not in used)
dup_lines = sorted(u for u, c in lines.items() if c > 1)
dup_records = sorted(u for u, c in records.items() if c > 1)
missing = sorted(expected - ok200)


def some(xs):
    return (": " + ", ".join(str(x) for x in xs[:3]) + (" ..." if len(xs) > 3 else "")) if xs else ""


report(not torn_warc, "no torn WARC file (%d)%s" % (len(torn_warc), some(torn_warc)))
report(not torn_jsonl and not bad_lines, "no torn JSON line (%d files without a final newline, %d bad lines)%s"
       % (len(torn_jsonl), len(bad_lines), some(torn_jsonl + bad_lines)))
report(not bad_ranges, "every line's range is its URL's records (%d bad)%s" % (len(bad_ranges), some(bad_ranges)))
report(not orphans, "no orphan record (%d)%s" % (len(orphans), some(orphans)))
if a.lines is not None:
    report(nlines == a.lines, "%d lines, %d leases completed for them" % (nlines, a.lines))
if a.once:
    report(not dup_lines and not dup_records,
           "every URL written once: %d URLs with 2+ lines, %d with 2+ records%s"
           % (len(dup_lines), len(dup_records), some(dup_lines + dup_records)))
if a.manifest:
    report(not missing, "every page of the manifest (%d) has a 200 line: %d missing%s"
           % (len(expected), len(missing), some(missing)))
print("figures: " + json.dumps({"lines": nlines, "records": sum(records.values()),
                                "torn_warc": len(torn_warc), "torn_jsonl": len(torn_jsonl),
                                "orphans": len(orphans), "dup_lines": len(dup_lines),
                                "dup_records": len(dup_records), "missing": len(missing)}))
sys.exit(1 if fails else 0)
