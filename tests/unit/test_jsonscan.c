/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for proto/jsonscan.c, jsonbuild.c and jsontext.c: the scanner agrees with
 * proto_parse() on what is JSON (json-c's strict mode also takes single quotes and UTF-8-encoded
 * surrogates, which the scanner refuses: the broker writes neither), a tree built from a scan is
 * json-c's, and text written directly is what json-c would write, made UTF-8.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proto/jsonscan.h"
#include "proto/jsontext.h"
#include "proto/proto.h"

static int scan(const char *s)
{
	struct json_span top;

	return json_scan_object_text(s, strlen(s), &top);
}

static void test_scan_agrees_with_parse(void **state)
{
	static const char *const texts[] = {
		"{}",
		" {\"a\":1} ",
		"{\"a\":[1,-2.5e+3,true,false,null,{\"b\":\"\\u00e9\\n\"}]}",
		"{\"a\":\"caf\xc3\xa9\"}",
		"{\"a\":0}",
		"{\"a\":-0.0}",
		"{\"a\":1.}",
		"{\"a\":\"\x01\"}",
		/* not JSON */
		"",
		"[]",
		"{",
		"{\"a\"}",
		"{\"a\":}",
		"{\"a\":1,}",
		"{,}",
		"{\"a\":01}",
		"{\"a\":.5}",
		"{\"a\":+1}",
		"{\"a\":tru}",
		"{\"a\":\"\\x\"}",
		"{\"a\":\"\\u12g4\"}",
		"{\"a\":\"\xc3\"}",
		"{\"a\":1} x",
		"{\"a\":1}{}",
		"{\"a\":NaN}",
		"{\"a\":[1 2]}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		json_object *o = NULL;
		bool parsed = proto_parse(texts[i], strlen(texts[i]), &o, NULL) == 0 &&
			      json_object_is_type(o, json_type_object);

		json_object_put(o);
		if ((scan(texts[i]) == 0) != parsed)
			fail_msg("%s: the scanner says %s, proto_parse() %s", texts[i],
				 scan(texts[i]) == 0 ? "JSON" : "not", parsed ? "JSON" : "not");
	}
	/* A NUL inside or outside a string is refused, as by proto_parse(). */
	{
		struct json_span top;

		assert_int_equal(json_scan_object_text("{\"a\":\"\0\"}", 8, &top), -EBADMSG);
		assert_int_equal(json_scan_object_text("{}\0", 3, &top), -EBADMSG);
	}
}

/* Whether the parser, the scanner and the builder each take text: all three must agree. */
static void assert_depth_agrees(const char *text, int want)
{
	json_object *o = NULL, *built = NULL;
	size_t len = strlen(text);

	assert_int_equal(proto_parse(text, len, &o, NULL), want);
	assert_int_equal(scan(text), want);
	assert_int_equal(json_scan_build(text, len, &built), want);
	json_object_put(o);
	json_object_put(built);
}

static void test_scan_depth(void **state)
{
	char deep[64] = "", text[128];

	(void)state;
	/* PROTO_MAX_JSON_DEPTH containers, the top level included, and not one more. */
	for (int i = 0; i < PROTO_MAX_JSON_DEPTH - 1; i++)
		strcat(deep, "[");
	snprintf(text, sizeof(text), "{\"a\":%s", deep);
	for (int i = 0; i < PROTO_MAX_JSON_DEPTH - 1; i++)
		strcat(text, "]");
	strcat(text, "}");
	assert_depth_agrees(text, 0);
	snprintf(text, sizeof(text), "{\"a\":[%s", deep);
	for (int i = 0; i < PROTO_MAX_JSON_DEPTH; i++)
		strcat(text, "]");
	strcat(text, "}");
	assert_depth_agrees(text, -EBADMSG);
}

static void test_iter(void **state)
{
	const char *text = "{\"id\":7, \"result\":{\"objects\":[{\"n\":1}, 2],\"next\":\"1/x\"}}";
	struct json_span top, key, v, result = {};
	struct json_iter it;
	int n = 0;

	(void)state;
	assert_int_equal(json_scan_object_text(text, strlen(text), &top), 0);
	assert_int_equal(json_iter_init(&it, top, 1), 0);
	while (json_iter_next(&it, &key, &v) > 0)
		if (json_key_is(key, "result"))
			result = v;
	assert_true(json_span_is_object(result));
	assert_int_equal(json_iter_init(&it, result, 2), 0);
	assert_int_equal(json_iter_next(&it, &key, &v), 1);
	assert_true(json_key_is(key, "objects"));
	assert_true(json_span_is_array(v));
	assert_int_equal(v.len, strlen("[{\"n\":1}, 2]"));
	assert_int_equal(json_iter_next(&it, &key, &v), 1);
	assert_true(json_key_is(key, "next"));
	assert_true(json_span_is_string(v));
	assert_int_equal(json_iter_next(&it, &key, &v), 0);
	assert_int_equal(json_iter_next(&it, &key, &v), -EBADMSG);
	for (assert_int_equal(json_iter_init(&it, top, 1), 0); json_iter_next(&it, &key, &v) > 0;)
		n++;
	assert_int_equal(n, 2);
}

