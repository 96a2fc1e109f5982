/*
 * options.c: the option-table parser of options.h. One pass over argv:
 * each word is `--`, a long option, a short option or a positional; a row
 * is found for it and the value stored through the row's kind (store()).
 * -h/--help is looked for only where an option may stand, after the rows
 * (a row could never be named help). Errors are one line plus the usage
 * text on stderr and OPT_USAGE; nothing is stored past the first error.
 * Whenever the command is to stop (help, error) the lists are freed here.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "crawler.h"
#include "options.h"

#define HELP_COL 20

/* Where the parse is. */
struct opt_state {
    const struct opt_cmd *cmd;
    int argc, i;
    char **argv;
    size_t npos; /* positional words taken so far */
};

static int verror(const struct opt_cmd *cmd, const char *fmt, va_list ap)
{
    fprintf(stderr, "dcrawl %s: ", cmd->name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fputs(cmd->usage, stderr);
    return OPT_USAGE;
}

int opt_usage_error(const struct opt_cmd *cmd, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = verror(cmd, fmt, ap);
    va_end(ap);
    opt_release(cmd);
    return rc;
}

static void list_push(struct opt_list *l, const char *word)
{
    xgrow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v));
    l->v[l->n++] = word;
}

/* "--name" or "-x", for messages. */
static const char *opt_label(const struct opt *o, char *buf, size_t cap)
{
    if (o->name)
        snprintf(buf, cap, "--%s", o->name);
    else
        snprintf(buf, cap, "-%c", o->letter);
    return buf;
}

/* A number in o's range into *out; 0, or -1 when it is not one. */
static int parse_number(const struct opt *o, const char *val, double *out)
{
    char *end;
    double d;

    errno = 0;
    d = o->kind == OPT_INT ? (double)strtoll(val, &end, 10) : strtod(val, &end);
    if (!*val || *end || errno || !isfinite(d) || d < o->min || d > o->max)
        return -1;
    *out = d;
    return 0;
}

static int store(struct opt_state *s, const struct opt *o, const char *val)
{
    char label[64];
    double d;

    switch (o->kind) {
    case OPT_FLAG:
        *(int *)o->dst = 1;
        break;
    case OPT_STRING:
    case OPT_ARG:
        *(const char **)o->dst = val;
        break;
    case OPT_LIST:
    case OPT_ARGS:
        list_push(o->dst, val);
        break;
    case OPT_SETTING:
        cli_conf_kv(o->dst, o->key, val);
        break;
    case OPT_INT:
    case OPT_DOUBLE:
        if (parse_number(o, val, &d))
            return opt_usage_error(
                s->cmd, "%s wants %s in %.15g..%.15g, not '%s'",
                opt_label(o, label, sizeof(label)),
                o->kind == OPT_INT ? "an integer" : "a number", o->min, o->max,
                val);
        if (o->kind == OPT_INT)
            *(int *)o->dst = (int)d;
        else
            *(double *)o->dst = d;
        break;
    case OPT_END:
        break;
    }
    return OPT_RUN;
}

/* The value of option o found in argv[s->i]; inline is the text after
 * '=' or after the short letter, or NULL. */
static int take_value(struct opt_state *s, const struct opt *o,
                      const char *inline_val)
{
    char label[64];
    const char *next = s->i + 1 < s->argc ? s->argv[s->i + 1] : NULL;

    if (o->kind == OPT_FLAG) {
        if (inline_val)
            return opt_usage_error(s->cmd, "%s takes no value",
                                   opt_label(o, label, sizeof(label)));
        return store(s, o, NULL);
    }
    if (inline_val)
        return store(s, o, inline_val);
    if (o->dflt && (!next || next[0] == '-'))
        return store(s, o, o->dflt);
    if (!next)
        return opt_usage_error(s->cmd, "%s needs a value (%s)",
                               opt_label(o, label, sizeof(label)), o->arg);
    s->i++;
    return store(s, o, next);
}

static int show_help(const struct opt_cmd *cmd)
{
    opt_help(cmd, stdout);
    opt_release(cmd);
    return 0;
}

