/*
 * module-api.h: the subset of the Redis module API (ABI version 1) that
 * dcrawl-seen.so uses, declared from the documented interface (no
 * redismodule.h is needed to build). Every function is a pointer fetched by
 * name at load time through the GetApi function that the server stores as
 * the first pointer-sized field of the RedisModuleCtx given to
 * RedisModule_OnLoad (module_api_init). Checked against redis-server 7.0.
 *
 * Thread rules: the pointers are written once in OnLoad, then only read.
 */
#ifndef DC_MODULE_API_H
#define DC_MODULE_API_H

#include <stddef.h>
#include <stdint.h>

#define REDISMODULE_OK 0
#define REDISMODULE_ERR 1
#define REDISMODULE_APIVER_1 1
#define REDISMODULE_READ (1 << 0)
#define REDISMODULE_WRITE (1 << 1)
#define REDISMODULE_KEYTYPE_EMPTY 0
#define REDISMODULE_KEYTYPE_STRING 1
#define REDISMODULE_KEYTYPE_LIST 2
#define REDISMODULE_KEYTYPE_HASH 3
#define REDISMODULE_KEYTYPE_ZSET 5
#define REDISMODULE_KEYTYPE_MODULE 6
#define REDISMODULE_TYPE_METHOD_VERSION_1 1
#define REDISMODULE_LIST_HEAD 0
#define REDISMODULE_LIST_TAIL 1
#define REDISMODULE_HASH_NONE 0
#define REDISMODULE_HASH_DELETE ((RedisModuleString *)(long)1)
#define REDISMODULE_REPLY_STRING 0
#define REDISMODULE_REPLY_INTEGER 2
#define REDISMODULE_ZADD_XX (1 << 0)
#define REDISMODULE_POSTPONED_ARRAY_LEN -1
#define REDISMODULE_ERRORMSG_WRONGTYPE \
    "WRONGTYPE Operation against a key holding the wrong kind of value"

typedef struct RedisModuleCtx RedisModuleCtx;
typedef struct RedisModuleKey RedisModuleKey;
typedef struct RedisModuleString RedisModuleString;
typedef struct RedisModuleIO RedisModuleIO;
typedef struct RedisModuleType RedisModuleType;
typedef struct RedisModuleDigest RedisModuleDigest;
typedef struct RedisModuleCallReply RedisModuleCallReply;

typedef int (*RedisModuleCmdFunc)(RedisModuleCtx *ctx,
                                  RedisModuleString **argv, int argc);

/* Version 1 of the type methods: the server reads only these fields. */
typedef struct RedisModuleTypeMethods {
    uint64_t version;
    void *(*rdb_load)(RedisModuleIO *rdb, int encver);
    void (*rdb_save)(RedisModuleIO *rdb, void *value);
    void (*aof_rewrite)(RedisModuleIO *aof, RedisModuleString *key,
                        void *value);
    size_t (*mem_usage)(const void *value);
    void (*digest)(RedisModuleDigest *digest, void *value);
    void (*free)(void *value);
} RedisModuleTypeMethods;

