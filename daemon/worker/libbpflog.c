/* SPDX-License-Identifier: MIT */
#include "libbpflog.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"
#include "modbtf.h"

static char kept[LIBBPFLOG_MAX + 1];
static size_t kept_len;
static bool kept_cut;

#define CUT_NOTE "\n[libbpf's log cut here: over the broker's limit]\n"

int libbpflog_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	size_t room = LIBBPFLOG_MAX - kept_len;
	int n;

	/* Debug lines are many thousands for one CO-RE object, and no cause is only there. */
	if (level == LIBBPF_DEBUG || kept_cut)
		return 0;
	n = vsnprintf(kept + kept_len, room + 1, fmt, ap);
	if (n < 0)
		return 0;
	if ((size_t)n <= room) {
		kept_len += (size_t)n;
		return 0;
	}
	/* Over the limit: the end of the room makes way for the note. */
	kept_len = LIBBPFLOG_MAX - (sizeof(CUT_NOTE) - 1);
	memcpy(kept + kept_len, CUT_NOTE, sizeof(CUT_NOTE));
	kept_len += sizeof(CUT_NOTE) - 1;
	kept_cut = true;
	return 0;
}

void libbpflog_reset(void)
{
	kept_len = 0;
	kept_cut = false;
	kept[0] = '\0';
}

const char *libbpflog_text(size_t *ret_len)
{
	kept[kept_len] = '\0';
	*ret_len = kept_len;
	return kept;
}

/*
 * libbpf 1.1.2's messages (src/libbpf.c, btf.c), as fnmatch() patterns for
 * what follows "libbpf: ". The first pattern that matches decides; a line
 * that none matches is libbpf's own failure.
 */
static const struct {
	const char *pattern;
	enum libbpflog_kind kind;
	bool kernel; /* SOFT: the kernel refused something libbpf then went on without */
} patterns[] = {
	/* Wrappers printed after the line that names the cause. */
	{"failed to load object '*", LIBBPFLOG_NOISE},
	{"prog '*': failed to load: *", LIBBPFLOG_NOISE},
	{"prog '*': failed to prepare load attributes: *", LIBBPFLOG_NOISE},
	{"prog '*': failed to relocate calls: *", LIBBPFLOG_NOISE},
	{"prog '*': failed to relocate data references: *", LIBBPFLOG_NOISE},
	{"prog '*': relo #*: failed to relocate: *", LIBBPFLOG_NOISE},
	{"failed to perform CO-RE relocations: *", LIBBPFLOG_NOISE},
	{"BTF is mandatory, can't proceed.*", LIBBPFLOG_NOISE},
	{"failed to load BPF skeleton *", LIBBPFLOG_NOISE},
	/* Framing of logs printed whole, and advice for root that does not apply. */
	{"*-- BEGIN PROG LOAD LOG --*", LIBBPFLOG_NOISE},
	{"*-- END PROG LOAD LOG --*", LIBBPFLOG_NOISE},
	{"*-- BEGIN BTF LOAD LOG -*", LIBBPFLOG_NOISE},
	{"*-- END BTF LOAD LOG -*", LIBBPFLOG_NOISE},
	{"permission error while running as root*", LIBBPFLOG_NOISE},
	/* Notes and warnings libbpf goes on after. */
	{"elf: skipping *", LIBBPFLOG_NOISE},
	{"Error in bpf_create_map_xattr(*). Retrying without BTF.", LIBBPFLOG_SOFT, true},
	{"Error loading .BTF into kernel: *", LIBBPFLOG_SOFT, true},
	{"BTF loading error: *", LIBBPFLOG_SOFT, true},
	{"prog '*': failed to bind map '*': *", LIBBPFLOG_SOFT, true},
	{"Detection of kernel * support failed: *", LIBBPFLOG_SOFT, false},
	{"prog '*': missing .BTF.ext *", LIBBPFLOG_SOFT, false},
	/* The kernel refused a program: the verifier (its log says why), or the attributes. */
	{"prog '*': BPF program load failed: *", LIBBPFLOG_PROG},
	/* The kernel refused a map, its contents, a pin. */
	{"map '*': failed to create: *", LIBBPFLOG_KERNEL},
	{"map '*': failed to create inner map: *", LIBBPFLOG_KERNEL},
	{"map '*': failed to initialize slot \\[*", LIBBPFLOG_KERNEL},
	{"map '*': failed to auto-pin at *", LIBBPFLOG_KERNEL},
	{"Error setting initial map(*) contents: *", LIBBPFLOG_KERNEL},
	{"Error freezing map(*) as read-only: *", LIBBPFLOG_KERNEL},
	{"failed to pin map: *", LIBBPFLOG_KERNEL},
	{"couldn't retrieve pinned map '*': *", LIBBPFLOG_KERNEL},
};

static size_t pattern_find(const char *line)
{
	for (size_t i = 0; i < ARRAY_SIZE(patterns); i++)
		if (fnmatch(patterns[i].pattern, line, 0) == 0)
			return i;
	return ARRAY_SIZE(patterns);
}

enum libbpflog_kind libbpflog_classify(const char *line)
{
	size_t i = pattern_find(line);

	return i < ARRAY_SIZE(patterns) ? patterns[i].kind : LIBBPFLOG_LIBBPF;
}

bool libbpflog_soft_is_kernel(const char *line)
{
	size_t i = pattern_find(line);

	return i < ARRAY_SIZE(patterns) && patterns[i].kind == LIBBPFLOG_SOFT && patterns[i].kernel;
}

