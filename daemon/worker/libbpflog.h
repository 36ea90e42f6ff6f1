/* SPDX-License-Identifier: MIT */
/*
 * libbpf's messages during one request: kept (warnings and notes, not its
 * debug lines), and read for the one line that says why a load failed.
 *
 * libbpf ends every failure with wrappers ("failed to load object 'x'",
 * "prog 'p': failed to load: -22") after the line that names the cause
 * ("map 'm': failed to create: ...", "extern (func ksym) 'f': not found in
 * kernel or module BTFs"). A small table of libbpf 1.1.2's messages tells
 * the wrappers, the warnings it goes on after, and the kernel's refusals
 * from libbpf's own failures.
 */
#pragma once

#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* What was kept is cut at this many bytes (and says so). */
#define LIBBPFLOG_MAX (32u * 1024)

/* The print callback for libbpf_set_print(): keeps LIBBPF_WARN and LIBBPF_INFO. */
int libbpflog_print(enum libbpf_print_level level, const char *fmt, va_list ap);
/* Forget what was kept (a new request). */
void libbpflog_reset(void);
/* What was kept, NUL-terminated; *ret_len its length. */
const char *libbpflog_text(size_t *ret_len);

enum libbpflog_kind {
	LIBBPFLOG_NOISE, /* a wrapper or framing: never the cause */
	LIBBPFLOG_SOFT, /* a warning libbpf may go on after: the cause only if nothing else is */
	LIBBPFLOG_LIBBPF, /* libbpf itself could not do something */
	LIBBPFLOG_KERNEL, /* a bpf() call the kernel refused (a map, BTF, a pin) */
	LIBBPFLOG_PROG, /* the kernel refused a program: the verifier, mostly */
};

/* One of libbpf's lines, without its "libbpf: " prefix and newline. */
enum libbpflog_kind libbpflog_classify(const char *line);
/* Is a SOFT line the kernel's refusal (true) or libbpf's? */
bool libbpflog_soft_is_kernel(const char *line);

struct libbpflog_cause {
	enum libbpflog_kind kind; /* LIBBPF, KERNEL or PROG; NOISE: none found */
	bool kernel; /* the kernel refused (KERNEL, PROG, or a SOFT kernel line) */
	char line[512]; /* without "libbpf: " */
	char name[128]; /* the program, map or extern the line names in quotes, or "" */
};

/*
 * The cause in log (len bytes): the first line that is neither noise nor
 * soft (libbpf stops at the first error, then wraps it); else the last soft
 * one. false if libbpf said nothing that names one.
 */
bool libbpflog_cause(const char *log, size_t len, struct libbpflog_cause *ret);

/*
 * The line of a verifier log that says why it refused: the last non-empty
 * line before the "processed N insns" summary (or the last non-empty line).
 * false if the log is empty.
 */
bool libbpflog_verifier_reason(const char *log, size_t len, char *buf, size_t size);

/* libbpf's own error numbers (LIBBPF_ERRNO__*, 4000 and up) and the kernel's, as text. */
const char *libbpflog_error_text(int err, char *buf, size_t size);

/*
 * " (kernel module M has it, and the broker lets libbpf look in vmlinux's
 * BTF only)" if a kernel module's BTF has a type named name (an extern, an
 * attach target), else "": the words every "not found" says (modbtf.h).
 */
void libbpflog_module_hint(const char *name, char *buf, size_t size);

/*
 * The sentence a failed load's error says (err: the load's negative errno):
 * the kernel's verifier refused program 'p': <its reason> | the kernel
 * refused program 'p': <errno> | the kernel refused: <libbpf's line> |
 * libbpf could not load the object: <libbpf's line>, from what was kept and
 * the verifier's log (vlog, vlog_len bytes). prog names the one program of
 * a load without libbpf (raw instructions), or NULL. A missing extern or
 * attach target that a kernel module's BTF has says so (modbtf.h).
 */
void libbpflog_failure(const char *vlog, size_t vlog_len, int err, const char *prog, char *buf,
		       size_t size);
