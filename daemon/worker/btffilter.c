/* SPDX-License-Identifier: MIT */
#include "btffilter.h"

#include <errno.h>
#include <linux/btf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"

/*
 * The input, parsed: every type's offset in the type section. Records are
 * read with memcpy: the bytes need not be aligned (a fuzzer's are not).
 */
struct btf_in {
	const uint8_t *types;
	size_t types_len;
	const char *strs;
	size_t strs_len;
	uint32_t n; /* types, with ids 1..n */
	size_t *off; /* off[id] for 1 <= id <= n; off[n + 1] the end */
};

static void btf_in_done(struct btf_in *b)
{
	free(b->off);
}

static struct btf_type type_head(const struct btf_in *b, uint32_t id)
{
	struct btf_type t;

	memcpy(&t, b->types + b->off[id], sizeof(t));
	return t;
}

static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The bytes after struct btf_type that a type of this kind has; -EBADMSG for unknown kinds. */
static int64_t tail_size(const struct btf_type *t)
{
	uint64_t vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (int64_t)(vlen * sizeof(struct btf_member));
	case BTF_KIND_ENUM:
		return (int64_t)(vlen * sizeof(struct btf_enum));
	case BTF_KIND_ENUM64:
		return (int64_t)(vlen * sizeof(struct btf_enum64));
	case BTF_KIND_FUNC_PROTO:
		return (int64_t)(vlen * sizeof(struct btf_param));
	case BTF_KIND_DATASEC:
		return (int64_t)(vlen * sizeof(struct btf_var_secinfo));
	default:
		return -EBADMSG;
	}
}

/*
 * Plain data, as a map's key or value is: everything but what names the
 * object's functions and variables (FUNC, VAR, DATASEC, DECL_TAG).
 */
static bool kind_is_data(uint32_t kind)
{
	switch (kind) {
	case BTF_KIND_INT:
	case BTF_KIND_PTR:
	case BTF_KIND_ARRAY:
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
	case BTF_KIND_ENUM:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC_PROTO:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
	case BTF_KIND_ENUM64:
		return true;
	default:
		return false;
	}
}

static int btf_in_parse(const void *data, size_t size, struct btf_in *ret)
{
	struct btf_in b = {};
	struct btf_header h;
	size_t rest, pos = 0, max_types;

	if (size > BTFFILTER_MAX_BYTES)
		return -E2BIG;
	if (size < sizeof(h))
		return -EBADMSG;
	memcpy(&h, data, sizeof(h));
	if (h.magic != BTF_MAGIC || h.version != BTF_VERSION || h.hdr_len < sizeof(h) ||
	    h.hdr_len > size)
		return -EBADMSG;
	rest = size - h.hdr_len;
	if (h.type_off > rest || h.type_len > rest - h.type_off || h.str_off > rest ||
	    h.str_len > rest - h.str_off || h.type_off % 4 != 0)
		return -EBADMSG;
	b.types = (const uint8_t *)data + h.hdr_len + h.type_off;
	b.types_len = h.type_len;
	b.strs = (const char *)data + h.hdr_len + h.str_off;
	b.strs_len = h.str_len;
	/* Offset 0 is the empty name, and every name ends inside the section. */
	if (b.strs_len == 0 || b.strs[0] != '\0' || b.strs[b.strs_len - 1] != '\0')
		return -EBADMSG;
	max_types = b.types_len / sizeof(struct btf_type);
	b.off = calloc(max_types + 2, sizeof(*b.off));
	if (!b.off)
		return -ENOMEM;
	while (pos < b.types_len) {
		struct btf_type t;
		int64_t tail;

		if (b.types_len - pos < sizeof(t)) {
			btf_in_done(&b);
			return -EBADMSG;
		}
		memcpy(&t, b.types + pos, sizeof(t));
		tail = tail_size(&t);
		if (tail < 0 || (uint64_t)tail > b.types_len - pos - sizeof(t)) {
			btf_in_done(&b);
			return -EBADMSG;
		}
		b.off[++b.n] = pos;
		pos += sizeof(t) + (size_t)tail;
	}
	b.off[b.n + 1] = pos;
	*ret = b;
	return 0;
}

/* Where a type refers to another type or to a name: byte positions in its record. */
enum slot_kind {
	SLOT_TYPE,
	SLOT_NAME,
};

struct slot {
	enum slot_kind kind;
	size_t pos;
};

/*
 * The slots of type id, one at a time: *i counts from 0; 1 while there is a
 * slot, 0 after the last.
 */