/* A tree built from a scan is json-c's tree of the same text; or the text is left to json-c. */
static void test_build_as_json_c(void **state)
{
	static const char *const same[] = {
		"{}",
		" { \"a\" : [ 1 , -2 , -0, 0, 9223372036854775807, -9223372036854775808 ] } ",
		"{\"name\":\"n5\",\"owner\":65534,\"programs\":[{\"name\":\"count_packets\","
		"\"test_run_only\":false,\"pin\":\"p0\"}],\"maps\":[],\"shares\":[{\"map\":"
		"\"m\",\"uid\":1,\"access\":\"ro\"}],\"x\":null,\"y\":true}",
		"{\"s\":\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u0001\\u00e9\\u20ac\\u0000z\"}",
		"{\"caf\\u00e9\":\"\xc3\xa9\",\"a\":1,\"a\":2}",
		"{\"long key 0123456789012345678901234567890123456789012345678901234567890123456789"
		"0123456789012345678901234567890123456789012345678901234567890123456789\":[[[]]]}",
	};
	static const char *const left[] = {
		"{\"a\":1.5}",
		"{\"a\":1e3}",
		"{\"a\":9223372036854775808}",
		"{\"a\":-9223372036854775809}",
		"{\"a\":\"\\ud83d\\ude00\"}",
		"{\"a\\u0000b\":1}",
	};
	static const char *const bad[] = {
		"",	     "[]",	    "{",	  "{\"a\":1",	      "{\"a\":1,}",
		"{\"a\" 1}", "{\"a\":tru}", "{\"a\":1}x", "{\"a\":\"\xc3\"}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		json_object *built = NULL, *parsed = json_tokener_parse(same[i]);

		assert_non_null(parsed);
		if (json_scan_build(same[i], strlen(same[i]), &built) < 0)
			fail_msg("%s: not built", same[i]);
		if (!json_object_equal(built, parsed))
			fail_msg("%s: built %s", same[i], json_object_to_json_string(built));
		json_object_put(built);
		json_object_put(parsed);
	}
	for (size_t i = 0; i < sizeof(left) / sizeof(left[0]); i++) {
		json_object *built = NULL;

		assert_int_equal(json_scan_build(left[i], strlen(left[i]), &built), -EOPNOTSUPP);
		assert_null(built);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_object *built = NULL;

		assert_int_equal(json_scan_build(bad[i], strlen(bad[i]), &built), -EBADMSG);
		assert_null(built);
	}
	/* Not one byte past len, though a number or a string runs to the end. */
	{
		json_object *built = NULL;

		assert_int_equal(json_scan_build("{\"a\":12}", 7, &built), -EBADMSG);
		assert_int_equal(json_scan_build("{\"a\":\"x\"}", 8, &built), -EBADMSG);
	}
}

/* json_text writes for the tree of in what json-c writes (PROTO_JSON_FLAGS); and in, if same. */
static void assert_text_as_json_c(const char *in, bool same)
{
	json_object *o = NULL;
	struct json_text t = {};

	assert_int_equal(proto_parse(in, strlen(in), &o, NULL), 0);
	json_text_value(&t, o);
	assert_int_equal(t.err, 0);
	assert_string_equal(t.buf, json_object_to_json_string_ext(o, PROTO_JSON_FLAGS));
	if (same)
		assert_string_equal(t.buf, in);
	json_object_put(o);
	json_text_done(&t);
}

static void test_text_as_json_c(void **state)
{
	(void)state;
	assert_text_as_json_c("{\"s\":\"a\\\"b\\\\c/d\\n\\t\\u0001\\u007f\xc3\xa9\",\"i\":-42,"
			      "\"b\":[true,false,null],\"o\":{\"x\":{}},\"e\":[]}",
			      false);
}

/* Integers at and beyond int64's ends are written as they were parsed, never clamped. */
static void test_text_large_integers(void **state)
{
	(void)state;
	assert_text_as_json_c("{\"max\":9223372036854775807,\"min\":-9223372036854775808,"
			      "\"above\":9223372036854775808,\"u64\":18446744073709551615}",
			      true);
}

/* Bytes that are not UTF-8, and NUL, become U+FFFD, as proto_json_sanitize_utf8() makes them. */
static void test_text_sanitizes(void **state)
{
	static const char raw[] = "a\xff"
				  "b\xc3"
				  "\0c\xed\xa0\x80";
	json_object *s = json_object_new_string_len(raw, sizeof(raw) - 1);
	struct json_text t = {};

	(void)state;
	json_text_string(&t, raw, sizeof(raw) - 1);
	assert_int_equal(proto_json_sanitize_utf8(s), 0);
	assert_string_equal(t.buf, json_object_to_json_string_ext(s, PROTO_JSON_FLAGS));
	json_object_put(s);
	json_text_done(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_agrees_with_parse),
		cmocka_unit_test(test_scan_depth),
		cmocka_unit_test(test_iter),
		cmocka_unit_test(test_build_as_json_c),
		cmocka_unit_test(test_text_as_json_c),
		cmocka_unit_test(test_text_large_integers),
		cmocka_unit_test(test_text_sanitizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
