/* SPDX-License-Identifier: MIT */
/*
 * bpfctl map dump, lookup, update and delete: a named object's map through a
 * handle (the fd, or the broker where the kernel refuses bpf()), keys and
 * values in hex, formatted by the object's BTF where it has one.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpfctl.h"
#include "common/hex.h"
#include "common/macro.h"

struct map_ctx {
	struct cli *c;
	const char *name;
	struct bpfbroker_map_handle *h;
	const struct bpfbroker_map_info *m;
	bool percpu;
	unsigned n_cpus; /* value slots: 1, or the possible CPUs for per-CPU maps */
	size_t slot; /* bytes per slot */
	struct btf *btf; /* or NULL: hex only */
	json_object *out; /* -j: the entries */
};

/* The object's BTF, from the broker (its fd, or its bytes when proxied). NULL if that fails. */
static struct btf *map_btf(struct map_ctx *x)
{
	_cleanup_free_ void *data = NULL;
	struct bpfbroker_error *e = NULL;
	struct btf *btf;
	size_t size = 0;

	if (!x->m->btf_key_type_id && !x->m->btf_value_type_id)
		return NULL;
	if (bpfbroker_map_btf(x->h, &data, &size, &e) < 0 || size > UINT32_MAX) {
		bpfbroker_error_free(e);
		return NULL;
	}
	btf = btf__new(data, (uint32_t)size);
	return libbpf_get_error(btf) ? NULL : btf;
}

static void vprintf_to(void *ctx, const char *fmt, va_list ap)
{
	vfprintf(ctx, fmt, ap);
}

/*
 * Make btf_dump's compact output easier to read: drop the type casts in front
 * of values ("(int)3" -> "3") and the trailing commas, and space the commas.
 */
static void tidy_btf(char *s)
{
	char *w = s, quote = 0;

	for (char *r = s; *r; r++) {
		if (quote) {
			*w++ = *r;
			if (*r == '\\' && r[1])
				*w++ = *++r;
			else if (*r == quote)
				quote = 0;
			continue;
		}
		if (*r == '\'' || *r == '"') {
			quote = *w++ = *r;
			continue;
		}
		if (*r == '(' && (w == s || strchr("=[{, ", w[-1]))) {
			size_t n =
				strspn(r + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					      "0123456789_ *[]");

			if (r[1 + n] == ')' && r[2 + n]) {
				r += 1 + n;
				continue;
			}
		}
		if (*r == ',' && (r[1] == '}' || r[1] == ']'))
			continue;
		*w++ = *r;
		if (*r == ',' && r[1] != ' ')
			*w++ = ' ';
	}
	*w = '\0';
}

/* Format data as type id, or NULL (then the caller shows hex). */
static char *format_btf(struct btf *btf, uint32_t id, const void *data, size_t size)
{
	LIBBPF_OPTS(btf_dump_type_data_opts, opts, .compact = true, .emit_zeroes = true);
	struct btf_dump *d;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int k;

	if (!btf || !id)
		return NULL;
	f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	d = btf_dump__new(btf, vprintf_to, f, NULL);
	k = d ? btf_dump__dump_type_data(d, id, data, size, &opts) : -EINVAL;
	btf_dump__free(d);
	if (fclose(f) != 0 || k < 0) {
		free(text);
		return NULL;
	}
	tidy_btf(text);
	return text;
}

/* Hex bytes as typed by people: optional spaces, optional 0x in front of each group. */
static int parse_hex(const char *what, const char *arg, uint8_t *out, size_t want)
{
	size_t n = 0, digits = 0;
	bool start = true;
	int hi = 0;

	for (const char *p = arg; *p; p++) {
		int v;

		if (*p == ' ' || *p == '\t') {
			start = true;
			continue;
		}
		if (start && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
			p++;
			start = false;
			continue;
		}
		start = false;
		v = hex_digit_value(*p);
		if (v < 0) {
			fprintf(stderr, "bpfctl: %s \"%s\": not hex bytes\n", what, arg);
			return -EINVAL;
		}
		if (digits++ % 2 == 0) {
			hi = v;
			continue;
		}
		if (n < want)
			out[n] = (uint8_t)(hi << 4 | v);
		n++;
	}
	if (digits % 2) {
		fprintf(stderr, "bpfctl: %s \"%s\": odd number of hex digits\n", what, arg);
		return -EINVAL;
	}
	return (int)n;
}

