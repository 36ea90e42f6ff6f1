/* SPDX-License-Identifier: MIT */
/*
 * What a rootless container runtime does for its device rules, through the
 * broker: build a cgroup device program as raw instructions (as runc and
 * crun generate them: read the access type, major and minor from struct
 * bpf_cgroup_dev_ctx, allow what a rule matches, deny the rest), have the
 * broker load it under a name, and have it attach the program to the
 * container's delegated cgroup. Without the broker a runtime without
 * CAP_BPF cannot load it and skips the device rules.
 *
 *   device-allow [--socket PATH] [--name NAME] CGROUP   load as NAME and attach (pinned)
 *   device-allow --dump FILE                           write the instructions to FILE
 *                                                       (for bpfctl load-insns)
 *
 * The rules: /dev/null (c 1:3) and /dev/zero (c 1:5), read, write and mknod;
 * every other device is denied. `bpfctl unload NAME` removes them.
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

struct device_rule {
	int type; /* BPF_DEVCG_DEV_CHAR or BPF_DEVCG_DEV_BLOCK */
	unsigned major, minor;
	int access; /* BPF_DEVCG_ACC_READ | _WRITE | _MKNOD */
};

static const struct device_rule allowed[] = {
	{BPF_DEVCG_DEV_CHAR, 1, 3, BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD},
	{BPF_DEVCG_DEV_CHAR, 1, 5, BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD},
};

#define MAX_INSNS 64

struct program {
	struct bpf_insn insns[MAX_INSNS];
	size_t n;
};

static void emit(struct program *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off,
		 int32_t imm)
{
	p->insns[p->n++] = (struct bpf_insn){
		.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
}

/*
 * r1 is the context: struct bpf_cgroup_dev_ctx { u32 access_type; u32 major;
 * u32 minor; }, access_type holding the device type in its low 16 bits and
 * the access asked for in its high 16 bits. A program returns 1 to allow.
 */
static size_t build_program(struct program *p)
{
	p->n = 0;
	/* w2 = type, w3 = access, w4 = major, w5 = minor */
	emit(p, BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_1, 0, 0);
	emit(p, BPF_ALU | BPF_AND | BPF_K, BPF_REG_2, 0, 0, 0xffff);
	emit(p, BPF_LDX | BPF_MEM | BPF_W, BPF_REG_3, BPF_REG_1, 0, 0);
	emit(p, BPF_ALU | BPF_RSH | BPF_K, BPF_REG_3, 0, 0, 16);
	emit(p, BPF_LDX | BPF_MEM | BPF_W, BPF_REG_4, BPF_REG_1, 4, 0);
	emit(p, BPF_LDX | BPF_MEM | BPF_W, BPF_REG_5, BPF_REG_1, 8, 0);
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
		const struct device_rule *r = &allowed[i];
		/* Each test jumps past the rest of this rule's 8 instructions when it fails. */
		size_t next = p->n + 8;

		emit(p, BPF_JMP32 | BPF_JNE | BPF_K, BPF_REG_2, 0, (int16_t)(next - p->n - 1),
		     r->type);
		/* Access asked for must be within the rule's: (access & rule) == access. */
		emit(p, BPF_ALU | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_3, 0, 0);
		emit(p, BPF_ALU | BPF_AND | BPF_K, BPF_REG_1, 0, 0, r->access);
		emit(p, BPF_JMP32 | BPF_JNE | BPF_X, BPF_REG_1, BPF_REG_3,
		     (int16_t)(next - p->n - 1), 0);
		emit(p, BPF_JMP32 | BPF_JNE | BPF_K, BPF_REG_4, 0, (int16_t)(next - p->n - 1),
		     (int32_t)r->major);
		emit(p, BPF_JMP32 | BPF_JNE | BPF_K, BPF_REG_5, 0, (int16_t)(next - p->n - 1),
		     (int32_t)r->minor);
		emit(p, BPF_ALU | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
		emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	}
	/* No rule matched: deny. */
	emit(p, BPF_ALU | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
	emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return p->n;
}

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
		{},
	};
	const char *socket = NULL, *name = "devices", *dump_to = NULL;
	struct program p;
	int opt;

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
		default:
			return EXIT_FAILURE;
		}
	}
	build_program(&p);
	if (dump_to)
		return optind == argc ? dump(&p, dump_to) : EXIT_FAILURE;
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: device-allow [--socket PATH] [--name NAME] CGROUP\n"
				"       device-allow --dump FILE\n");
		return EXIT_FAILURE;
	}
	return load_and_attach(&p, socket, name, argv[optind]);
}
