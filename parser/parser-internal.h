/*
 * parser-internal.h: helpers shared between the parser module's files and
 * its unit tests.
 *
 * Code outside of the parser module should use only the public functions
 * defined in "parser.h", and should *not* include this file.
 */
#ifndef DC_PARSER_INTERNAL_H
#define DC_PARSER_INTERNAL_H

#include <stddef.h>

#include "parser.h"

/* html.c: bytes of arena memory p holds right now (chunks, headers
 * included). For tests of the arena's reuse and shrink policy. */
size_t parser__arena_bytes(const struct parser *p);

#endif