static int type_slot(const struct btf_in *b, uint32_t id, size_t *i, struct slot *ret)
{
	struct btf_type t = type_head(b, id);
	uint32_t kind = BTF_INFO_KIND(t.info);
	size_t n = *i, each, per;
	bool head_type;

	/* The name of every kind, then the type the head refers to (if it does). */
	if (n == 0) {
		*ret = (struct slot){SLOT_NAME, offsetof(struct btf_type, name_off)};
		goto next;
	}
	n--;
	head_type = kind == BTF_KIND_PTR || kind == BTF_KIND_TYPEDEF || kind == BTF_KIND_VOLATILE ||
		    kind == BTF_KIND_CONST || kind == BTF_KIND_RESTRICT ||
		    kind == BTF_KIND_TYPE_TAG || kind == BTF_KIND_FUNC || kind == BTF_KIND_VAR ||
		    kind == BTF_KIND_DECL_TAG || kind == BTF_KIND_FUNC_PROTO;
	if (head_type) {
		if (n == 0) {
			*ret = (struct slot){SLOT_TYPE, offsetof(struct btf_type, type)};
			goto next;
		}
		n--;
	}
	/* Then what follows the head, per kind: each entry's slots. */
	switch (kind) {
	case BTF_KIND_ARRAY:
		if (n >= 2)
			return 0;
		*ret = (struct slot){SLOT_TYPE,
				     sizeof(t) + (n == 0 ? offsetof(struct btf_array, type)
							 : offsetof(struct btf_array, index_type))};
		goto next;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		each = sizeof(struct btf_member);
		per = 2;
		break;
	case BTF_KIND_FUNC_PROTO:
		each = sizeof(struct btf_param);
		per = 2;
		break;
	case BTF_KIND_ENUM:
		each = sizeof(struct btf_enum);
		per = 1;
		break;
	case BTF_KIND_ENUM64:
		each = sizeof(struct btf_enum64);
		per = 1;
		break;
	case BTF_KIND_DATASEC:
		each = sizeof(struct btf_var_secinfo);
		per = 1;
		break;
	default:
		return 0;
	}
	if (n / per >= BTF_INFO_VLEN(t.info))
		return 0;
	if (kind == BTF_KIND_DATASEC)
		*ret = (struct slot){SLOT_TYPE,
				     sizeof(t) + n * each + offsetof(struct btf_var_secinfo, type)};
	else if (n % per == 0) /* member, param and enumerator names come first */
		*ret = (struct slot){SLOT_NAME, sizeof(t) + n / per * each};
	else /* a member's or param's type: name_off, then type, in both */
		*ret = (struct slot){SLOT_TYPE, sizeof(t) + n / per * each + sizeof(uint32_t)};
next:
	(*i)++;
	return 1;
}

static uint32_t slot_value(const struct btf_in *b, uint32_t id, const struct slot *s)
{
	return u32_at(b->types + b->off[id] + s->pos);
}

/* What the walk keeps between roots. */
struct walk {
	uint32_t *seen; /* seen[id] == gen: reached from the current root */
	uint32_t gen;
	uint32_t *stack, *reached; /* both at most n ids */
	bool *keep;
};

/*
 * Mark what root reaches, if all of it is data: 1 kept, 0 dropped (a kind
 * that is not data), -EBADMSG an id out of range.
 */
