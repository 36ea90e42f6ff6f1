/* SPDX-License-Identifier: MIT */
/* Loads: an object from an fd, a file or memory, or raw instructions, sent with their options. */
#include "libbpfbroker.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/macro.h"
#include "libbpfbroker-internal.h"

/* Send a load (or load_insns) with its params and the one fd; the result on success. */
static int load_call(struct bpfbroker *b, enum proto_method_id method, const void *params, int fd,
		     struct bpfbroker_result **ret, struct bpfbroker_error **err)
{
	struct proto_msg m = {};
	json_object *result;
	int k;

	k = bpfbroker_request(b, method, params, &fd, 1, &m, &result, err);
	if (k < 0)
		return k;
	k = result_build(&m, ret);
	proto_msg_done(&m);
	return k;
}

int bpfbroker_load_fd(struct bpfbroker *b, int fd, const struct bpfbroker_load_opts *opts,
		      struct bpfbroker_result **ret, struct bpfbroker_error **err)
{
	struct proto_load_request req;
	int k;

	k = opts_to_request(opts, &req);
	if (k >= 0)
		k = load_call(b, PROTO_METHOD_LOAD, &req, fd, ret, err);
	proto_load_request_done(&req);
	return k;
}

int bpfbroker_load_system(struct bpfbroker *b, const char *name,
			  const struct bpfbroker_load_opts *opts, struct bpfbroker_result **ret,
			  struct bpfbroker_error **err)
{
	struct proto_load_request req;
	struct proto_msg m = {};
	json_object *result;
	int k;

	if (!name)
		return -EINVAL;
	k = opts_to_request(opts, &req);
	req.object_fd = PROTO_NO_OBJECT_FD; /* the broker reads the object itself */
	if (k >= 0 && !(req.system_object = strdup(name)))
		k = -ENOMEM;
	/* Named after the system object, as a file's load is after its file. */
	if (k >= 0 && !req.object_name && !(req.object_name = strndup(name, 15)))
		k = -ENOMEM;
	/* No fd: the broker reads the object itself. */
	if (k >= 0)
		k = bpfbroker_request(b, PROTO_METHOD_LOAD, &req, NULL, 0, &m, &result, err);
	if (k >= 0) {
		k = result_build(&m, ret);
		proto_msg_done(&m);
	}
	proto_load_request_done(&req);
	return k;
}

int bpfbroker_load_file(struct bpfbroker *b, const char *path,
			const struct bpfbroker_load_opts *opts, struct bpfbroker_result **ret,
			struct bpfbroker_error **err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	struct bpfbroker_load_opts named = {};
	char name[16];
	const char *base = strrchr(path, '/');
	size_t n = 0;

	if (fd < 0)
		return negative_errno();
	/* Like libbpf's bpf_object__open_file: the object is named after its file. */
	if (!opts || !opts->object_name) {
		base = base ? base + 1 : path;
		while (base[n] && base[n] != '.' && n < sizeof(name) - 1) {
			name[n] = base[n];
			n++;
		}
		name[n] = '\0';
		if (opts) {
			int k = opts_copy(&named, sizeof(named), opts, opts->sz, LOAD_OPTS_SIZE_V0);

			if (k < 0)
				return k;
		}
		named.sz = sizeof(named);
		named.object_name = n ? name : NULL;
		opts = &named;
	}
	return bpfbroker_load_fd(b, fd, opts, ret, err);
}

/* A memfd holding buf, sealed so the broker reads exactly what we wrote. */
static int sealed_memfd(const void *buf, size_t size)
{
	_cleanup_close_ int fd = memfd_create("bpfbroker-object", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	size_t off = 0;

	if (fd < 0)
		return negative_errno();
	while (off < size) {
		ssize_t n = write(fd, (const char *)buf + off, size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return negative_errno();
		off += (size_t)n;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		return negative_errno();
	return TAKE_FD(fd);
}

int bpfbroker_load_mem(struct bpfbroker *b, const void *buf, size_t size,
		       const struct bpfbroker_load_opts *opts, struct bpfbroker_result **ret,
		       struct bpfbroker_error **err)
{
	_cleanup_close_ int fd = sealed_memfd(buf, size);

	if (fd < 0)
		return fd;
	return bpfbroker_load_fd(b, fd, opts, ret, err);
}

/* The fields every version of bpfbroker_insns_opts has. */
#define INSNS_OPTS_SIZE_V0 (offsetof(struct bpfbroker_insns_opts, check_only) + sizeof(bool))

int bpfbroker_load_insns_fd(struct bpfbroker *b, int fd, const struct bpfbroker_insns_opts *theirs,
			    struct bpfbroker_result **ret, struct bpfbroker_error **err)
{
	struct bpfbroker_insns_opts opts;
	struct proto_insns_request req = {.insns_fd = 0};
	int k;

	if (!theirs)
		return -EINVAL;
	k = opts_copy(&opts, sizeof(opts), theirs, theirs->sz, INSNS_OPTS_SIZE_V0);
	if (k < 0)
		return k;
	if (!opts.prog_type || !opts.license)
		return -EINVAL;
	/* Borrowed strings: the encoder copies them. */
	req.type = (char *)opts.prog_type;
	req.attach_type = (char *)opts.attach_type;
	req.license = (char *)opts.license;
	req.prog_name = (char *)opts.prog_name;
	req.name = (char *)opts.name;
	req.check_only = opts.check_only;
	return load_call(b, PROTO_METHOD_LOAD_INSNS, &req, fd, ret, err);
}

int bpfbroker_load_insns(struct bpfbroker *b, const void *insns, size_t insn_cnt,
			 const struct bpfbroker_insns_opts *opts, struct bpfbroker_result **ret,
			 struct bpfbroker_error **err)
{
	_cleanup_close_ int fd = -EBADF;

	/* struct bpf_insn is 8 bytes; more than SIZE_MAX of them cannot be meant. */
	if (!insns || insn_cnt == 0 || insn_cnt > SIZE_MAX / 8)
		return -EINVAL;
	fd = sealed_memfd(insns, insn_cnt * 8);
	if (fd < 0)
		return fd;
	return bpfbroker_load_insns_fd(b, fd, opts, ret, err);
}