static int parse_sized(const char *what, const char *arg, uint8_t *out, size_t want,
		       const char *map)
{
	int n = parse_hex(what, arg, out, want);

	if (n >= 0 && (size_t)n != want) {
		fprintf(stderr, "bpfctl: %s is %d bytes, but map %s takes %zu-byte %ss\n", what, n,
			map, want, what);
		return -EINVAL;
	}
	return n;
}

static json_object *json_hex(const uint8_t *buf, size_t size)
{
	_cleanup_free_ char *hex = hex_encode(buf, size);

	return hex ? json_object_new_string(hex) : NULL;
}

/* One line (per CPU slot, for per-CPU maps) or one JSON object per entry. */
static int print_entry(struct map_ctx *x, const uint8_t *key, const uint8_t *value)
{
	_cleanup_free_ char *khex = format_hex(key, x->m->key_size);
	_cleanup_free_ char *kfmt = format_btf(x->btf, x->m->btf_key_type_id, key, x->m->key_size);
	json_object *o = NULL, *vals = NULL, *fvals = NULL, *fmt = NULL;

	if (!khex)
		return -ENOMEM;
	if (x->out) {
		o = json_object_new_object();
		if (!o)
			return -ENOMEM;
		json_object_array_add(x->out, o);
		json_object_object_add(o, "key", json_hex(key, x->m->key_size));
		if (x->percpu) {
			vals = json_object_new_array();
			json_object_object_add(o, "values", vals);
		}
		if (x->btf) {
			fmt = json_object_new_object();
			if (kfmt)
				json_object_object_add(fmt, "key", json_object_new_string(kfmt));
			if (x->percpu) {
				fvals = json_object_new_array();
				json_object_object_add(fmt, "values", fvals);
			}
		}
	} else if (x->percpu) {
		printf("key: %s\n", kfmt ?: khex);
	}
	for (unsigned cpu = 0; cpu < x->n_cpus; cpu++) {
		const uint8_t *v = value + cpu * x->slot;
		_cleanup_free_ char *vhex = format_hex(v, x->m->value_size);
		_cleanup_free_ char *vfmt =
			format_btf(x->btf, x->m->btf_value_type_id, v, x->m->value_size);

		if (!vhex)
			return -ENOMEM;
		if (o && x->percpu) {
			json_object_array_add(vals, json_hex(v, x->m->value_size));
			if (fvals)
				json_object_array_add(fvals, vfmt ? json_object_new_string(vfmt)
								  : json_object_new_null());
		} else if (o) {
			json_object_object_add(o, "value", json_hex(v, x->m->value_size));
			if (fmt && vfmt)
				json_object_object_add(fmt, "value", json_object_new_string(vfmt));
		} else if (x->percpu) {
			printf("  cpu %u: value: %s\n", cpu, vfmt ?: vhex);
		} else {
			printf("key: %s  value: %s\n", kfmt ?: khex, vfmt ?: vhex);
		}
	}
	if (fmt)
		json_object_object_add(o, "formatted", fmt); /* after the hex */
	return 0;
}

/* map's exit status for a broker's error: refusals and absences are 1, like a denied check. */
static int map_error_status(const struct bpfbroker_error *e)
{
	return strcmp(e->code, PROTO_E_DENIED) == 0 || strcmp(e->code, PROTO_E_LOAD) == 0 ||
			       strcmp(e->code, PROTO_E_NOT_FOUND) == 0
		       ? EXIT_DENIED
		       : EXIT_ERROR;
}

