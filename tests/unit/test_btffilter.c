/* SPDX-License-Identifier: MIT */
/*
 * btffilter: the BTF a non-owner gets holds the types of the shared maps'
 * keys and values and nothing else: no other type, no function, variable or
 * section, no other string. Built with libbpf's BTF writer, read back with
 * its parser; malformed input is refused, never read out of bounds.
 */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "daemon/worker/btffilter.h"

/* Type ids of the object made by make_btf(). */
struct ids {
	int u32, point, point_ptr, node, node_ptr, secret, enum_color, typedef_u32, arr, proto,
		func, var, datasec, decl_tag;
};

/*
 * An object's BTF as clang makes it, in small: a shared map's types (__u32
 * keys, struct point values with an array, an enum and a pointer to itself
 * through struct node), a secret struct, a function, a variable, its section.
 */
static struct btf *make_btf(struct ids *t)
{
	struct btf *b = btf__new_empty();

	assert_false(libbpf_get_error(b));
	t->u32 = btf__add_int(b, "unsigned int", 4, 0);
	t->typedef_u32 = btf__add_typedef(b, "__u32", t->u32);
	t->enum_color = btf__add_enum(b, "color", 4);
	btf__add_enum_value(b, "RED", 0);
	btf__add_enum_value(b, "GREEN", 1);
	t->arr = btf__add_array(b, t->u32, t->u32, 4);
	/* Fields go to the type added last: the pointer first, to the struct it precedes. */
	t->node_ptr = btf__add_ptr(b, (int)btf__type_cnt(b) + 1);
	t->node = btf__add_struct(b, "node", 16);
	assert_int_equal(btf__add_field(b, "next", t->node_ptr, 0, 0), 0);
	btf__add_field(b, "val", t->typedef_u32, 64, 0);
	t->point = btf__add_struct(b, "point", 40);
	btf__add_field(b, "x", t->typedef_u32, 0, 0);
	btf__add_field(b, "color", t->enum_color, 32, 0);
	btf__add_field(b, "hist", t->arr, 64, 0);
	btf__add_field(b, "list", t->node_ptr, 192, 0);
	btf__add_field(b, "bits", t->u32, 256, 3);
	t->point_ptr = btf__add_ptr(b, t->point);
	t->secret = btf__add_struct(b, "secret_value", 8);
	btf__add_field(b, "secret_field", t->u32, 0, 0);
	t->proto = btf__add_func_proto(b, t->u32);
	btf__add_func_param(b, "secret_arg", t->point_ptr);
	t->func = btf__add_func(b, "secret_prog", BTF_FUNC_GLOBAL, t->proto);
	t->var = btf__add_var(b, "secret_global", BTF_VAR_GLOBAL_ALLOCATED, t->secret);
	t->datasec = btf__add_datasec(b, ".data", 8);
	btf__add_datasec_var_info(b, t->var, 0, 8);
	t->decl_tag = btf__add_decl_tag(b, "secret_tag", t->point, -1);
	assert_true(t->decl_tag > 0);
	return b;
}

static const void *raw(struct btf *b, size_t *size)
{
	uint32_t n = 0;
	const void *data = btf__raw_data(b, &n);

	assert_non_null(data);
	*size = n;
	return data;
}

static bool has(const void *data, size_t size, const char *s)
{
	return memmem(data, size, s, strlen(s)) != NULL;
}

static const struct btf_type *named(struct btf *b, uint32_t id, const char *name)
{
	const struct btf_type *t = btf__type_by_id(b, id);

	assert_non_null(t);
	assert_string_equal(btf__name_by_offset(b, t->name_off), name);
	return t;
}