/* The first 'quoted' name in line ("prog 'p': ...", "extern (func ksym) 'f': ..."). */
static void quoted_name(const char *line, char *buf, size_t size)
{
	const char *a = strchr(line, '\''), *b = a ? strchr(a + 1, '\'') : NULL;

	buf[0] = '\0';
	if (b)
		snprintf(buf, size, "%.*s", (int)(b - a - 1), a + 1);
}

bool libbpflog_cause(const char *log, size_t len, struct libbpflog_cause *ret)
{
	static const char prefix[] = "libbpf: ";
	char soft[sizeof(ret->line)] = "", line[sizeof(ret->line)];
	const char *p = log, *end = log + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		enum libbpflog_kind kind;

		/* Lines without the prefix are the inside of a log libbpf printed whole. */
		if (n >= sizeof(prefix) - 1 && memcmp(p, prefix, sizeof(prefix) - 1) == 0) {
			snprintf(line, sizeof(line), "%.*s", (int)(n - (sizeof(prefix) - 1)),
				 p + sizeof(prefix) - 1);
			kind = libbpflog_classify(line);
			if (kind == LIBBPFLOG_SOFT) {
				snprintf(soft, sizeof(soft), "%s", line);
			} else if (kind != LIBBPFLOG_NOISE) {
				ret->kind = kind;
				ret->kernel = kind != LIBBPFLOG_LIBBPF;
				snprintf(ret->line, sizeof(ret->line), "%s", line);
				quoted_name(line, ret->name, sizeof(ret->name));
				return true;
			}
		}
		p += n + 1;
	}
	if (!soft[0])
		return false;
	ret->kind = libbpflog_soft_is_kernel(soft) ? LIBBPFLOG_KERNEL : LIBBPFLOG_LIBBPF;
	ret->kernel = ret->kind == LIBBPFLOG_KERNEL;
	snprintf(ret->line, sizeof(ret->line), "%s", soft);
	quoted_name(soft, ret->name, sizeof(ret->name));
	return true;
}

bool libbpflog_verifier_reason(const char *log, size_t len, char *buf, size_t size)
{
	const char *p = log, *end = log + strnlen(log, len), *last = NULL;
	size_t last_n = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);

		if (n >= 10 && strncmp(p, "processed ", 10) == 0 && last)
			break;
		if (n > 0) {
			last = p;
			last_n = n;
		}
		p += n + 1;
	}
	if (!last)
		return false;
	snprintf(buf, size, "%.*s", (int)last_n, last);
	return true;
}

const char *libbpflog_error_text(int err, char *buf, size_t size)
{
	if (libbpf_strerror(err, buf, size) < 0)
		snprintf(buf, size, "%s", strerror(err > 0 ? err : -err));
	return buf;
}

/*
 * What libbpf could not find in vmlinux's BTF, by the line that says so:
 * a kernel module's BTF may have it, and libbpf 1.1.2 in a worker never
 * looks there (the workers' seccomp filter, sandbox.c, hides them).
 */
static const char *const missing_in_vmlinux[] = {
	"extern (var ksym) '*': not found in kernel BTF",
	"extern (func ksym) '*': not found in kernel or module BTFs",
	"prog '*': failed to find kernel BTF type ID of '*': *",
};

void libbpflog_module_hint(const char *name, char *buf, size_t size)
{
	char module[64];

	buf[0] = '\0';
	if (modbtf_find(name, module, sizeof(module)) == 0)
		snprintf(buf, size,
			 " (kernel module %s has it, and the broker lets libbpf look in vmlinux's "
			 "BTF only)",
			 module);
}

static void module_hint(const char *line, char *buf, size_t size)
{
	char name[128];
	const char *end = strrchr(line, '\''), *start = end;

	buf[0] = '\0';
	if (!end)
		return;
	/* The symbol is the last quoted name on the line. */
	while (start > line && *--start != '\'')
		;
	if (start == end || *start != '\'')
		return;
	for (size_t i = 0; i < ARRAY_SIZE(missing_in_vmlinux); i++) {
		if (fnmatch(missing_in_vmlinux[i], line, 0) != 0)
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(end - start - 1), start + 1);
		libbpflog_module_hint(name, buf, size);
		return;
	}
}

void libbpflog_failure(const char *vlog, size_t vlog_len, int err, const char *prog, char *buf,
		       size_t size)
{
	struct libbpflog_cause c = {};
	char reason[512], text[128], hint[256];
	bool found = libbpflog_cause(kept, kept_len, &c);

	if (!found && prog) {
		/* A load without libbpf: the one bpf() call the kernel answered. */
		c.kind = LIBBPFLOG_PROG;
		snprintf(c.name, sizeof(c.name), "%s", prog);
	}
	libbpflog_error_text(err, text, sizeof(text));
	if (c.kind == LIBBPFLOG_PROG) {
		if (libbpflog_verifier_reason(vlog, vlog_len, reason, sizeof(reason)))
			snprintf(buf, size, "the kernel's verifier refused program '%s': %s",
				 c.name, reason);
		else
			snprintf(buf, size, "the kernel refused program '%s': %s", c.name, text);
	} else if (found && c.kernel) {
		snprintf(buf, size, "the kernel refused: %s", c.line);
	} else if (found) {
		module_hint(c.line, hint, sizeof(hint));
		snprintf(buf, size, "libbpf could not load the object: %s%s", c.line, hint);
	} else {
		snprintf(buf, size, "libbpf could not load the object: %s", text);
	}
}
