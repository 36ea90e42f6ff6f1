/* SPDX-License-Identifier: MIT */
/*
 * The loaders compared on one object at a time: libbpf in this process as
 * root (a) and with CAP_BPF only (a'), and the broker as a user (b) and as a
 * user granted load_with_perfmon (b+).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench.h"

void load_object(struct obj *o, const char *src)
{
	char dst[600];
	FILE *f = fopen(src, "re");
	long size;

	if (!f)
		die("%s: %s (build first: ninja -C %s)", src, strerror(errno), G.build);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	o->buf = malloc(size);
	if (!o->buf || fread(o->buf, 1, size, f) != (size_t)size)
		die("%s: read failed", src);
	fclose(f);
	o->size = size;
	/* A copy uid 65534 can read, for bpfctl run. */
	snprintf(dst, sizeof(dst), "%s/%s.bpf.o", G.dir, o->name);
	f = fopen(dst, "we");
	if (!f || fwrite(o->buf, 1, o->size, f) != o->size || fclose(f) != 0)
		die("%s: write failed", dst);
	chmod(dst, 0644);
	snprintf(o->path, sizeof(o->path), "%s", dst);
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/* (a) libbpf in this process, as root: open_mem + load + close. */
static double direct_load(struct obj *o)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = o->name);
	double t0 = now_us(), t1;
	struct bpf_object *bo = bpf_object__open_mem(o->buf, o->size, &opts);
	struct bpf_program *p;
	int r;

	if (!bo)
		die("bpf_object__open_mem %s: %s", o->name, strerror(errno));
	r = bpf_object__load(bo);
	if (r < 0)
		die("bpf_object__load %s: %s", o->name, strerror(-r));
	if (!o->insns)
		bpf_object__for_each_program(p, bo) o->insns += bpf_program__insn_cnt(p);
	bpf_object__close(bo);
	t1 = now_us();
	return t1 - t0;
}

/*
 * (a'): the same in a child that keeps only CAP_BPF, still uid 0: the
 * privileges the broker's worker loads a socket filter with, so the verifier
 * applies the same Spectre mitigations as through the broker.
 */
struct direct_arg {
	struct obj *o;
	size_t n;
	struct slot *s;
};

static int direct_capbpf_main(void *v)
{
	struct direct_arg *a = v;
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};

	d[CAP_BPF / 32].permitted = d[CAP_BPF / 32].effective = 1u << (CAP_BPF % 32);
	if (syscall(SYS_capset, &h, d) < 0) {
		snprintf(a->s->error, sizeof(a->s->error), "capset: %s", strerror(errno));
		return 1;
	}
	direct_load(a->o); /* warm-up: libbpf's feature probes */
	for (size_t i = 0; i < a->n && i < SLOT_CAP; i++)
		a->s->lat[a->s->n++] = direct_load(a->o);
	return 0;
}

static struct stats direct_load_capbpf(struct obj *o, size_t n)
{
	struct slot *s = shared_alloc(sizeof(*s));
	struct direct_arg a = {.o = o, .n = n, .s = s};
	struct stats st;
	int r = run_as(0, direct_capbpf_main, &a);

	if (r != 0)
		die("direct load of %s with CAP_BPF only failed (%d): %s", o->name, r, s->error);
	st = compute(s->lat, s->n);
	munmap(s, sizeof(*s));
	return st;
}

void libbpf_quiet_init(void)
{
	libbpf_set_print(libbpf_quiet);
}

void latency_run(struct results *r)
{
	/*
	 * 1, 2: load latency per object. (b) loads with the least privilege the
	 * program type needs (CAP_BPF for a socket filter): its floor is (a'),
	 * libbpf with CAP_BPF only. (b+) is a user whose policy grants
	 * load_with_perfmon, the verifier privileges root has: its floor is (a).
	 */
	printf("latency in us, median / p99\n");
	printf("%-7s %6s %8s | %-15s | %-15s | %-15s %5s | %-15s %5s\n", "object", "insns", "bytes",
	       "(a) libbpf root", "(a') CAP_BPF", "(b) broker", "b/a'", "(b+) +perfmon", "b+/a");
	for (int i = 0; i < 3; i++) {
		size_t n = i == 2 ? r->n_large : r->n_small;
		double *v = malloc(sizeof(double) * n);

		direct_load(&r->objs[i]); /* warm-up, counts instructions */
		for (size_t k = 0; k < n; k++)
			v[k] = direct_load(&r->objs[i]);
		r->direct[i] = compute(v, n);
		free(v);
		r->direct_bpf[i] = direct_load_capbpf(&r->objs[i], n);
		r->broker[i] = broker_load(&r->objs[i], n, NOBODY);
		r->broker_perf[i] = broker_load(&r->objs[i], n, TRUSTED);
		printf("%-7s %6u %8zu | %7.0f %7.0f | %7.0f %7.0f | %7.0f %7.0f %5.2f | %7.0f "
		       "%7.0f "
		       "%5.2f\n",
		       r->objs[i].name, r->objs[i].insns, r->objs[i].size, r->direct[i].median,
		       r->direct[i].p99, r->direct_bpf[i].median, r->direct_bpf[i].p99,
		       r->broker[i].median, r->broker[i].p99,
		       r->broker[i].median / r->direct_bpf[i].median, r->broker_perf[i].median,
		       r->broker_perf[i].p99, r->broker_perf[i].median / r->direct[i].median);
	}
}