static int parse_long(struct opt_state *s, const char *word)
{
    const char *name = word + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const struct opt *o;

    for (o = s->cmd->opts; o->kind != OPT_END; o++)
        if (o->name && strlen(o->name) == len && !strncmp(o->name, name, len))
            return take_value(s, o, eq ? eq + 1 : NULL);
    if (!strcmp(name, "help"))
        return show_help(s->cmd);
    return opt_usage_error(s->cmd, "unknown option --%.*s", (int)len, name);
}

static int parse_short(struct opt_state *s, const char *word)
{
    const struct opt *o;

    for (o = s->cmd->opts; o->kind != OPT_END; o++)
        if (o->letter && o->letter == word[1]) {
            if (o->kind == OPT_FLAG && word[2])
                break;
            return take_value(s, o, word[2] ? word + 2 : NULL);
        }
    if (!strcmp(word, "-h"))
        return show_help(s->cmd);
    return opt_usage_error(s->cmd, "unknown option %s", word);
}

static int positional(struct opt_state *s, const char *word)
{
    const struct opt *o;
    size_t k = 0;

    for (o = s->cmd->opts; o->kind != OPT_END; o++) {
        if (o->kind == OPT_ARGS)
            return store(s, o, word);
        if (o->kind == OPT_ARG && k++ == s->npos) {
            s->npos++;
            return store(s, o, word);
        }
    }
    return opt_usage_error(s->cmd, "unexpected argument '%s'", word);
}

int opt_parse(const struct opt_cmd *cmd, int argc, char **argv)
{
    struct opt_state s = {cmd, argc, 1, argv, 0};
    int only_positional = 0, rc = OPT_RUN;

    for (; rc == OPT_RUN && s.i < argc; s.i++) {
        const char *w = argv[s.i];
        if (only_positional || w[0] != '-' || !w[1])
            rc = positional(&s, w);
        else if (!strcmp(w, "--"))
            only_positional = 1;
        else if (w[1] == '-')
            rc = parse_long(&s, w);
        else
            rc = parse_short(&s, w);
    }
    return rc;
}

/* "  -q, --quiet" / "  --seeds FILE" / "  --watch [SECONDS]", padded. */
static void help_row(FILE *out, const struct opt *o)
{
    char label[128];
    const char *h = o->help, *nl;
    int n = 0;

    if (o->letter)
        n += snprintf(label + n, sizeof(label) - (size_t)n, "-%c%s", o->letter,
                      o->name ? ", " : "");
    if (o->name)
        n += snprintf(label + n, sizeof(label) - (size_t)n, "--%s", o->name);
    if (o->kind != OPT_FLAG)
        snprintf(label + n, sizeof(label) - (size_t)n,
                 o->dflt ? " [%s]" : " %s", o->arg);
    if (strlen(label) >= HELP_COL - 1)
        fprintf(out, "  %s\n%*s", label, HELP_COL + 2, "");
    else
        fprintf(out, "  %-*s", HELP_COL, label);
    while ((nl = strchr(h, '\n'))) {
        fprintf(out, "%.*s\n%*s", (int)(nl - h), h, HELP_COL + 2, "");
        h = nl + 1;
    }
    fprintf(out, "%s\n", h);
}

void opt_help(const struct opt_cmd *cmd, FILE *out)
{
    const struct opt *o;

    fprintf(out, "%s\n%s\n", cmd->usage, cmd->about);
    for (o = cmd->opts; o->kind != OPT_END; o++)
        if (o->name || o->letter)
            help_row(out, o);
    fprintf(out, "  %-*s%s\n", HELP_COL, "-h, --help", "this help");
}

void opt_release(const struct opt_cmd *cmd)
{
    const struct opt *o;

    for (o = cmd->opts; o->kind != OPT_END; o++)
        if (o->kind == OPT_LIST || o->kind == OPT_ARGS) {
            struct opt_list *l = o->dst;
            free(l->v);
            l->v = NULL;
            l->n = l->cap = 0;
        }
}
