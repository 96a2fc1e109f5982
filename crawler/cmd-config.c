/*
 * cmd-config.c: `dcrawl config`: every setting in effect after the four
 * sources (default, --config file, DCRAWL_* environment, --set), one
 * `key=value` per line in table order; with --show-origin each line starts
 * with where the value came from and a tab, like `git config --list
 * --show-origin`: default, file:PATH:LINE, env:VARIABLE or --set.
 * A password (redis.password, the one in redis.url) is shown as ***.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crawler.h"
#include "frontier.h"

struct config_print {
    const struct conf *c;
    int show_origin;
};

static void print_key(void *ud, const char *key, const char *value,
                      const char *def, const char *help)
{
    const struct config_print *p = ud;
    char buf[4200];

    (void)def;
    (void)help;
    if (p->show_origin)
        printf("%s\t", conf_origin(p->c, key, buf, sizeof(buf)));
    if (strcmp(key, "redis.url") == 0) {
        frontier_url_redact(value, buf, sizeof(buf));
        value = buf;
    } else if (conf_key_secret(key) && *value) {
        value = "***";
    }
    printf("%s=%s\n", key, value);
}

int cmd_config(int argc, char **argv)
{
    struct cli_conf cc = {0};
    struct conf c;
    int show_origin = 0, rc;
    const struct opt opts[] = {
        OPT_CONF_ROWS(&cc),
        OPT_FLAG_ROW(0, "show-origin", &show_origin,
                     "start each line with where the value came from:\n"
                     "default, file:PATH:LINE, env:VARIABLE or --set"),
        OPT_END_ROW,
    };
    const struct opt_cmd cmd = {
        "config",
        "usage: dcrawl config [--config FILE] [--set KEY=VALUE]... [--show-origin]\n",
        "Prints every setting in effect, one key=value per line, after the\n"
        "built-in defaults, the --config file, the DCRAWL_<SECTION>_<KEY>\n"
        "environment and --set, in that order (a later source wins). Exit\n"
        "status 0, or 2 for bad usage or a bad setting.\n",
        opts};
    struct config_print p = {&c, 0};

    rc = opt_parse(&cmd, argc, argv);
    if (rc != OPT_RUN)
        return rc;
    rc = cli_conf_apply(&cc, &c);
    opt_release(&cmd);
    if (rc)
        return 2;
    p.show_origin = show_origin;
    conf_foreach(&c, print_key, &p);
    rc = fflush(stdout) ? 1 : 0;
    conf_release(&c);
    return rc;
}
