/*
 * options.h: the command-line parser of the dcrawl commands, after git's
 * parse_options. Each command declares one table of rows (struct opt): long
 * name, short letter, kind of value, where the value goes and one line of
 * help. The same rows parse argv AND print `dcrawl CMD --help`, so the help
 * never disagrees with what is accepted.
 *
 * Rules, the same for every command:
 *   --name VALUE and --name=VALUE both work; -x VALUE and -xVALUE too.
 *   A value is the next word whatever it looks like (`--out -h` sets out
 *   to "-h"). -h/--help is help only where an option stands; `--` ends the
 *   options (everything after it is positional); a lone `-` is positional.
 *   Unknown option, missing value, a number out of its range, a positional
 *   too many: one line "dcrawl CMD: why" and the usage line on stderr,
 *   status 2 (OPT_USAGE).
 *   Positionals are rows too (OPT_ARG: one word, OPT_ARGS: every remaining
 *   word, in a growing list: no limit on their number).
 *
 * Memory: lists (OPT_LIST, OPT_ARGS) grow on the heap; the caller frees
 * them (opt_release, or free(list.v)) once the command ran. When parsing
 * stops the command (help, usage error) they are freed already. The words
 * themselves stay argv's.
 *
 * Internal to crawler/ (like crawler.h): not a library for other modules.
 */
#ifndef DC_OPTIONS_H
#define DC_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

enum opt_kind {
    OPT_END,     /* ends a table */
    OPT_FLAG,    /* int *: set to 1 */
    OPT_STRING,  /* const char **: the value (last one wins) */
    OPT_INT,     /* int *: a decimal integer in [min, max] */
    OPT_DOUBLE,  /* double *: a number in [min, max] */
    OPT_LIST,    /* struct opt_list *: every value, in order (repeatable) */
    OPT_SETTING, /* struct cli_conf *: the value sets the conf key `key` */
    OPT_ARG,     /* const char **: the next positional word */
    OPT_ARGS     /* struct opt_list *: all remaining positional words */
};

/* A growing array of words (argv's, not copied). */
struct opt_list {
    const char **v;
    size_t n, cap;
};

struct opt {
    enum opt_kind kind;
    const char *name; /* long name without "--"; NULL for short-only */
    char letter;      /* short letter, or 0 */
    void *dst;
    const char *arg;  /* value name shown in help: "FILE", "N" */
    const char *help; /* lines separated by '\n' */
    double min, max;  /* OPT_INT, OPT_DOUBLE */
    /* a value the option may go without: taken from the next word only
     * when that word does not start with '-'; else this text is used */
    const char *dflt;
    const char *key;  /* OPT_SETTING: the conf key, e.g. "crawl.depth" */
};

/* One command: its synopsis (hand-written, like git's usage strings), a
 * paragraph about it, and its rows ending with an OPT_END row. */
struct opt_cmd {
    const char *name;
    const char *usage; /* "usage: dcrawl ..." lines, each ending in '\n' */
    const char *about;
    const struct opt *opts;
};

/* clang-format off */
#define OPT_FLAG_ROW(l, n, d, h)     { OPT_FLAG, n, l, d, NULL, h, 0, 0, NULL, NULL }
#define OPT_STRING_ROW(l, n, d, a, h) { OPT_STRING, n, l, d, a, h, 0, 0, NULL, NULL }
#define OPT_INT_ROW(l, n, d, a, lo, hi, h) \
    { OPT_INT, n, l, d, a, h, lo, hi, NULL, NULL }
#define OPT_LIST_ROW(l, n, d, a, h)  { OPT_LIST, n, l, d, a, h, 0, 0, NULL, NULL }
#define OPT_SETTING_ROW(n, cc, k, a, h) \
    { OPT_SETTING, n, 0, cc, a, h, 0, 0, NULL, k }
#define OPT_ARG_ROW(d, a)            { OPT_ARG, NULL, 0, d, a, NULL, 0, 0, NULL, NULL }
#define OPT_ARGS_ROW(d, a)           { OPT_ARGS, NULL, 0, d, a, NULL, 0, 0, NULL, NULL }
#define OPT_END_ROW                  { OPT_END, NULL, 0, NULL, NULL, NULL, 0, 0, NULL, NULL }
/* --config FILE and --set KEY=VALUE into a struct cli_conf (crawler.h) */
#define OPT_CONF_ROWS(cc)                                                   \
    OPT_STRING_ROW(0, "config", &(cc)->config_file, "FILE",                \
                   "read settings from FILE (see conf/dcrawl.conf)"),      \
    OPT_LIST_ROW(0, "set", &(cc)->sets, "KEY=VALUE",                       \
                 "override one setting, e.g. --set politeness.delay=0\n"   \
                 "(repeatable; environment DCRAWL_<SECTION>_<KEY> too)")
/* clang-format on */

/* What opt_parse returns when the command should go on. */
#define OPT_RUN (-1)
/* The exit status of a usage error. */
#define OPT_USAGE 2

/* Parse argv[1..argc) (argv[0] is the command name) into cmd's rows.
 * Returns OPT_RUN, or the status to exit with: 0 after printing the help
 * to stdout, OPT_USAGE after printing the error and the usage line; then
 * the lists are already freed (opt_release). */
int opt_parse(const struct opt_cmd *cmd, int argc, char **argv);

/* The help: usage, about, one line per option (and -h, --help). */
void opt_help(const struct opt_cmd *cmd, FILE *out);

/* "dcrawl CMD: <message>" and the usage line on stderr, opt_release(cmd);
 * returns OPT_USAGE. For checks that rows cannot express (required
 * options). */
int opt_usage_error(const struct opt_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Free the lists that cmd's rows filled. */
void opt_release(const struct opt_cmd *cmd);

#endif
