/* SPDX-License-Identifier: MIT */
/*
 * OCI device rules to a cgroup_device program, exactly as runc 1.1.5
 * (libcontainer/cgroups/devices/devices_emulator.go, ebpf/devicefilter, and
 * the defaults of specconv.AllowedDevices) and crun 1.8.1 (src/libcrun/ebpf.c
 * and write_devices_resources_v2_internal in cgroup-resources.c) build it.
 *
 * The two differ, and a hook must not be more permissive than the runtime:
 *  - crun: its default rules first (they always win), then the config's rules
 *    from the last to the first; the first that matches decides; a rule with
 *    no condition at all ends the program; nothing matched: deny.
 *  - runc: the rules, then its defaults (so they always win too, except those
 *    of a device linux.devices lists by path), are replayed as cgroup v1
 *    would: an "a" rule (whatever its numbers and access) resets to allow-all
 *    or deny-all, other rules add or remove exceptions; a deny that would
 *    punch a hole into a wildcard allow is an error. The program checks the
 *    exceptions; nothing matched: the default.
 * In both, a rule matches an access only if the access asked for is a subset
 * of the rule's ("rw" open against a rule "r" does not match).
 */
#include "oci/devices.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"

#define ACC_ALL (BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD)

struct default_rule {
	char type;
	int major, minor;
	const char *access;
	const char *path; /* runc: dropped when linux.devices lists this path */
};

/* crun 1.8.1, write_devices_resources_v2_internal(): default_devices[]. */
static const struct default_rule crun_defaults[] = {
	{'c', -1, -1, "m", NULL},    {'b', -1, -1, "m", NULL}, {'c', 1, 3, "rwm", NULL},
	{'c', 1, 8, "rwm", NULL},    {'c', 1, 7, "rwm", NULL}, {'c', 5, 0, "rwm", NULL},
	{'c', 1, 5, "rwm", NULL},    {'c', 1, 9, "rwm", NULL}, {'c', 5, 1, "rwm", NULL},
	{'c', 136, -1, "rwm", NULL}, {'c', 5, 2, "rwm", NULL}, {'c', 10, 200, "rwm", NULL},
};

/* runc 1.1.5, specconv.AllowedDevices (no /dev/console: runc handles it apart). */
static const struct default_rule runc_defaults[] = {
	{'c', -1, -1, "m", NULL},	 {'b', -1, -1, "m", NULL},
	{'c', 1, 3, "rwm", "/dev/null"}, {'c', 1, 8, "rwm", "/dev/random"},
	{'c', 1, 7, "rwm", "/dev/full"}, {'c', 5, 0, "rwm", "/dev/tty"},
	{'c', 1, 5, "rwm", "/dev/zero"}, {'c', 1, 9, "rwm", "/dev/urandom"},
	{'c', 136, -1, "rwm", NULL},	 {'c', 5, 2, "rwm", NULL},
	{'c', 10, 200, "rwm", NULL},
};

struct prog {
	struct bpf_insn *insns;
	size_t n, cap;
	/* Both runtimes: crun's allowing blocks jump to runc's part (fixed up at the end). */
	bool chain;
	size_t *chain_at;
	size_t n_chain;
};