/* X(return type, name, parameters) for every function used. */
#define MODULE_API_FUNCS(X)                                                   \
    X(void *, Alloc, (size_t bytes))                                          \
    X(void *, Calloc, (size_t nmemb, size_t size))                            \
    X(void *, Realloc, (void *ptr, size_t bytes))                             \
    X(void, Free, (void *ptr))                                                \
    X(void, SetModuleAttribs, (RedisModuleCtx * ctx, const char *name,        \
                              int ver, int apiver))                           \
    X(int, CreateCommand, (RedisModuleCtx * ctx, const char *name,           \
                           RedisModuleCmdFunc func, const char *strflags,     \
                           int firstkey, int lastkey, int keystep))           \
    X(RedisModuleType *, CreateDataType, (RedisModuleCtx * ctx,              \
                                          const char *name, int encver,       \
                                          RedisModuleTypeMethods *methods))   \
    X(RedisModuleKey *, OpenKey, (RedisModuleCtx * ctx,                      \
                                  RedisModuleString * name, int mode))        \
    X(void, CloseKey, (RedisModuleKey * key))                                 \
    X(int, DeleteKey, (RedisModuleKey * key))                                 \
    X(int, KeyType, (RedisModuleKey * key))                                   \
    X(RedisModuleType *, ModuleTypeGetType, (RedisModuleKey * key))          \
    X(void *, ModuleTypeGetValue, (RedisModuleKey * key))                     \
    X(int, ModuleTypeSetValue, (RedisModuleKey * key, RedisModuleType *mt,   \
                                void *value))                                 \
    X(const char *, StringPtrLen, (const RedisModuleString *s, size_t *len)) \
    X(int, ReplyWithStringBuffer, (RedisModuleCtx * ctx, const char *buf,    \
                                   size_t len))                               \
    X(int, ReplyWithError, (RedisModuleCtx * ctx, const char *err))          \
    X(int, ReplyWithLongLong, (RedisModuleCtx * ctx, long long ll))          \
    X(int, ReplyWithNull, (RedisModuleCtx * ctx))                            \
    X(int, ReplyWithArray, (RedisModuleCtx * ctx, long len))                 \
    X(void, AutoMemory, (RedisModuleCtx * ctx))                              \
    X(int, IsKeysPositionRequest, (RedisModuleCtx * ctx))                    \
    X(void, KeyAtPos, (RedisModuleCtx * ctx, int pos))                       \
    X(long long, Milliseconds, (void))                                       \
    X(RedisModuleString *, CreateString, (RedisModuleCtx * ctx,             \
                                          const char *ptr, size_t len))      \
    X(int, StringToLongLong, (const RedisModuleString *s, long long *ll))    \
    X(size_t, ValueLength, (RedisModuleKey * key))                           \
    X(RedisModuleString *, ListPop, (RedisModuleKey * key, int where))       \
    X(int, ZsetAdd, (RedisModuleKey * key, double score,                     \
                     RedisModuleString * ele, int *flagsptr))                \
    X(int, ZsetRem, (RedisModuleKey * key, RedisModuleString * ele,          \
                     int *deleted))                                          \
    X(int, ZsetFirstInScoreRange, (RedisModuleKey * key, double min,         \
                                   double max, int minex, int maxex))        \
    X(RedisModuleString *, ZsetRangeCurrentElement, (RedisModuleKey * key,  \
                                                     double *score))         \
    X(int, ZsetRangeNext, (RedisModuleKey * key))                            \
    X(int, ZsetRangeEndReached, (RedisModuleKey * key))                      \
    X(void, ZsetRangeStop, (RedisModuleKey * key))                           \
    X(int, HashGet, (RedisModuleKey * key, int flags, ...))                  \
    X(int, HashSet, (RedisModuleKey * key, int flags, ...))                  \
    X(RedisModuleCallReply *, Call, (RedisModuleCtx * ctx,                  \
                                     const char *cmdname, const char *fmt,   \
                                     ...))                                   \
    X(int, CallReplyType, (RedisModuleCallReply * reply))                    \
    X(long long, CallReplyInteger, (RedisModuleCallReply * reply))           \
    X(int, ListPush, (RedisModuleKey * key, int where,                       \
                      RedisModuleString * ele))                              \
    X(int, ZsetIncrby, (RedisModuleKey * key, double score,                  \
                        RedisModuleString * ele, int *flagsptr,              \
                        double *newscore))                                   \
    X(const char *, CallReplyStringPtr, (RedisModuleCallReply * reply,      \
                                         size_t *len))                       \
    X(int, WrongArity, (RedisModuleCtx * ctx))                                \
    X(int, ReplicateVerbatim, (RedisModuleCtx * ctx))                         \
    X(void, SaveUnsigned, (RedisModuleIO * io, uint64_t value))               \
    X(uint64_t, LoadUnsigned, (RedisModuleIO * io))                           \
    X(void, SaveStringBuffer, (RedisModuleIO * io, const char *str,          \
                               size_t len))                                   \
    X(char *, LoadStringBuffer, (RedisModuleIO * io, size_t *len))           \
    X(void, EmitAOF, (RedisModuleIO * io, const char *cmd, const char *fmt,  \
                      ...))                                                   \
    X(void, Log, (RedisModuleCtx * ctx, const char *level, const char *fmt,  \
                  ...))

#define MODULE_API_DECLARE(ret, name, params) \
    extern ret(*RedisModule_##name) params;
MODULE_API_FUNCS(MODULE_API_DECLARE)
#undef MODULE_API_DECLARE

/* Fetch every function above and register the module as (name, ver).
 * Returns REDISMODULE_OK, or REDISMODULE_ERR when one is missing. */
int module_api_init(RedisModuleCtx *ctx, const char *name, int ver);

#endif
