/*
 * lcs.c: length of the longest common subsequence of two strings.
 *
 * Bit-parallel (Allison and Dix 1986; the form with one addition per
 * character is from Crochemore, Iliopoulos, Pinzon and Reid 2001, and
 * Hyyro 2004 for the multi-word carry). For pattern a of length m, bit i
 * of the match mask M[c] is set when a[i] == c. A row vector V of m bits
 * starts all ones; for each character c of b:
 *
 *     U = V & M[c];   V = (V + U) | (V & ~M[c])
 *
 * with the addition carried across words. LCS = the number of zero bits
 * among the low m bits of V. Cost: O(n * ceil(m / 64)) word operations
 * after O(m) to build the masks.
 *
 * The mask table (256 rows) is kept between patterns with all rows zero
 * except the current pattern's, so setting a pattern costs O(m), not
 * O(256 * words). noise__lcs_dp() is the plain table, kept as the oracle.
 */
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "noise-internal.h"

void noise__pat_init(struct lcs_pat *p)
{
    memset(p, 0, sizeof(*p));
}

void noise__pat_release(struct lcs_pat *p)
{
    if (!p)
        return;
    free(p->peq);
    free(p->v);
    memset(p, 0, sizeof(*p));
}

static void pat_clear_rows(struct lcs_pat *p)
{
    size_t c;

    for (c = 0; c < 256; c++)
        if (p->rows[c / 64] >> (c % 64) & 1)
            memset(p->peq + c * p->cap_words, 0, p->words * sizeof(uint64_t));
    memset(p->rows, 0, sizeof(p->rows));
}

void noise__pat_set(struct lcs_pat *p, const char *a, size_t m)
{
    size_t words = (m + 63) / 64, i;

    pat_clear_rows(p);
    if (words > p->cap_words) {
        free(p->peq);
        free(p->v);
        p->peq = xcalloc(256 * words, sizeof(uint64_t));
        p->v = xmalloc(words * sizeof(uint64_t));
        p->cap_words = words;
    }
    p->m = m;
    p->words = words;
    for (i = 0; i < m; i++) {
        unsigned c = (unsigned char)a[i];
        p->peq[(size_t)c * p->cap_words + i / 64] |= 1ull << (i % 64);
        p->rows[c / 64] |= 1ull << (c % 64);
    }
}

static size_t zeros_low(const uint64_t *v, size_t words, size_t m)
{
    size_t ones = 0, k;
    uint64_t last;

    for (k = 0; k + 1 < words; k++)
        ones += (size_t)__builtin_popcountll(v[k]);
    last = v[words - 1];
    if (m % 64)
        last &= (1ull << (m % 64)) - 1;
    ones += (size_t)__builtin_popcountll(last);
    return m - ones;
}

static size_t lcs_one_word(const struct lcs_pat *p, const unsigned char *b,
                           size_t n)
{
    uint64_t v = ~0ull, mk;
    size_t j;

    for (j = 0; j < n; j++) {
        mk = p->peq[(size_t)b[j] * p->cap_words];
        v = (v + (v & mk)) | (v & ~mk);
    }
    return zeros_low(&v, 1, p->m);
}

size_t noise__pat_lcs(struct lcs_pat *p, const char *bs, size_t n)
{
    const unsigned char *b = (const unsigned char *)bs;
    size_t j, k, w = p->words;

    if (!p->m || !n)
        return 0;
    if (w == 1)
        return lcs_one_word(p, b, n);
    memset(p->v, 0xff, w * sizeof(uint64_t));
    for (j = 0; j < n; j++) {
        const uint64_t *mk = p->peq + (size_t)b[j] * p->cap_words;
        uint64_t carry = 0;
        for (k = 0; k < w; k++) {
            uint64_t v = p->v[k], u = v & mk[k];
            uint64_t s = v + u, s2 = s + carry;
            carry = (uint64_t)(s < v) | (uint64_t)(s2 < s);
            p->v[k] = s2 | (v & ~mk[k]);
        }
    }
    return zeros_low(p->v, w, p->m);
}

/* The similarity of two strings of lengths m and n with an LCS of l: the
 * mean of l/m and l/n (1 for two empty strings). */
static double lcs_sim(size_t m, size_t n, size_t l)
{
    if (!m && !n)
        return 1.0;
    if (!m || !n)
        return 0.0;
    return ((double)l / (double)m + (double)l / (double)n) / 2;
}

double noise__pat_sim(struct lcs_pat *p, const char *b, size_t n)
{
    return lcs_sim(p->m, n, noise__pat_lcs(p, b, n));
}

size_t noise_lcs(const char *a, size_t alen, const char *b, size_t blen)
{
    struct lcs_pat p;
    size_t r;

    noise__pat_init(&p);
    noise__pat_set(&p, a, alen);
    r = noise__pat_lcs(&p, b, blen);
    noise__pat_release(&p);
    return r;
}

double noise_similarity(const char *a, size_t alen, const char *b,
                        size_t blen)
{
    return lcs_sim(alen, blen, noise_lcs(a, alen, b, blen));
}

size_t noise__lcs_dp(const char *a, size_t alen, const char *b, size_t blen)
{
    size_t *row = xcalloc(blen + 1, sizeof(size_t)), i, j, r;

    for (i = 1; i <= alen; i++) {
        size_t diag = 0; /* row[j-1] of the previous row */
        for (j = 1; j <= blen; j++) {
            size_t up = row[j];
            if (a[i - 1] == b[j - 1])
                row[j] = diag + 1;
            else if (row[j - 1] > row[j])
                row[j] = row[j - 1];
            diag = up;
        }
    }
    r = row[blen];
    free(row);
    return r;
}
