/*
 * fuzz-merge-lines.c: the merge's reading of JSON lines (merge/lines.c,
 * warc/json.c) and every pass after it, on hostile .jsonl files.
 *
 * A crawl directory is set up once in a private temporary folder: depth-0
 * holds n-00000.warc.gz, a small WARC of this crawler's output (the
 * fixture data/merge/n-00000.warc.gz: pages a, b (same payload as a) and
 * c, and a failed fetch d). The input becomes depth-0/n-00000.jsonl, whose
 * lines may name that file, byte ranges in it and record ids, and the
 * whole merge runs (sort, URL and content duplicates, output, CDXJ index,
 * summary) with a small sort budget so that runs spill. Check: what the
 * merge writes reads back as WARC to a clean end whenever it succeeds.
 */
#include <dirent.h>
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>

#include "conf.h"
#include "fuzz.h"
#include "merge.h"
#include "warc.h"

static char dir[256], jsonl[320], outdir[320];
static FILE *sink;

static int rm_one(const char *p, const struct stat *sb, int flag,
                  struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static void cleanup(void)
{
    if (dir[0])
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[8192];
    size_t n;

    FUZZ_CHECK(in && out);
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        FUZZ_CHECK(fwrite(buf, 1, n, out) == n);
    fclose(in);
    FUZZ_CHECK(fclose(out) == 0);
}

static void setup(void)
{
    const char *tmp = getenv("TMPDIR");
    char sub[320], to[400];

    snprintf(dir, sizeof(dir), "%s/dcrawl-fuzz-merge-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    FUZZ_CHECK(mkdtemp(dir) != NULL);
    atexit(cleanup);
    snprintf(sub, sizeof(sub), "%s/depth-0", dir);
    FUZZ_CHECK(mkdir(sub, 0777) == 0);
    snprintf(to, sizeof(to), "%s/n-00000.warc.gz", sub);
    copy_file(DC_FUZZ_DIR "/data/merge/n-00000.warc.gz", to);
    snprintf(jsonl, sizeof(jsonl), "%s/n-00000.jsonl", sub);
    snprintf(outdir, sizeof(outdir), "%s/merged", dir);
    sink = fopen("/dev/null", "w");
}

/* Every merged WARC file reads to a clean end. */
static void check_output(void)
{
    DIR *d = opendir(outdir);
    struct dirent *e;

    FUZZ_CHECK(d != NULL);
    while ((e = readdir(d)) != NULL) {
        struct warc_reader *r;
        struct warc_record rec;
        char path[600];
        int rc, n = 0;
        if (!strstr(e->d_name, ".warc.gz"))
            continue;
        snprintf(path, sizeof(path), "%s/%s", outdir, e->d_name);
        FUZZ_CHECK(warc_reader_open(&r, path) == DC_OK);
        while ((rc = warc_reader_next(r, &rec)) == DC_OK && n++ < 100000)
            ;
        if (rc != DC_ENOTFOUND) {
            fprintf(stderr, "%s: %s\n", path, dc_strerror(rc));
            abort();
        }
        warc_reader_close(&r);
    }
    closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct merge_opts o = { 0 };
    struct merge_stats st;
    char err[512];
    FILE *f;

    if (!dir[0])
        setup();
    f = fopen(jsonl, "wb");
    FUZZ_CHECK(f && fwrite(data, 1, size, f) == size && fclose(f) == 0);
    o.outdir = outdir;
    o.mem_bytes = 4096;
    memset(&st, 0, sizeof(st));
    err[0] = '\0';
    if (merge_run_opts(dir, &o, &st, sink, err, sizeof(err)) == DC_OK)
        check_output();
    else
        FUZZ_CHECK(err[0] != '\0');
    return 0;
}
