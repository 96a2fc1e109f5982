/*
 * fuzz.h: what the libFuzzer harnesses share: turning the input into a
 * file (for readers that take a path), and aborting when a property the
 * module documents does not hold (libFuzzer reports it as a crash).
 */
#ifndef DC_FUZZ_H
#define DC_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,          \
                    __LINE__, #cond);                                        \
            abort();                                                         \
        }                                                                    \
    } while (0)

/* An in-memory file holding data[0..n) and its path (/proc/self/fd/N) in
 * path; returns the fd (close it when done), -1 on error. */
static inline int fuzz_memfile(const void *data, size_t n, char *path,
                               size_t cap)
{
    int fd = memfd_create("fuzz", MFD_CLOEXEC);
    const char *p = data;

    if (fd < 0)
        return -1;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
