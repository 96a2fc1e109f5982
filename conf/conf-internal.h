/*
 * conf-internal.h: the option table shared by conf.c (loading: files,
 * environment, --set) and conf-table.c (the table itself and the typed
 * parse/format of one value).
 *
 * Code outside of the conf module should use only the public functions
 * defined in "conf.h", and should *not* include this file.
 */
#ifndef DC_CONF_INTERNAL_H
#define DC_CONF_INTERNAL_H

#include <stddef.h>

#include "conf.h"

enum conf_type {
    CONF_BOOL,   /* int: true/false/yes/no/on/off/1/0 */
    CONF_INT,    /* int */
    CONF_INT64,  /* int64_t, plain count */
    CONF_BYTES,  /* int64_t, optional k/m/g/t suffix (powers of 1024) */
    CONF_DOUBLE, /* double, finite */
    CONF_STRING  /* owned char *; min/max bound its length in bytes */
};

/* One `section.key`: where it lives in struct conf and what it accepts. */
struct conf_opt {
    const char *name;
    enum conf_type type;
    size_t offset;
    const char *def;
    double min, max;
    const char *help;
};

extern const struct conf_opt conf__opts[];
extern const size_t conf__nopts;

/* The entry for the name s[0..len), or NULL. */
const struct conf_opt *conf__find(const char *s, size_t len);

/*
 * Parse text into o's field of c. On a bad value returns DC_ECONFIG with a
 * message naming the key, the value and the allowed range in err, and
 * leaves the field unchanged.
 */
int conf__parse(const struct conf_opt *o, struct conf *c, const char *text,
                char *err, size_t errlen);

/* o's current value as text: either buf (cap bytes) or the string field. */
const char *conf__format(const struct conf_opt *o, const struct conf *c,
                         char *buf, size_t cap);

/* Longest text conf__format writes into buf for a non-string type. */
#define CONF_NUMLEN 64

/* Write a formatted message to err (errlen bytes); no-op when err is NULL. */
void conf__seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
