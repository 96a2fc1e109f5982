"""crawl_manifest.py: what check_crawl.py and check_cluster.py share.

The expected URL set comes from gen_site.py's manifest (within_depth[D]);
canonical form is gen_site.canonicalize, the manifest's own rule, so both
checkers compare like with like. Page records are the per-node JSON lines
DIR/depth-*/*.jsonl (one line per fetch; lines with "skipped", URLs given
up without a request, are not fetches and are read by skipped_records); a
torn last line (kill -9) is skipped.
"""
import glob, json, os, sys


def load(bench, manifest_path, depth):
    """Import gen_site from bench; return (manifest, expected set, canonicalize)."""
    if bench not in sys.path:
        sys.path.insert(0, bench)
    from gen_site import canonicalize  # noqa: E402
    man = json.load(open(manifest_path))
    wd = man["within_depth"]
    expected = set(wd[str(depth)] if isinstance(wd, dict) else wd[depth])
    return man, expected, canonicalize


def jsonl_paths(out_dir):
    return sorted(glob.glob(os.path.join(out_dir, "depth-*", "*.jsonl")))


def all_records(out_dir):
    """Yield (path, record) for every complete JSON line of out_dir."""
    for path in jsonl_paths(out_dir):
        with open(path, errors="replace") as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue  # a torn last line after kill -9
                yield path, rec


def page_records(out_dir):
    """Yield (path, record) for every fetch (request made) of out_dir."""
    for path, rec in all_records(out_dir):
        if not rec.get("skipped"):
            yield path, rec


def skipped_records(out_dir):
    """Yield (path, record) for every URL given up without a request."""
    for path, rec in all_records(out_dir):
        if rec.get("skipped"):
            yield path, rec


def server_port(expected):
    """The port of the site's URLs (one nginx port for every host)."""
    u = next(iter(expected))
    return u.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)[1]


class Report:
    """One "ok - ..." / "FAIL - ..." line per check; counts the failures."""

    def __init__(self):
        self.fails = 0

    def __call__(self, ok, what):
        print(("ok - " if ok else "FAIL - ") + what)
        if not ok:
            self.fails += 1