static void emit(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	/* oci_devices_program() sizes the buffer for the most any rule set emits. */
	if (p->n < p->cap)
		p->insns[p->n] = (struct bpf_insn){
			.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
	p->n++;
}

static unsigned access_bits(const char *access)
{
	unsigned bits = 0;

	/* Both runtimes ignore other letters here (runc refuses an empty access earlier). */
	for (const char *a = access ? access : ""; *a; a++)
		bits |= *a == 'r'   ? BPF_DEVCG_ACC_READ
			: *a == 'w' ? BPF_DEVCG_ACC_WRITE
			: *a == 'm' ? BPF_DEVCG_ACC_MKNOD
				    : 0;
	return bits;
}

/* r2 = device type, r3 = access, r4 = major, r5 = minor (struct bpf_cgroup_dev_ctx). */
static void emit_prologue(struct prog *p)
{
	emit(p, BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_1, 0, 0);
	emit(p, BPF_ALU | BPF_AND | BPF_K, BPF_REG_2, 0, 0, 0xffff);
	emit(p, BPF_LDX | BPF_MEM | BPF_W, BPF_REG_3, BPF_REG_1, 0, 0);
	emit(p, BPF_ALU | BPF_RSH | BPF_K, BPF_REG_3, 0, 0, 16);
	emit(p, BPF_LDX | BPF_MEM | BPF_W, BPF_REG_4, BPF_REG_1, 4, 0);
	emit(p, BPF_LDX | BPF_MEM | BPF_W, BPF_REG_5, BPF_REG_1, 8, 0);
}

/*
 * One block as both runtimes emit it: each test jumps past the rest of the
 * block when it fails; the block ends returning its verdict.
 */
static void emit_block(struct prog *p, bool has_type, int32_t type, unsigned access, bool has_major,
		       int32_t major, bool has_minor, int32_t minor, bool accept, uint8_t mov_class)
{
	bool has_access = access != ACC_ALL;
	int16_t left = (int16_t)(has_type + 3 * has_access + has_major + has_minor + 1);

	if (has_type)
		emit(p, BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 0, left--, type);
	if (has_access) {
		emit(p, BPF_ALU | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_3, 0, 0);
		emit(p, BPF_ALU | BPF_AND | BPF_K, BPF_REG_1, 0, 0, (int32_t)access);
		emit(p, BPF_JMP | BPF_JNE | BPF_X, BPF_REG_1, BPF_REG_3, (int16_t)(left - 2), 0);
		left = (int16_t)(left - 3);
	}
	if (has_major)
		emit(p, BPF_JMP | BPF_JNE | BPF_K, BPF_REG_4, 0, left--, major);
	if (has_minor)
		emit(p, BPF_JMP | BPF_JNE | BPF_K, BPF_REG_5, 0, left--, minor);
	emit(p, mov_class | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, accept);
	if (accept && p->chain) {
		/* The same length as the exit it replaces: the offsets above stay right. */
		p->chain_at[p->n_chain++] = p->n;
		emit(p, BPF_JMP | BPF_JA, 0, 0, 0, 0);
	} else {
		emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	}
}

/* crun's bpf_program_append_dev(): false once a rule without conditions ended the program. */
static bool crun_append(struct prog *p, const char *access, char type, int major, int minor,
			bool accept)
{
	unsigned bits = access_bits(access);
	bool has_type = type != 'a', has_major = major >= 0, has_minor = minor >= 0;

	/* crun takes every type but 'b' (and 'a') as a character device. */
	emit_block(p, has_type, type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR, bits,
		   has_major, major, has_minor, minor, accept, BPF_ALU64);
	return has_type || bits != ACC_ALL || has_major || has_minor;
}

static void crun_program(struct prog *p, const struct oci_device_config *c)
{
	bool open = true;

	for (size_t i = ARRAY_SIZE(crun_defaults); open && i-- > 0;) {
		const struct default_rule *d = &crun_defaults[i];

		open = crun_append(p, d->access, d->type, d->major, d->minor, true);
	}
	for (size_t i = c->n_rules; open && i-- > 0;) {
		const struct oci_device_rule *r = &c->rules[i];

		/* crun reads the numbers into an int, and the type's first letter. */
		open = crun_append(p, r->access, r->type ? r->type[0] : 'a',
				   r->has_major ? (int)r->major : -1,
				   r->has_minor ? (int)r->minor : -1, r->allow);
	}
	if (open) {
		emit(p, BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
		emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	}
}

/* runc's cgroup v1 emulator: a default and exceptions (type, major, minor) -> access. */
struct exception {
	char type;
	int64_t major, minor;
	unsigned access;
};

struct emulator {
	bool default_allow;
	struct exception *ex; /* sized for every rule and default */
	size_t n;
};

static struct exception *emu_find(struct emulator *e, char type, int64_t major, int64_t minor)
{
	for (size_t i = 0; i < e->n; i++)
		if (e->ex[i].type == type && e->ex[i].major == major && e->ex[i].minor == minor)
			return &e->ex[i];
	return NULL;
}

static void emu_add(struct emulator *e, const struct exception *r)
{
	struct exception *x = emu_find(e, r->type, r->major, r->minor);

	if (x)
		x->access |= r->access;
	else
		e->ex[e->n++] = *r;
}

static int emu_remove(struct emulator *e, const struct exception *r, char *errbuf, size_t errsize)
{
	const int64_t partial[3][2] = {{-1, r->minor}, {r->major, -1}, {-1, -1}};
	struct exception *x;

	/* runc refuses what cgroup v1 would silently ignore (devices_emulator.go rmRule). */
	for (size_t i = 0; i < ARRAY_SIZE(partial); i++) {
		if (partial[i][0] == r->major && partial[i][1] == r->minor)
			continue;
		x = emu_find(e, r->type, partial[i][0], partial[i][1]);
		if (x && (x->access & r->access)) {
			snprintf(errbuf, errsize,
				 "runc refuses these device rules: a rule for %c %lld:%lld would "
				 "punch a "
				 "hole into the wildcard rule %c %lld:%lld",
				 r->type, (long long)r->major, (long long)r->minor, x->type,
				 (long long)x->major, (long long)x->minor);
			return -EINVAL;
		}
	}
	x = emu_find(e, r->type, r->major, r->minor);
	if (x) {
		x->access &= ~r->access;
		if (!x->access)
			*x = e->ex[--e->n];
	}
	return 0;
}

static int emu_apply(struct emulator *e, bool allow, char type, int64_t major, int64_t minor,
		     unsigned access, char *errbuf, size_t errsize)
{
	struct exception r = {.type = type, .major = major, .minor = minor, .access = access};

	if (type == 'a') {
		/* Any "a" rule, whatever its numbers and access: allow-all or deny-all. */
		e->default_allow = allow;
		e->n = 0;
		return 0;
	}
	if (allow == e->default_allow)
		return emu_remove(e, &r, errbuf, errsize);
	emu_add(e, &r);
	return 0;
}

/* runc's specconv: the config's rule i as a devices.Rule, or the error it gives. */
static int runc_rule(const struct oci_device_rule *r, size_t i, char *type, char *errbuf,
		     size_t errsize)
{
	const char *t = r->type && *r->type ? r->type : "a";

	if (!r->access || !*r->access) {
		snprintf(errbuf, errsize, "device access at %zu field cannot be empty", i);
		return -EINVAL;
	}
	if (strcmp(t, "a") != 0 && strcmp(t, "b") != 0 && strcmp(t, "c") != 0) {
		snprintf(errbuf, errsize, "invalid cgroup device type \"%s\"", t);
		return -EINVAL;
	}
	*type = t[0];
	return 0;
}

static bool listed(const struct oci_device_config *c, const char *path)
{
	for (size_t i = 0; path && i < c->n_device_paths; i++)
		if (c->device_paths[i] && strcmp(c->device_paths[i], path) == 0)
			return true;
	return false;
}

static int exception_cmp(const void *a, const void *b)
{
	const struct exception *x = a, *y = b;

	/* runc's orderedEntries(): by major, minor, then type. */
	if (x->major != y->major)
		return x->major < y->major ? -1 : 1;
	if (x->minor != y->minor)
		return x->minor < y->minor ? -1 : 1;
	return (x->type > y->type) - (x->type < y->type);
}

static int runc_program(struct prog *p, const struct oci_device_config *c, char *errbuf,
			size_t errsize)
{
	_cleanup_free_ struct exception *ex =
		calloc(c->n_rules + ARRAY_SIZE(runc_defaults), sizeof(*ex));
	struct emulator e = {.ex = ex};
	int k;

	if (!ex)
		return -ENOMEM;
	/* runc's blocks return their verdict: this part decides last. */
	p->chain = false;
	for (size_t i = 0; i < c->n_rules; i++) {
		const struct oci_device_rule *r = &c->rules[i];
		char type;

		k = runc_rule(r, i, &type, errbuf, errsize);
		if (k < 0)
			return k;
		k = emu_apply(&e, r->allow, type, r->has_major ? r->major : -1,
			      r->has_minor ? r->minor : -1, access_bits(r->access), errbuf,
			      errsize);
		if (k < 0)
			return k;
	}
	for (size_t i = 0; i < ARRAY_SIZE(runc_defaults); i++) {
		const struct default_rule *d = &runc_defaults[i];

		if (listed(c, d->path))
			continue;
		k = emu_apply(&e, true, d->type, d->major, d->minor, access_bits(d->access), errbuf,
			      errsize);
		if (k < 0)
			return k;
	}
	qsort(e.ex, e.n, sizeof(*e.ex), exception_cmp);
	for (size_t i = 0; i < e.n; i++) {
		const struct exception *x = &e.ex[i];

		if (x->major > UINT32_MAX || x->minor > UINT32_MAX) {
			snprintf(errbuf, errsize, "invalid device number %lld:%lld",
				 (long long)x->major, (long long)x->minor);
			return -EINVAL;
		}
		emit_block(p, true, x->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR,
			   x->access, x->major >= 0, (int32_t)x->major, x->minor >= 0,
			   (int32_t)x->minor, !e.default_allow, BPF_ALU);
	}
	emit(p, BPF_ALU | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, e.default_allow);
	emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return 0;
}

int oci_devices_program(const struct oci_device_config *config, enum oci_runtime runtime,
			struct bpf_insn **ret, size_t *ret_n, char *errbuf, size_t errsize)
{
	/* At most 8 instructions per rule, for each runtime's copy of the rules. */
	size_t blocks = 2 * (config->n_rules + ARRAY_SIZE(crun_defaults) + 1);
	_cleanup_free_ size_t *chain_at = NULL;
	struct prog p = {0};
	size_t runc_start;
	int k;

	if (config->n_rules > OCI_DEVICES_MAX_RULES) {
		snprintf(errbuf, errsize, "%zu device rules, more than the %d supported",
			 config->n_rules, OCI_DEVICES_MAX_RULES);
		return -E2BIG;
	}
	p.cap = 6 + 8 * blocks;
	p.insns = calloc(p.cap, sizeof(*p.insns));
	chain_at = calloc(blocks, sizeof(*chain_at));
	if (!p.insns || !chain_at) {
		free(p.insns);
		return -ENOMEM;
	}
	p.chain_at = chain_at;
	p.chain = runtime == OCI_RUNTIME_BOTH;
	emit_prologue(&p);
	if (runtime != OCI_RUNTIME_RUNC)
		crun_program(&p, config);
	runc_start = p.n;
	k = runtime == OCI_RUNTIME_CRUN ? 0 : runc_program(&p, config, errbuf, errsize);
	if (k < 0) {
		free(p.insns);
		return k;
	}
	/*
	 * crun's allowing blocks go on to runc's rules, which decide then. A jump's
	 * offset is 16 bits: a program whose runc part starts beyond one is refused
	 * rather than built with jumps that wrap.
	 */
	for (size_t i = 0; i < p.n_chain; i++) {
		if (runc_start - chain_at[i] - 1 > INT16_MAX) {
			free(p.insns);
			snprintf(errbuf, errsize,
				 "too many device rules for one program with both runtimes' "
				 "semantics "
				 "(a jump over %zu instructions)",
				 runc_start - chain_at[i] - 1);
			return -E2BIG;
		}
		p.insns[chain_at[i]].off = (int16_t)(runc_start - chain_at[i] - 1);
	}
	*ret = p.insns;
	*ret_n = p.n;
	return 0;
}

static const char *const runtime_names[] = {
	[OCI_RUNTIME_BOTH] = "both",
	[OCI_RUNTIME_RUNC] = "runc",
	[OCI_RUNTIME_CRUN] = "crun",
};

int oci_runtime_from_name(const char *name, enum oci_runtime *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(runtime_names); i++)
		if (name && strcmp(name, runtime_names[i]) == 0) {
			*ret = (enum oci_runtime)i;
			return 0;
		}
	return -EINVAL;
}

const char *oci_runtime_name(enum oci_runtime runtime)
{
	return (size_t)runtime < ARRAY_SIZE(runtime_names) ? runtime_names[runtime] : "unknown";
}
