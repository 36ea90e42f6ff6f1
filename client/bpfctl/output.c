/* SPDX-License-Identifier: MIT */
/*
 * What bpfctl prints the same way for several commands: errors with their
 * reasons and logs (and the exit status they mean), a check's verdicts, a
 * load's result, JSON, and bytes in hex.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfctl.h"

int die_errno(int err, const char *what)
{
	fprintf(stderr, "bpfctl: %s: %s\n", what, strerror(-err));
	return EXIT_ERROR;
}

/*
 * Every reason, one a line, with its policy key. The broker's reasons name
 * their key already; one that doesn't (an older broker's) gets it added.
 * skip: a reason printed already (the error's message), or NULL.
 */
static void print_reasons(FILE *f, const char *prefix, const char *const *reasons,
			  const char *const *keys, const char *skip)
{
	for (size_t i = 0; reasons && reasons[i]; i++) {
		const char *key = keys && keys[i] ? keys[i] : "";

		if (skip && strcmp(reasons[i], skip) == 0)
			continue;
		fprintf(f, "%s%s", prefix, reasons[i]);
		if (*key && !strstr(reasons[i], key))
			fprintf(f, " (policy key %s)", key);
		fputc('\n', f);
	}
}

int report_error(struct cli *c, int k, struct bpfbroker_error *e, const char *what)
{
	if (!e)
		return die_errno(k, what);
	if (c->json) {
		printf("{\"error\":{\"code\":\"%s\",\"errno\":%d}}\n", e->code, e->err);
	}
	fprintf(stderr, "bpfctl: %s\n", e->message);
	print_reasons(stderr, "bpfctl: ", e->reasons, e->reason_keys, e->message);
	if (e->verifier_log)
		fprintf(stderr, "--- verifier log ---\n%s\n--- end of verifier log ---\n",
			e->verifier_log);
	if (e->libbpf_log)
		fprintf(stderr, "--- libbpf log ---\n%s--- end of libbpf log ---\n", e->libbpf_log);
	/* Refusals (policy or quota) are 1, like a denied check; other failures 2. */
	k = strcmp(e->code, PROTO_E_DENIED) == 0 || strcmp(e->code, PROTO_E_QUOTA) == 0
		    ? EXIT_DENIED
		    : EXIT_ERROR;
	bpfbroker_error_free(e);
	return k;
}

/* A ring buffer's max_entries is its size in bytes. */
static bool map_type_sized_in_bytes(const char *type)
{
	return strcmp(type, "ringbuf") == 0 || strcmp(type, "user_ringbuf") == 0;
}

void print_check(const struct bpfbroker_result *r)
{
	printf("%s\n", r->allowed ? "allowed" : "denied");
	for (size_t i = 0; i < r->n_programs; i++) {
		const struct bpfbroker_program *p = bpfbroker_result_program_at(r, i);

		/*
		 * Programs left out by --program are neither decided on nor
		 * loaded; nor are libbpf's opt-in SEC("?...") ones unless named.
		 */
		printf("program %s (%s, %u insns): %s\n", p->name, p->type, p->insns,
		       !bpfbroker_result_program_selected(r, p->name) ? "not selected"
		       : !bpfbroker_result_program_autoload(r, p->name)
			       ? "not loaded (autoload off)"
		       : strcmp(p->verdict, "allowed") == 0 ? "allowed"
							    : "denied");
		printf("  helpers:");
		for (const char *const *h = p->helpers; h && *h; h++)
			printf(" %s", *h);
		for (const char *const *h = p->kfuncs; h && *h; h++)
			printf(" kfunc:%s", *h);
		printf("\n");
	}
	for (size_t i = 0; i < r->n_maps; i++) {
		const struct bpfbroker_map *m = bpfbroker_result_map_at(r, i);

		printf("map %s (%s, %u %s): access %s; %s\n", m->name, m->type, m->max_entries,
		       map_type_sized_in_bytes(m->type) ? "bytes" : "entries",
		       bpfbroker_access_to_string(m->access),
		       strcmp(m->verdict, "allowed") == 0 ? "allowed" : "denied");
	}
	/* Every reason, each with the policy key that would have to change. */
	if (r->reasons && r->reasons[0]) {
		printf("reasons:\n");
		print_reasons(stdout, "  ", r->reasons, r->reason_keys, NULL);
	}
}

void print_loaded(struct cli *c, struct bpfbroker_result *r)
{
	if (c->json) {
		printf("%s\n", r->json);
	} else {
		printf("loaded %s\n", r->name ?: c->opts.name);
		for (size_t i = 0; i < r->n_programs; i++) {
			const struct bpfbroker_program *p = bpfbroker_result_program_at(r, i);

			if (p->loaded)
				printf("  program %-24s %-20s id %u\n", p->name, p->type, p->id);
		}
		for (size_t i = 0; i < r->n_maps; i++) {
			const struct bpfbroker_map *m = bpfbroker_result_map_at(r, i);

			printf("  map     %-24s %-20s %s\n", m->name, m->type,
			       bpfbroker_access_to_string(m->access));
		}
	}
}

void print_json_value(json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_SPACED));
}

/* "00 01 02" */
char *format_hex(const uint8_t *buf, size_t size)
{
	char *s = malloc(size ? size * 3 : 1);

	if (!s)
		return NULL;
	s[0] = '\0';
	for (size_t i = 0; i < size; i++)
		sprintf(s + 3 * i, i + 1 < size ? "%02x " : "%02x", buf[i]);
	return s;
}