/* Report a failed map operation (e: the broker's answer, when proxied); the exit status. */
static int map_failed(struct map_ctx *x, const char *op, int k, struct bpfbroker_error *e)
{
	bool writes = strcmp(op, "update") == 0 || strcmp(op, "delete") == 0;

	if (e) {
		int status = map_error_status(e);

		report_error(x->c, k, e, x->name);
		return status;
	}
	if (k == -EPERM || k == -EACCES) {
		if (writes && x->m->access == BPFBROKER_ACCESS_RO)
			fprintf(stderr,
				"bpfctl: map %s is read-only for you (the broker granted ro): %s "
				"refused\n",
				x->name, op);
		else if (!writes && x->m->access == BPFBROKER_ACCESS_WO)
			fprintf(stderr,
				"bpfctl: map %s is write-only for you (the broker granted wo): %s "
				"refused\n",
				x->name, op);
		else
			fprintf(stderr, "bpfctl: map %s: %s refused by the kernel: %s\n", x->name,
				op, strerror(-k));
		return EXIT_DENIED;
	}
	/* Failures of our own or of the connection; anything else is the kernel's refusal. */
	if (k == -ENOMEM || k == -EPROTO || k == -ECONNRESET || k == -EPIPE || x->m->proxied) {
		fprintf(stderr, "bpfctl: map %s: %s failed: %s\n", x->name, op, strerror(-k));
		return EXIT_ERROR;
	}
	fprintf(stderr, "bpfctl: map %s: %s refused by the kernel: %s\n", x->name, op,
		strerror(-k));
	return EXIT_DENIED;
}

#define MAP_DUMP_PAGE 64u

static int map_dump(struct map_ctx *x, uint8_t *cursor)
{
	uint64_t n = 0, limit = (uint64_t)x->m->max_entries * 2 + 16;
	size_t ks = x->m->key_size, vs = x->m->value_bytes;
	_cleanup_free_ uint8_t *keys = calloc(MAP_DUMP_PAGE, ks),
			       *values = calloc(MAP_DUMP_PAGE, vs ?: 1);
	bool first = true, done = false;
	int k;

	if (!keys || !values)
		return die_errno(-ENOMEM, "dump");
	while (!done) {
		struct bpfbroker_error *e = NULL;
		uint32_t got = 0;

		k = bpfbroker_map_dump(x->h, first ? NULL : cursor, keys, values, MAP_DUMP_PAGE,
				       &got, cursor, &done, &e);
		if (k < 0)
			return map_failed(x, "dump", k, e);
		first = false;
		for (uint32_t i = 0; i < got; i++) {
			k = print_entry(x, keys + i * ks, values + i * vs);
			if (k < 0)
				return die_errno(k, "dump");
		}
		n += got;
		/* A map changed while it is dumped can show entries again, but not forever. */
		if (n > limit) {
			fprintf(stderr,
				"bpfctl: map %s: more entries than it can hold; is it being "
				"changed meanwhile? Stopping\n",
				x->name);
			return EXIT_ERROR;
		}
	}
	return EXIT_SUCCESS;
}

/* Opening the map failed: the same exit status whether bpfctl used the fd or the broker. */
static int map_open_failed(struct map_ctx *x, int k, struct bpfbroker_error *e, const char *ref)
{
	if (e) {
		int status = map_error_status(e);

		report_error(x->c, k, e, ref);
		return status;
	}
	if (k == -ENOENT || k == -EACCES) {
		fprintf(stderr, "bpfctl: map %s: %s\n", x->name,
			k == -EACCES
				? "the broker grants you no access to it"
				: "not in this object, or the broker grants you no access to it");
		return EXIT_DENIED;
	}
	return die_errno(k, x->name);
}

