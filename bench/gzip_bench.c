/*
 * gzip_bench.c: the WARC gzip compressors on real pages. Reads every
 * *.html under the given directories (up to --max files, in directory
 * order), then compresses each file as one gzip member, as a WARC record's
 * payload is, with:
 *   igzip 1      ISA-L isal_deflate_stateless level 1 (output.gzip_level 1,
 *                the default, warc/record.c)
 *   libdeflate 1 libdeflate level 1 (what level 1 was before)
 *   libdeflate 6 libdeflate level 6 (a smaller archive for more CPU)
 * Each compressor runs --rounds times over all files, single thread; the
 * fastest round is printed: input and output bytes, output/input, ms, MB/s
 * of input, and the speed over libdeflate 1's.
 *
 *   build-rel/bench/gzip_bench [--max 2000] [--rounds 3] DIR...
 *   e.g. DIR = /usr/share/doc/python3.11/html (python3.11-doc)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <isa-l/igzip_lib.h>
#include <libdeflate.h>

struct file {
    unsigned char *p;
    size_t n;
};

static struct file *files;
static size_t nfiles, maxfiles = 2000;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void load(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat st;

    if (!f)
        return;
    if (fstat(fileno(f), &st) == 0 && st.st_size > 0 && nfiles < maxfiles) {
        struct file *x = &files[nfiles];
        x->p = malloc((size_t)st.st_size);
        x->n = x->p ? fread(x->p, 1, (size_t)st.st_size, f) : 0;
        if (x->n)
            nfiles++;
        else
            free(x->p);
    }
    fclose(f);
}

static void walk(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096];

    if (!d || depth > 32)
        goto out;
    while (nfiles < maxfiles && (e = readdir(d))) {
        struct stat st;
        size_t n = strlen(e->d_name);
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (stat(path, &st))
            continue;
        if (S_ISDIR(st.st_mode))
            walk(path, depth + 1);
        else if (n > 5 && !strcmp(e->d_name + n - 5, ".html"))
            load(path);
    }
out:
    if (d)
        closedir(d);
}

/* one member of f into out (cap bytes); its length, 0 on failure */
typedef size_t (*gz_fn)(void *st, const struct file *f, unsigned char *out,
                        size_t cap);

static size_t run_deflate(void *st, const struct file *f, unsigned char *out,
                          size_t cap)
{
    return libdeflate_gzip_compress(st, f->p, f->n, out, cap);
}

struct igz {
    struct isal_zstream z;
    unsigned char *lvl;
};

static size_t run_igzip(void *st, const struct file *f, unsigned char *out,
                        size_t cap)
{
    struct igz *g = st;

    isal_deflate_stateless_init(&g->z);
    g->z.level = 1;
    g->z.level_buf = g->lvl;
    g->z.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
    g->z.gzip_flag = IGZIP_GZIP;
    g->z.end_of_stream = 1;
    g->z.flush = NO_FLUSH;
    g->z.next_in = f->p;
    g->z.avail_in = (uint32_t)f->n;
    g->z.next_out = out;
    g->z.avail_out = (uint32_t)cap;
    if (isal_deflate_stateless(&g->z) != COMP_OK || g->z.avail_in)
        return 0;
    return g->z.total_out;
}

static double bench(const char *name, gz_fn fn, void *st, int rounds,
                    size_t in, double base)
{
    size_t cap = 0, outb = 0;
    unsigned char *out;
    double best = 1e30;

    for (size_t i = 0; i < nfiles; i++)
        if (files[i].n > cap)
            cap = files[i].n;
    cap += cap / 8 + 4096;
    out = malloc(cap);
    for (int r = 0; r < rounds; r++) {
        double t = now_s();
        outb = 0;
        for (size_t i = 0; i < nfiles; i++) {
            size_t n = fn(st, &files[i], out, cap);
            if (!n) {
                fprintf(stderr, "gzip_bench: %s failed\n", name);
                exit(1);
            }
            outb += n;
        }
        t = now_s() - t;
        if (t < best)
            best = t;
    }
    free(out);
    printf("%-13s %12zu %12zu %8.4f %9.1f %8.1f %6.2fx\n", name, in, outb,
           (double)outb / (double)in, best * 1e3, (double)in / best / 1e6,
           base > 0 ? base / best : 1.0);
    return best;
}

int main(int argc, char **argv)
{
    int rounds = 3, ndirs = 0;
    size_t in = 0;
    struct libdeflate_compressor *c1, *c6;
    struct igz g;
    double base;

    files = calloc(100000, sizeof(*files));
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--max") && i + 1 < argc)
            maxfiles = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else
            argv[++ndirs] = argv[i];
    }
    if (maxfiles > 100000)
        maxfiles = 100000;
    if (!ndirs || rounds < 1) {
        fprintf(stderr, "usage: gzip_bench [--max N] [--rounds R] DIR...\n");
        return 2;
    }
    for (int i = 1; i <= ndirs; i++)
        walk(argv[i], 0);
    for (size_t i = 0; i < nfiles; i++)
        in += files[i].n;
    if (!nfiles) {
        fprintf(stderr, "gzip_bench: no *.html file found\n");
        return 1;
    }
    printf("gzip_bench: %zu files, %.1f MB of HTML, best of %d rounds, one "
           "gzip member per file, one thread\n", nfiles, (double)in / 1e6,
           rounds);
    printf("%-13s %12s %12s %8s %9s %8s %7s\n", "compressor", "in B", "out B",
           "out/in", "ms", "MB/s", "speed");
    c1 = libdeflate_alloc_compressor(1);
    c6 = libdeflate_alloc_compressor(6);
    g.lvl = malloc(ISAL_DEF_LVL1_DEFAULT);
    base = bench("libdeflate 1", run_deflate, c1, rounds, in, 0);
    bench("igzip 1", run_igzip, &g, rounds, in, base);
    bench("libdeflate 6", run_deflate, c6, rounds, in, base);
    libdeflate_free_compressor(c1);
    libdeflate_free_compressor(c6);
    free(g.lvl);
    for (size_t i = 0; i < nfiles; i++)
        free(files[i].p);
    free(files);
    return 0;
}
