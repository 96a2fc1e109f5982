/*
 * front-module.h: the frontier's native commands in dcrawl-seen.so, each
 * a Lua script of frontier/lua/ as a command, with the script's KEYS,
 * ARGV and reply (COMMAND numkeys KEYS... ARGV...): DCFRONT.POP is
 * pop.lua (pop-module.c), DCFRONT.COMPLETE is complete.lua
 * (complete-module.c), DCFRONT.ADMIT is admit-mod.lua (admit-module.c).
 * front-state.h holds what they share with each other and with the
 * scripts' common.lua: a host's state field. frontier/redis.c sends them instead of the scripts
 * when the server has them.
 */
#ifndef DC_FRONT_MODULE_H
#define DC_FRONT_MODULE_H

#include "module-api.h"

int front_cmd_pop(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int front_cmd_complete(RedisModuleCtx *ctx, RedisModuleString **argv,
                       int argc);
int front_cmd_admit(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
/* The same three on the native queue layout (level-type.h): h:<d> is one
 * level value holding the ready set and the host queues; the queue keys
 * and the prefix passed stay unused (same KEYS and ARGV). */
int front_cmd_qpop(RedisModuleCtx *ctx, RedisModuleString **argv, int argc);
int front_cmd_qcomplete(RedisModuleCtx *ctx, RedisModuleString **argv,
                        int argc);
int front_cmd_qadmit(RedisModuleCtx *ctx, RedisModuleString **argv,
                     int argc);

/* For getkeys-api: when Redis asks for the key positions, declare the
 * numkeys keys after argv[1] and return 1. */
int front_keys_request(RedisModuleCtx *ctx, RedisModuleString **argv,
                       int argc);

/* The call "CMD numkeys KEYS... ARGV..." of a command whose keys are nhead
 * fixed ones then groups of kper, and whose arguments are nahead fixed
 * ones, aper per group, then tail more: the number of groups, with *keys
 * and *args at the first key and argument, or -1 when argc does not fit
 * (wrong arity). */
long long front_groups(RedisModuleString **argv, int argc, int nhead,
                       int kper, int nahead, int aper, int tail,
                       RedisModuleString ***keys, RedisModuleString ***args);

#endif
