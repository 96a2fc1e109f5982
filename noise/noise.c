/*
 * noise.c: pass-through noise filter (see noise.h). Keeps every link and
 * counts what it saw, so callers and summaries already carry the counters
 * the real filter will fill.
 */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "noise.h"

struct noise {
    int enabled;
};

struct noise *noise_new(int enabled)
{
    struct noise *nz = xcalloc(1, sizeof(*nz));
    nz->enabled = enabled;
    return nz;
}

void noise_filter(struct noise *nz, const char *host, size_t n,
                  unsigned char *keep, struct noise_stats *st)
{
    (void)nz;
    (void)host;
    memset(keep, 1, n);
    if (st)
        st->seen += n;
}

void noise_free(struct noise **nz)
{
    if (!nz || !*nz)
        return;
    free(*nz);
    *nz = NULL;
}