static int walk_root(const struct btf_in *b, struct walk *w, uint32_t root)
{
	size_t top = 0, n_reached = 0;
	bool data = true;

	if (root > b->n)
		return -EBADMSG;
	w->gen++;
	w->stack[top++] = root;
	w->seen[root] = w->gen;
	while (top > 0) {
		uint32_t id = w->stack[--top];
		struct slot s;
		size_t i = 0;

		w->reached[n_reached++] = id;
		if (!kind_is_data(BTF_INFO_KIND(type_head(b, id).info)))
			data = false;
		while (type_slot(b, id, &i, &s)) {
			uint32_t v;

			if (s.kind != SLOT_TYPE)
				continue;
			v = slot_value(b, id, &s);
			if (v == 0)
				continue; /* void */
			if (v > b->n)
				return -EBADMSG;
			if (w->seen[v] == w->gen)
				continue;
			w->seen[v] = w->gen;
			w->stack[top++] = v;
		}
	}
	if (!data)
		return 0;
	for (size_t i = 0; i < n_reached; i++)
		w->keep[w->reached[i]] = true;
	return 1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The kept types' names, as sorted unique offsets into the old string section. */
static int names_collect(const struct btf_in *b, const bool *keep, uint32_t **ret, size_t *ret_n)
{
	uint32_t *v = NULL;
	size_t n = 0, cap = 0, u = 0;

	for (uint32_t id = 1; id <= b->n; id++) {
		struct slot s;
		size_t i = 0;

		if (!keep[id])
			continue;
		while (type_slot(b, id, &i, &s)) {
			uint32_t off;

			if (s.kind != SLOT_NAME)
				continue;
			off = slot_value(b, id, &s);
			/* Every name ends inside the section, whose last byte is a NUL. */
			if (off >= b->strs_len) {
				free(v);
				return -EBADMSG;
			}
			if (n == cap) {
				uint32_t *nv = reallocarray(v, cap ? cap * 2 : 64, sizeof(*v));

				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
				cap = cap ? cap * 2 : 64;
			}
			v[n++] = off;
		}
	}
	if (n > 0)
		qsort(v, n, sizeof(*v), cmp_u32);
	for (size_t i = 0; i < n; i++)
		if (u == 0 || v[i] != v[u - 1])
			v[u++] = v[i];
	*ret = v;
	*ret_n = u;
	return 0;
}

/* A name's new offset: the new section holds the names in the order of names[]. */
static uint32_t name_new_off(const uint32_t *names, const uint32_t *new_off, size_t n, uint32_t old)
{
	const uint32_t *p = bsearch(&old, names, n, sizeof(*names), cmp_u32);

	return p ? new_off[p - names] : 0;
}

static int btf_out_build(const struct btf_in *b, const bool *keep, const uint32_t *new_id,
			 void **ret, size_t *ret_size)
{
	_cleanup_free_ uint32_t *names = NULL, *new_off = NULL;
	struct btf_header h = {.magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(h)};
	size_t n_names = 0, types_len = 0, strs_len = 1, total;
	uint8_t *out, *p;
	char *s;
	int k;

	k = names_collect(b, keep, &names, &n_names);
	if (k < 0)
		return k;
	new_off = calloc(n_names + 1, sizeof(*new_off));
	if (!new_off)
		return -ENOMEM;
	for (size_t i = 0; i < n_names; i++) {
		if (names[i] == 0)
			continue; /* the empty name stays at 0 */
		new_off[i] = (uint32_t)strs_len;
		strs_len += strlen(b->strs + names[i]) + 1;
		if (strs_len > BTFFILTER_MAX_BYTES)
			return -E2BIG;
	}
	for (uint32_t id = 1; id <= b->n; id++)
		if (keep[id])
			types_len += b->off[id + 1] - b->off[id];
	total = sizeof(h) + types_len + strs_len;
	if (total > BTFFILTER_MAX_BYTES)
		return -E2BIG;
	out = malloc(total);
	if (!out)
		return -ENOMEM;
	h.type_len = (uint32_t)types_len;
	h.str_off = (uint32_t)types_len;
	h.str_len = (uint32_t)strs_len;
	memcpy(out, &h, sizeof(h));
	p = out + sizeof(h);
	for (uint32_t id = 1; id <= b->n; id++) {
		size_t len = b->off[id + 1] - b->off[id], i = 0;
		struct slot sl;

		if (!keep[id])
			continue;
		memcpy(p, b->types + b->off[id], len);
		while (type_slot(b, id, &i, &sl)) {
			uint32_t v = slot_value(b, id, &sl);

			v = sl.kind == SLOT_NAME ? name_new_off(names, new_off, n_names, v)
			    : v			 ? new_id[v]
						 : 0;
			memcpy(p + sl.pos, &v, sizeof(v));
		}
		p += len;
	}
	s = (char *)p;
	*s = '\0';
	for (size_t i = 0; i < n_names; i++)
		if (names[i] != 0)
			memcpy(s + new_off[i], b->strs + names[i], strlen(b->strs + names[i]) + 1);
	*ret = out;
	*ret_size = total;
	return 0;
}

int btffilter_build(const void *btf, size_t size, uint32_t *ids, size_t n_ids, void **ret,
		    size_t *ret_size)
{
	_cleanup_(btf_in_done) struct btf_in b = {};
	_cleanup_free_ uint32_t *seen = NULL, *stack = NULL, *reached = NULL, *new_id = NULL,
				*out_ids = NULL;
	_cleanup_free_ bool *keep = NULL;
	struct walk w;
	uint32_t m = 0;
	void *out = NULL;
	size_t out_size = 0;
	int k;

	k = btf_in_parse(btf, size, &b);
	if (k < 0)
		return k;
	seen = calloc((size_t)b.n + 1, sizeof(*seen));
	stack = calloc((size_t)b.n + 1, sizeof(*stack));
	reached = calloc((size_t)b.n + 1, sizeof(*reached));
	new_id = calloc((size_t)b.n + 1, sizeof(*new_id));
	keep = calloc((size_t)b.n + 1, sizeof(*keep));
	out_ids = calloc(n_ids + 1, sizeof(*out_ids));
	if (!seen || !stack || !reached || !new_id || !keep || !out_ids)
		return -ENOMEM;
	w = (struct walk){.seen = seen, .stack = stack, .reached = reached, .keep = keep};
	for (size_t i = 0; i < n_ids; i++) {
		if (ids[i] == 0)
			continue;
		k = walk_root(&b, &w, ids[i]);
		if (k < 0)
			return k;
		out_ids[i] = k > 0 ? ids[i] : 0;
	}
	/* New ids in the old order: references keep their direction. */
	for (uint32_t id = 1; id <= b.n; id++)
		if (keep[id])
			new_id[id] = ++m;
	if (m > 0) {
		k = btf_out_build(&b, keep, new_id, &out, &out_size);
		if (k < 0)
			return k;
	}
	for (size_t i = 0; i < n_ids; i++)
		ids[i] = new_id[out_ids[i]];
	*ret = out;
	*ret_size = out_size;
	return 0;
}
