/* SPDX-License-Identifier: MIT */
/*
 * The client's object taken from its fd: a sealed memfd mapped, anything else copied, within the
 * caller's size limit.
 */
#include "job.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macro.h"
#include "denial.h"
#include "insns.h"
#include "proto/proto.h"
#include "reply.h"

void object_release(uint8_t *object, size_t size, bool mapped)
{
	if (mapped)
		munmap(object, size);
	else
		free(object);
}

/* The size of the object as taken, against the request's kind and the caller's limit. */
static int job_check_object_size(struct job *j, uint64_t size, uint64_t limit, struct reply *r)
{
	if (j->raw) {
		_cleanup_free_ char *error = NULL;
		int k = insns_check_size(size, j->grant->limits.max_insns_per_program,
					 j->insns.prog_name, &error);

		if (k == -E2BIG) {
			char note[128];
			const char *key = policy_limit_key("max_insns_per_program",
							   size / sizeof(struct bpf_insn), note,
							   sizeof(note));

			return denial_reply(r, PROTO_ERR_DENIED, E2BIG, "program",
					    j->insns.prog_name, key, "%s%s",
					    error ? error : strerror(-k), note);
		}
		if (k < 0)
			return reply_error(r, PROTO_ERR_OBJECT, -k, "%s",
					   error ? error : strerror(-k));
	}
	if (size == 0)
		return reply_error(r, PROTO_ERR_OBJECT, EINVAL, "the object is empty");
	if (size > limit) {
		char note[128];
		const char *key = policy_limit_key("max_object_bytes", size, note, sizeof(note));

		return denial_reply(r, PROTO_ERR_DENIED, EFBIG, "object", NULL, key,
				    "object is %llu bytes, over your limit of %llu bytes%s",
				    (unsigned long long)size, (unsigned long long)limit, note);
	}
	return 0;
}

/*
 * Copy what the fd holds, with pread() until its end, whatever size it said
 * it has (it may change while we read), and at most one byte over limit:
 * enough to know it is too large.
 */
static int job_copy_object(struct job *j, int fd, size_t hint, uint64_t limit, struct reply *r)
{
	size_t cap = (hint < limit ? hint : (size_t)limit) + 1, off = 0;
	uint8_t *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (off == cap) {
			uint8_t *grown;

			if (cap > limit)
				break;
			cap = cap * 2 > limit + 1 ? (size_t)limit + 1 : cap * 2;
			grown = realloc(buf, cap);
			if (!grown) {
				free(buf);
				return -ENOMEM;
			}
			buf = grown;
		}
		n = pread(fd, buf + off, cap - off, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return reply_error(r, PROTO_ERR_OBJECT, errno,
					   "cannot read the object fd: %m");
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	j->object = buf;
	j->object_size = off;
	return 0;
}

/*
 * Take the object from the client's fd so that the client can no longer
 * change what we inspect and load. Only regular files (memfds are regular)
 * are accepted, so a pipe or socket can't make us wait.
 *
 * A memfd already sealed against writing, growing and shrinking
 * (libbpfbroker sends one) can't change: it is mapped, privately, so nothing
 * is copied (a 1.8 MB object would otherwise cost a copy and a page fault per
 * page), and pages libbpf might write stay ours. Its size is read only once
 * the seals are seen: read before, it may be a size the client shrank the
 * memfd below before sealing it, and the mapping would then fault (SIGBUS)
 * past the end. Anything else is copied, never mapped, up to its end.
 */
int job_read_object(struct job *j, int fd, struct reply *r)
{
	const int sealed = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
	uint64_t limit = j->grant->limits.max_object_bytes;
	struct stat st;
	int seals, k;

	if (limit > POLICY_HARD_MAX_OBJECT_BYTES)
		limit = POLICY_HARD_MAX_OBJECT_BYTES;
	if (fstat(fd, &st) < 0)
		return reply_error(r, PROTO_ERR_OBJECT, errno, "cannot stat the object fd: %m");
	if (!S_ISREG(st.st_mode))
		return reply_error(r, PROTO_ERR_OBJECT, EBADFD,
				   "the object fd must be a regular file or memfd, not %s",
				   S_ISFIFO(st.st_mode)	  ? "a pipe"
				   : S_ISSOCK(st.st_mode) ? "a socket"
				   : S_ISDIR(st.st_mode)  ? "a directory"
							  : "a special file");
	seals = fcntl(fd, F_GET_SEALS);
	if (seals >= 0 && (seals & sealed) == sealed) {
		void *p;

		/* Sealed: this size is final. */
		if (fstat(fd, &st) < 0)
			return reply_error(r, PROTO_ERR_OBJECT, errno,
					   "cannot stat the object fd: %m");
		k = job_check_object_size(j, (uint64_t)st.st_size, limit, r);
		if (k != 0)
			return k;
		p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED) {
			j->object = p;
			j->object_size = (size_t)st.st_size;
			j->object_mapped = true;
			return 0;
		}
	}
	/* What it claims now is only a hint; over the limit already, it is refused unread. */
	if (st.st_size > 0 && (uint64_t)st.st_size > limit)
		return job_check_object_size(j, (uint64_t)st.st_size, limit, r);
	k = job_copy_object(j, fd, st.st_size > 0 ? (size_t)st.st_size : 0, limit, r);
	if (k != 0)
		return k;
	return job_check_object_size(j, j->object_size, limit, r);
}
