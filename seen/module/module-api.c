/*
 * module-api.c: fetches the Redis module API functions (module-api.h) by
 * name through the server's GetApi, as the documented ABI prescribes.
 */
#include "module-api.h"

#define MODULE_API_DEFINE(ret, name, params) ret(*RedisModule_##name) params;
MODULE_API_FUNCS(MODULE_API_DEFINE)
#undef MODULE_API_DEFINE

typedef int (*get_api_fn)(const char *name, void *out);

int module_api_init(RedisModuleCtx *ctx, const char *name, int ver)
{
    get_api_fn get_api = *(get_api_fn *)(void *)ctx;
    int rc = REDISMODULE_OK;

#define MODULE_API_FETCH(ret, fn, params)                                  \
    if (get_api("RedisModule_" #fn, (void *)&RedisModule_##fn) !=         \
        REDISMODULE_OK)                                                    \
        rc = REDISMODULE_ERR;
    MODULE_API_FUNCS(MODULE_API_FETCH)
#undef MODULE_API_FETCH
    if (rc != REDISMODULE_OK)
        return rc;
    RedisModule_SetModuleAttribs(ctx, name, ver, REDISMODULE_APIVER_1);
    return REDISMODULE_OK;
}