static void test_keeps_only_reachable(void **state)
{
	struct ids t;
	struct btf *b = make_btf(&t), *o;
	size_t size, out_size = 0;
	const void *data = raw(b, &size);
	uint32_t ids[3] = {(uint32_t)t.typedef_u32, (uint32_t)t.point, 0};
	void *out = NULL;
	const struct btf_type *p;
	const struct btf_member *m;

	/* The input says everything. */
	assert_true(has(data, size, "secret_prog") && has(data, size, "secret_global"));
	assert_int_equal(btffilter_build(data, size, ids, 3, &out, &out_size), 0);
	assert_non_null(out);
	for (const char *const *s =
		     (const char *const[]){"secret_value", "secret_field", "secret_arg",
					   "secret_prog", "secret_global", ".data", "secret_tag",
					   NULL};
	     *s; s++)
		if (has(out, out_size, *s))
			fail_msg("the filtered BTF says \"%s\"", *s);
	o = btf__new(out, (uint32_t)out_size);
	assert_false(libbpf_get_error(o));
	/* unsigned int, __u32, color, the array, node, its pointer, point. */
	assert_int_equal(btf__type_cnt(o), 1 + 7);
	assert_int_equal(ids[2], 0);
	named(o, ids[0], "__u32");
	p = named(o, ids[1], "point");
	assert_true(btf_is_struct(p));
	assert_int_equal(btf_vlen(p), 5);
	m = btf_members(p);
	assert_string_equal(btf__name_by_offset(o, m[0].name_off), "x");
	assert_int_equal(m[0].type, ids[0]);
	assert_string_equal(btf__name_by_offset(o, m[4].name_off), "bits");
	assert_int_equal(btf_member_bitfield_size(p, 4), 3);
	/* The self-reference through a pointer survives, renumbered. */
	{
		const struct btf_type *ptr = btf__type_by_id(o, m[3].type);
		const struct btf_type *node;

		assert_true(btf_is_ptr(ptr));
		node = named(o, ptr->type, "node");
		assert_int_equal(btf_members(node)[0].type, m[3].type);
	}
	assert_int_equal(btf__find_by_name(o, "RED") < 0, true); /* an enumerator, not a type */
	assert_true(has(out, out_size, "GREEN"));
	btf__free(o);
	free(out);
	btf__free(b);
}

static void test_drops_functions_and_variables(void **state)
{
	struct ids t;
	struct btf *b = make_btf(&t);
	size_t size, out_size = 1;
	const void *data = raw(b, &size);
	/* A global-data map's value is its section; a root may even be a function. */
	uint32_t ids[3] = {(uint32_t)t.datasec, (uint32_t)t.func, (uint32_t)t.var};
	void *out = (void *)1;

	assert_int_equal(btffilter_build(data, size, ids, 3, &out, &out_size), 0);
	assert_null(out);
	assert_int_equal(out_size, 0);
	assert_int_equal(ids[0], 0);
	assert_int_equal(ids[1], 0);
	assert_int_equal(ids[2], 0);
	/* A pointer to a function prototype is data (its parameter names come with it). */
	ids[0] = (uint32_t)t.proto;
	assert_int_equal(btffilter_build(data, size, ids, 1, &out, &out_size), 0);
	assert_non_null(out);
	assert_true(has(out, out_size, "secret_arg"));
	assert_false(has(out, out_size, "secret_prog"));
	free(out);
	btf__free(b);
}

static void test_loads_in_order(void **state)
{
	struct ids t;
	struct btf *b = make_btf(&t), *o;
	size_t size, out_size = 0;
	const void *data = raw(b, &size);
	uint32_t ids[2] = {(uint32_t)t.point, (uint32_t)t.u32};
	void *out = NULL;

	assert_int_equal(btffilter_build(data, size, ids, 2, &out, &out_size), 0);
	/* Old order kept: unsigned int stays first. */
	assert_int_equal(ids[1], 1);
	o = btf__new(out, (uint32_t)out_size);
	assert_false(libbpf_get_error(o));
	named(o, 1, "unsigned int");
	/* Filtering what was filtered changes nothing. */
	{
		void *again = NULL;
		size_t again_size = 0;
		uint32_t ids2[2] = {ids[0], ids[1]};

		assert_int_equal(btffilter_build(out, out_size, ids2, 2, &again, &again_size), 0);
		assert_int_equal(again_size, out_size);
		assert_memory_equal(again, out, out_size);
		assert_int_equal(ids2[0], ids[0]);
		free(again);
	}
	btf__free(o);
	free(out);
	btf__free(b);
}