int cmd_map(struct cli *c, struct bpfbroker *b, int argc, char **argv)
{
	static const struct {
		const char *name;
		int n_args;
	} ops[] = {{"dump", 2}, {"lookup", 3}, {"update", 4}, {"delete", 3}};
	struct bpfbroker_error *e = NULL;
	struct map_ctx x = {.c = c, .n_cpus = 1};
	_cleanup_free_ uint8_t *key = NULL, *value = NULL;
	const char *op = NULL, *env = getenv("BPFBROKER_MAP_PROXY");
	char *ref;
	size_t vsize;
	int k, n;

	for (size_t i = 0; argc > 0 && i < ARRAY_SIZE(ops); i++)
		if (strcmp(argv[0], ops[i].name) == 0) {
			op = ops[i].name;
			if (argc != ops[i].n_args)
				op = NULL;
		}
	if (!op) {
		fprintf(stderr, "bpfctl: map takes dump REF/MAP, lookup REF/MAP KEY, update "
				"REF/MAP KEY VALUE or delete REF/MAP KEY\n");
		return EXIT_ERROR;
	}
	if (c->update_flags && strcmp(op, "update") != 0) {
		fprintf(stderr, "bpfctl: --exist and --noexist are for map update\n");
		return EXIT_ERROR;
	}
	if (split_ref(argv[1], "MAP", &ref, (char **)&x.name) < 0)
		return EXIT_ERROR;
	/* Diagnosis: what a kernel that refuses bpf() gets, on any kernel. */
	if (c->map_proxy || (env && strcmp(env, "1") == 0))
		(void)bpfbroker_set_map_path(b, BPFBROKER_MAP_PATH_PROXY);
	k = bpfbroker_map_open(b, ref, x.name, &x.h, &e);
	if (k < 0)
		return map_open_failed(&x, k, e, ref);
	x.m = bpfbroker_map_handle_info(x.h);
	if (x.m->key_size == 0) {
		fprintf(stderr, "bpfctl: map %s (%s) has no keys; bpfctl map cannot access it%s\n",
			x.name, x.m->type,
			strcmp(x.m->type, "ringbuf") == 0 ? " (read it with bpfctl ringbuf)" : "");
		bpfbroker_map_close(x.h);
		return EXIT_ERROR;
	}
	x.percpu = strstr(x.m->type, "percpu") != NULL;
	x.n_cpus = x.percpu ? x.m->n_cpus : 1;
	x.slot = x.m->value_bytes / (x.n_cpus ?: 1);
	vsize = x.m->value_bytes;
	key = calloc(1, x.m->key_size);
	value = calloc(1, vsize ?: 1);
	if (!key || !value) {
		bpfbroker_map_close(x.h);
		return die_errno(-ENOMEM, "map");
	}
	x.btf = map_btf(&x);
	if (c->json)
		x.out = json_object_new_array(); /* dump: every entry; lookup: one, printed alone */
	if (argc > 2 && parse_sized("key", argv[2], key, x.m->key_size, x.name) < 0) {
		k = EXIT_ERROR;
		goto out;
	}
	if (argc > 3) {
		/* Per-CPU maps: one value for every CPU, or all the slots. */
		n = parse_hex("value", argv[3], value, vsize);
		if (n >= 0 && x.percpu && (size_t)n == x.m->value_size) {
			for (unsigned cpu = 1; cpu < x.n_cpus; cpu++)
				memcpy(value + cpu * x.slot, value, x.m->value_size);
		} else if (n >= 0 && (size_t)n != vsize) {
			fprintf(stderr,
				"bpfctl: value is %d bytes, but map %s takes %u-byte values\n", n,
				x.name, x.m->value_size);
			n = -EINVAL;
		}
		if (n < 0) {
			k = EXIT_ERROR;
			goto out;
		}
	}
	e = NULL;
	if (strcmp(op, "dump") == 0) {
		k = map_dump(&x, key);
	} else if (strcmp(op, "lookup") == 0) {
		k = bpfbroker_map_lookup_elem(x.h, key, value, &e);
		if (k == -ENOENT && !e) {
			_cleanup_free_ char *hex = format_hex(key, x.m->key_size);

			fprintf(stderr, "bpfctl: map %s: no entry for key %s\n", x.name, hex ?: "");
			k = EXIT_DENIED;
		} else if (k < 0) {
			k = map_failed(&x, op, k, e);
		} else {
			k = print_entry(&x, key, value) < 0 ? die_errno(-ENOMEM, "lookup")
							    : EXIT_SUCCESS;
		}
	} else if (strcmp(op, "update") == 0) {
		k = bpfbroker_map_update_elem(x.h, key, value, c->update_flags, &e);
		k = k < 0 ? map_failed(&x, op, k, e) : EXIT_SUCCESS;
	} else {
		k = bpfbroker_map_delete_elem(x.h, key, &e);
		if (k == -ENOENT && !e) {
			fprintf(stderr, "bpfctl: map %s: no entry for that key\n", x.name);
			k = EXIT_DENIED;
		} else {
			k = k < 0 ? map_failed(&x, op, k, e) : EXIT_SUCCESS;
		}
	}
	if (x.out && k == EXIT_SUCCESS) {
		if (strcmp(op, "dump") == 0)
			print_json_value(x.out);
		else if (strcmp(op, "lookup") == 0)
			print_json_value(json_object_array_get_idx(x.out, 0));
		else
			printf("{\"%s\":true}\n",
			       strcmp(op, "update") == 0 ? "updated" : "deleted");
	}
out:
	json_object_put(x.out);
	btf__free(x.btf);
	bpfbroker_map_close(x.h);
	return k;
}
