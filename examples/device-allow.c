/* SPDX-License-Identifier: MIT */
/*
 * What a rootless container runtime does for its device rules, through the
 * broker: build a cgroup device program as raw instructions from OCI
 * linux.resources.devices rules (oci/devices.h, the code the OCI hook
 * bpfbroker-oci-hook uses: runc's and crun's semantics, their default rules
 * included), have the broker load it under a name, and have it attach the
 * program to the container's delegated cgroup. Without the broker a runtime
 * without CAP_BPF cannot load it and skips the device rules.
 *
 *   device-allow [--socket PATH] [--name NAME] [--runtime runc|crun|both] CGROUP
 *                                                     load as NAME and attach (pinned)
 *   device-allow [--runtime ...] --dump FILE           write the instructions to FILE
 *                                                       (for bpfctl load-insns)
 *
 * The rules: deny every device, allow /dev/null (c 1:3) and /dev/zero (c 1:5);
 * the runtime adds its defaults (/dev/full, /dev/tty, ... and mknod of any
 * device), so with --runtime both (the default) a device is allowed only if
 * runc and crun would both allow it. `bpfctl unload NAME` removes them.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libbpfbroker.h"
#include "oci/devices.h"

/* As config.json's linux.resources.devices would have them. */
static const struct oci_device_rule rules[] = {
	{.allow = false, .access = "rwm"},
	{.allow = true,
	 .type = "c",
	 .has_major = true,
	 .major = 1,
	 .has_minor = true,
	 .minor = 3,
	 .access = "rwm"},
	{.allow = true,
	 .type = "c",
	 .has_major = true,
	 .major = 1,
	 .has_minor = true,
	 .minor = 5,
	 .access = "rwm"},
};

struct program {
	struct bpf_insn *insns;
	size_t n;
};

static int dump(const struct program *p, const char *path)
{
	FILE *f = fopen(path, "we");

	if (!f || fwrite(p->insns, sizeof(struct bpf_insn), p->n, f) != p->n) {
		fprintf(stderr, "device-allow: cannot write %s: %m\n", path);
		if (f)
			fclose(f);
		return EXIT_FAILURE;
	}
	return fclose(f) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

static int load_and_attach(const struct program *p, const char *socket, const char *name,
			   const char *cgroup)
{
	struct bpfbroker_insns_opts lo = {
		.sz = sizeof(lo),
		.prog_type = "cgroup_device",
		.attach_type = "cgroup_device",
		.license = "GPL",
		.prog_name = "devices",
		.name = name,
	};
	struct bpfbroker_attach_opts ao = {
		.sz = sizeof(ao),
		.object = name,
		.program = "devices",
		.target_type = "cgroup",
		.attach_type = "cgroup_device",
		.pin = true,
	};
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	struct bpfbroker *b = NULL;
	uint32_t link = 0;
	int k;

	k = bpfbroker_connect(socket, &b);
	if (k < 0) {
		fprintf(stderr, "device-allow: cannot connect to the broker: %s\n", strerror(-k));
		return EXIT_FAILURE;
	}
	k = bpfbroker_load_insns(b, p->insns, p->n, &lo, &res, &err);
	if (k < 0)
		goto fail;
	bpfbroker_result_free(res);
	/* The broker never opens a path for us: we pass the cgroup directory itself. */
	ao.cgroup_fd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ao.cgroup_fd < 0) {
		fprintf(stderr, "device-allow: cannot open %s: %m\n", cgroup);
		bpfbroker_close(b);
		return EXIT_FAILURE;
	}
	k = bpfbroker_attach(b, &ao, &link, NULL, &err);
	close(ao.cgroup_fd);
	if (k < 0)
		goto fail;
	printf("loaded %s (%zu instructions), attached to %s as link %u\n", name, p->n, cgroup,
	       link);
	bpfbroker_close(b);
	return EXIT_SUCCESS;
fail:
	fprintf(stderr, "device-allow: %s\n", err ? err->message : strerror(-k));
	if (err && err->verifier_log)
		fprintf(stderr, "%s\n", err->verifier_log);
	bpfbroker_error_free(err);
	bpfbroker_close(b);
	return EXIT_FAILURE;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{"socket", required_argument, NULL, 's'},
		{"name", required_argument, NULL, 'n'},
		{"dump", required_argument, NULL, 'd'},
		{"runtime", required_argument, NULL, 'r'},
		{},
	};
	const struct oci_device_config config = {.rules = rules,
						 .n_rules = sizeof(rules) / sizeof(rules[0])};
	const char *socket = NULL, *name = "devices", *dump_to = NULL;
	enum oci_runtime runtime = OCI_RUNTIME_BOTH;
	struct program p = {0};
	char err[256] = "";
	int opt, k;

	while ((opt = getopt_long(argc, argv, "", options, NULL)) >= 0) {
		switch (opt) {
		case 's':
			socket = optarg;
			break;
		case 'n':
			name = optarg;
			break;
		case 'd':
			dump_to = optarg;
			break;
		case 'r':
			if (oci_runtime_from_name(optarg, &runtime) < 0) {
				fprintf(stderr, "device-allow: --runtime is runc, crun or both\n");
				return EXIT_FAILURE;
			}
			break;
		default:
			return EXIT_FAILURE;
		}
	}
	k = oci_devices_program(&config, runtime, &p.insns, &p.n, err, sizeof(err));
	if (k < 0) {
		fprintf(stderr, "device-allow: %s\n", err);
		return EXIT_FAILURE;
	}
	if (dump_to)
		k = optind == argc ? dump(&p, dump_to) : EXIT_FAILURE;
	else if (optind + 1 == argc)
		k = load_and_attach(&p, socket, name, argv[optind]);
	else {
		fprintf(stderr, "usage: device-allow [--socket PATH] [--name NAME] [--runtime "
				"runc|crun|both] CGROUP\n"
				"       device-allow [--runtime runc|crun|both] --dump FILE\n");
		k = EXIT_FAILURE;
	}
	free(p.insns);
	return k;
}