/* A real object's BTF, as the broker reads it back: shares.bpf.o. */
static void test_real_object(void **state)
{
	char path[512];
	const char *dir = getenv("BPFBROKER_TEST_BPF_DIR");
	struct btf *b, *o;
	size_t size, out_size = 0;
	const void *data;
	void *out = NULL;
	uint32_t ids[2];
	int id;

	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/shares.bpf.o", dir);
	b = btf__parse_elf(path, NULL);
	assert_false(libbpf_get_error(b));
	data = raw(b, &size);
	assert_true(has(data, size, "victim_source_line_marker") ||
		    has(data, size, "victim_filter"));
	id = btf__find_by_name_kind(b, "victim_point", BTF_KIND_STRUCT);
	assert_true(id > 0);
	ids[0] = (uint32_t)id;
	id = btf__find_by_name_kind(b, "__u32", BTF_KIND_TYPEDEF);
	assert_true(id > 0);
	ids[1] = (uint32_t)id;
	assert_int_equal(btffilter_build(data, size, ids, 2, &out, &out_size), 0);
	for (const char *const *s =
		     (const char *const[]){"victim_secret_map", "victim_secret_value",
					   "victim_filter", "victim_events", "victim_jump",
					   "victim_source_line_marker", "shares.bpf.c", ".maps",
					   "LICENSE", NULL};
	     *s; s++)
		if (has(out, out_size, *s))
			fail_msg("the filtered BTF says \"%s\"", *s);
	o = btf__new(out, (uint32_t)out_size);
	assert_false(libbpf_get_error(o));
	named(o, ids[0], "victim_point");
	named(o, ids[1], "__u32");
	btf__free(o);
	free(out);
	btf__free(b);
}

static void test_malformed(void **state)
{
	struct ids t;
	struct btf *b = make_btf(&t);
	size_t size, out_size = 0;
	const void *data = raw(b, &size);
	uint8_t *copy = malloc(size);
	struct btf_header h;
	uint32_t ids[1] = {(uint32_t)t.point}, big;
	void *out = NULL;

	assert_non_null(copy);
	memcpy(&h, data, sizeof(h));
	/* Too short, bad magic, sections past the end, every truncation. */
	assert_int_equal(btffilter_build(data, 10, ids, 1, &out, &out_size), -EBADMSG);
	memcpy(copy, data, size);
	copy[0] ^= 0xff;
	assert_int_equal(btffilter_build(copy, size, ids, 1, &out, &out_size), -EBADMSG);
	for (size_t n = sizeof(h); n < size; n++)
		assert_int_equal(btffilter_build(data, n, ids, 1, &out, &out_size), -EBADMSG);
	/* A root out of range. */
	big = 100000;
	assert_int_equal(btffilter_build(data, size, &big, 1, &out, &out_size), -EBADMSG);
	/* A member's type out of range: point's first member's type. */
	memcpy(copy, data, size);
	{
		uint32_t bad = 9999, off = 0;
		/* The raw types are libbpf's own, in the same order and layout. */
		off = (uint32_t)((const uint8_t *)btf__type_by_id(b, t.point) -
				 (const uint8_t *)btf__type_by_id(b, 1));
		memcpy(copy + h.hdr_len + h.type_off + off + sizeof(struct btf_type) +
			       offsetof(struct btf_member, type),
		       &bad, sizeof(bad));
		assert_int_equal(btffilter_build(copy, size, ids, 1, &out, &out_size), -EBADMSG);
		/* Its name offset past the strings. */
		memcpy(copy, data, size);
		bad = h.str_len;
		memcpy(copy + h.hdr_len + h.type_off + off, &bad, sizeof(bad));
		assert_int_equal(btffilter_build(copy, size, ids, 1, &out, &out_size), -EBADMSG);
		/* An unknown kind. */
		memcpy(copy, data, size);
		bad = 31u << 24; /* kind 31 */
		memcpy(copy + h.hdr_len + h.type_off + off + offsetof(struct btf_type, info), &bad,
		       sizeof(bad));
		assert_int_equal(btffilter_build(copy, size, ids, 1, &out, &out_size), -EBADMSG);
	}
	assert_null(out);
	free(copy);
	btf__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keeps_only_reachable),
		cmocka_unit_test(test_drops_functions_and_variables),
		cmocka_unit_test(test_loads_in_order),
		cmocka_unit_test(test_real_object),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
