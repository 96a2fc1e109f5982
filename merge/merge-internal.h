/*
 * merge-internal.h: what the files of the merge module share.
 *
 * Code outside of the merge module should use only the public functions
 * defined in "merge.h", and should *not* include this file.
 */
#ifndef DC_MERGE_INTERNAL_H
#define DC_MERGE_INTERNAL_H

#include "merge.h"
#include "warc.h"

#endif
