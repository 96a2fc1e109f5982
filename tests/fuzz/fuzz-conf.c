/*
 * fuzz-conf.c: the config file parser (conf/conf.c, conf-table.c).
 *
 * Input: the file. It is loaded over the defaults; then every key is
 * formatted back (conf_foreach) and asked for its origin, and the first
 * line is also applied as a --set assignment. Checks: an error comes with
 * a message; every key formats to a string.
 */
#include <string.h>

#include "conf.h"
#include "fuzz.h"

static void visit(void *ud, const char *key, const char *value,
                  const char *def, const char *help)
{
    const struct conf *c = ud;
    char buf[512];

    FUZZ_CHECK(key && value && def && help);
    FUZZ_CHECK(conf_origin(c, key, buf, sizeof(buf)) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct conf c;
    char path[64], err[512], *line;
    const char *nl = memchr(data, '\n', size);
    int fd, rc;

    fd = fuzz_memfile(data, size, path, sizeof(path));
    FUZZ_CHECK(fd >= 0);
    conf_init(&c);
    err[0] = '\0';
    rc = conf_load_file(&c, path, err, sizeof(err));
    FUZZ_CHECK(rc == DC_OK || err[0] != '\0');
    conf_foreach(&c, visit, &c);
    line = strndup((const char *)data, nl ? (size_t)(nl - (const char *)data)
                                          : size);
    err[0] = '\0';
    if (conf_set(&c, line, err, sizeof(err)) != DC_OK)
        FUZZ_CHECK(err[0] != '\0');
    conf_foreach(&c, visit, &c);
    free(line);
    conf_release(&c);
    close(fd);
    return 0;
}
