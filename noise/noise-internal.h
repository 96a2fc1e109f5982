/*
 * noise-internal.h: helpers shared between the noise module's files, its
 * unit test and its benchmark.
 *
 * Code outside of the noise module should use only the public functions
 * defined in "noise.h", and should *not* include this file.
 */
#ifndef DC_NOISE_INTERNAL_H
#define DC_NOISE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "noise.h"

/*
 * A prepared LCS pattern: the match masks of one string a, so that many
 * strings b can be compared with it. peq holds 256 rows of `words` words;
 * rows of bytes not in a are all zero between uses (set() clears only
 * the rows the previous pattern used).
 */
struct lcs_pat {
    uint64_t *peq;
    size_t words, cap_words; /* words in use / allocated per row */
    uint64_t *v;             /* working row, cap_words words */
    uint64_t rows[4];        /* bitmap of the non-zero rows */
    size_t m;
};

void noise__pat_init(struct lcs_pat *p);
void noise__pat_release(struct lcs_pat *p);
/* a is not kept. */
void noise__pat_set(struct lcs_pat *p, const char *a, size_t m);
size_t noise__pat_lcs(struct lcs_pat *p, const char *b, size_t n);
/* mean of LCS/m and LCS/n for the pattern and b. */
double noise__pat_sim(struct lcs_pat *p, const char *b, size_t n);

/* Repeated rule: fingerprints held for host (0 when it has no state). */
size_t noise__seen_count(struct noise *nz, const char *host, size_t hostlen);

/* The O(m n) dynamic program: the test oracle. */
size_t noise__lcs_dp(const char *a, size_t alen, const char *b, size_t blen);

#endif
