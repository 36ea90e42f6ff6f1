/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: BPF ELF objects, inspected as the daemon's worker does
 * (daemon/worker/loadconfig.c): inspect_elf_calls() on the raw image, then libbpf's
 * bpf_object__open_mem() and inspect_object(), then a policy decision under a
 * permissive policy. The input is also read as raw instructions by
 * inspect_insns_summary(), and as a raw load (load_insns) by insns_describe()
 * and decided on.
 *
 * libbpf before 1.3 trusts the BTF it is given: a name offset outside the
 * string section or a type id past the last type makes bpf_object__open_mem()
 * dereference NULL (e.g. strcmp(NULL) for an extern func whose name_off is out
 * of range). Those are libbpf's bugs, not the project's, and would stop every
 * run within seconds; with such a libbpf, objects whose .BTF fails the checks
 * libbpf 1.3 added (btf_validate_type) still go through inspect_elf_calls()
 * but not through libbpf. Set FUZZ_INSPECT_TRUST_LIBBPF=1 to hand them to
 * libbpf anyway.
 */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <bpf/libbpf_version.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/worker/btfcheck.h"
#include "daemon/worker/insns.h"
#include "daemon/worker/inspect.h"
#include "policy/policy.h"

static struct policy_grant *grant;

static const char permissive[] =
	"{\"rules\":[{\"match\":{\"uids\":[\"0-4294967294\"]},"
	"\"allow\":{\"program_types\":[\"socket_filter\",\"kprobe\",\"cgroup_skb\","
	"\"raw_tracepoint\",\"tracepoint\",\"xdp\",\"sched_cls\",\"cgroup_device\"],"
	"\"helper_classes\":[\"base\"],\"maps\":[{\"name\":\"ro_*\",\"access\":\"ro\"},"
	"{\"name\":\"*\",\"access\":\"rw\"}],\"pinning\":true}}]}";

static bool trust_libbpf;

static bool libbpf_can_open(const void *image, size_t size)
{
	const char *why;

	return trust_libbpf || btfcheck_object(image, size, &why);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct policy_identity id = {.uid = 1000, .gid = 1000};
	struct policy *p = policy_new();
	char *error = NULL;

	libbpf_set_print(NULL);
	elf_version(EV_CURRENT);
	trust_libbpf = getenv("FUZZ_INSPECT_TRUST_LIBBPF") != NULL;
	if (!p || policy_load_string(p, "fuzz.json", permissive, NULL, NULL, &error) < 0 ||
	    policy_resolve(p, &id, &grant) < 0) {
		fprintf(stderr, "fuzz_inspect: policy: %s\n", error ? error : "?");
		abort();
	}
	policy_free(p);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_calls *calls = NULL;
	struct bpf_object *obj;
	char *error = NULL;
	struct insns_summary sum = {};
	void *copy;

	/* An exactly sized heap copy, so ASan sees reads past the end. */
	copy = malloc(size ? size : 1);
	if (!copy)
		abort();
	memcpy(copy, data, size);

	if (inspect_insns_summary(copy, size / 8, &sum, &error) == 0)
		insns_summary_done(&sum);
	free(error);
	error = NULL;
	{
		struct object_desc desc = {};
		int r = insns_describe(copy, size, "prog", "cgroup_device", "cgroup_device", false,
				       &desc, &error);

		if (r == 0) {
			struct policy_verdict v = {};

			if (desc.n_programs != 1 || desc.n_maps != 0 ||
			    desc.programs[0].insn_cnt != size / 8 ||
			    policy_decide(grant, &desc, &v) < 0)
				abort();
			policy_verdict_done(&v);
			object_desc_done(&desc);
		} else if (r != -ENOMEM && !error) {
			abort(); /* insns.h: every refusal says why */
		}
		free(error);
		error = NULL;
	}

	if (inspect_elf_calls(copy, size, &calls, &error) < 0) {
		free(error);
		free(copy);
		return 0;
	}
	obj = NULL;
	if (libbpf_can_open(copy, size)) {
		LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "obj");

		obj = bpf_object__open_mem(copy, size, &opts);
	}
	if (obj) {
		struct object_desc desc = {};
		struct object_handles handles = {};

		if (inspect_object(obj, calls, size, &desc, &handles, &error) == 0) {
			struct policy_verdict v = {};

			if (policy_decide(grant, &desc, &v) < 0)
				abort();
			(void)policy_verdict_first_reason(&v);
			for (size_t i = 0; i < desc.n_maps; i++)
				(void)policy_map_memory_estimate(&desc.maps[i], 4);
			policy_verdict_done(&v);
			object_desc_done(&desc);
			object_handles_done(&handles);
		}
		bpf_object__close(obj);
	}
	free(error);
	elf_calls_free(calls);
	free(copy);
	return 0;
}
