/* SPDX-License-Identifier: MIT */
/*
 * Small helpers shared by every part of bpfbroker: cleanup attributes and
 * ownership handover in the style of systemd and dbus-broker.
 */
#pragma once

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

/* Hand ownership of a pointer or fd over to the caller, leaving NULL / -EBADF behind. */
#define TAKE_PTR(p)                                                                                \
	({                                                                                         \
		__typeof__(p) _p = (p);                                                            \
		(p) = NULL;                                                                        \
		_p;                                                                                \
	})
#define TAKE_FD(fd)                                                                                \
	({                                                                                         \
		int _fd = (fd);                                                                    \
		(fd) = -EBADF;                                                                     \
		_fd;                                                                               \
	})

/*
 * Define funcp(type *p), which calls func(*p) unless *p is NULL: the cleanup function for
 * _cleanup_(funcp) on a variable of that type, as systemd spells it. One definition style for
 * every resource type; freep and closep below are the two that need more.
 */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                                                    \
	static inline void func##p(type *p)                                                        \
	{                                                                                          \
		if (*p)                                                                            \
			func(*p);                                                                  \
	}                                                                                          \
	struct __useless_struct_to_allow_trailing_semicolon__

static inline void freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

/*
 * close() that keeps errno, for cleanup paths. Returns -EBADF, our "no fd" (never -1, which
 * kernel and libbpf interfaces give meanings of their own), so callers can write
 * fd = safe_close(fd).
 */
static inline int safe_close(int fd)
{
	if (fd >= 0) {
		int saved = errno;
		close(fd);
		errno = saved;
	}
	return -EBADF;
}

static inline void closep(int *fd)
{
	safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

DEFINE_TRIVIAL_CLEANUP_FUNC(FILE *, fclose);
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void close_many(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fds[i] = safe_close(fds[i]);
}

/* Saturating arithmetic on sizes a client chooses: UINT64_MAX rather than a wrap to small. */
static inline uint64_t u64_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static inline uint64_t u64_mul_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* Map a libbpf/libc-style return (negative errno or -1 + errno) to a negative errno. */
static inline int negative_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}
