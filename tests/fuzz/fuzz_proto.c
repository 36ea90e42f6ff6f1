/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the wire protocol as a client stream would deliver it.
 *
 * Input layout (fixed header, so mutations of the payload don't shift it):
 *   byte 0            flags: bits 0-1 pick max_bytes for proto_recv()
 *                     (request limit, reply limit, 64, 1024)
 *   byte 1            number of chunks k = 1 + byte % 8
 *   k * 3 bytes       per chunk: 16-bit little-endian length (clamped to what
 *                     is left; the last chunk takes the rest) and the number
 *                     of fds to attach (byte % 6, so sometimes too many)
 *   rest              payload, cut into the k chunks
 * Each chunk goes as one SOCK_SEQPACKET packet through a socketpair into the
 * real receive path, proto_recv(); every message it returns goes through
 * proto_request_check(), proto_load_request_decode(),
 * proto_insns_request_decode() and proto_map_request_decode() (the table-driven
 * decoder of params.c, by their tables), and through every method's decoder in
 * the method table (proto_method_decode()); a decoded
 * request must survive
 * encode -> proto_parse -> decode unchanged. Each chunk is
 * also handed to proto_parse() directly in an exactly sized buffer, and to
 * json_scan_object_text() and json_scan_build(), whose tree must be the
 * parser's; what the parser refuses, both must refuse (the builder may leave
 * it to json-c). Every fd
 * opened is closed again; the fd count is checked after each input.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/jsonscan.h"
#include "proto/method.h"
#include "proto/proto.h"

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		abort();
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the DIR's own fd */
}

static int send_chunk(int sock, const uint8_t *buf, size_t len, int fd_source, size_t n_fds)
{
	struct iovec iov = {.iov_base = (void *)buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	char control[CMSG_SPACE(sizeof(int) * 8)] = {};
	int fds[8];

	if (n_fds > 0) {
		struct cmsghdr *cmsg;

		for (size_t i = 0; i < n_fds; i++)
			fds[i] = fd_source; /* the receiver gets a new fd for each */
		mh.msg_control = control;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		cmsg = CMSG_FIRSTHDR(&mh);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * n_fds);
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 ? -1 : 0;
}

/* Parse, decode and encode once more: the encoding of what came back, or NULL. */
static json_object *load_again(json_object *parsed, size_t n_fds)
{
	struct proto_load_request r = {};
	json_object *o = NULL;

	if (proto_load_request_decode(parsed, n_fds, &r, NULL) == 0)
		o = proto_load_request_encode(&r);
	proto_load_request_done(&r);
	return o;
}

static json_object *insns_again(json_object *parsed, size_t n_fds)
{
	struct proto_insns_request r = {};
	json_object *o = NULL;

	if (proto_insns_request_decode(parsed, n_fds, &r, NULL) == 0 && r.insns_fd < n_fds)
		o = proto_insns_request_encode(&r);
	proto_insns_request_done(&r);
	return o;
}

static json_object *map_again(json_object *parsed, size_t n_fds)
{
	struct proto_map_request r = {};
	json_object *o = NULL;

	(void)n_fds;
	if (proto_map_request_decode(parsed, &r, NULL) == 0)
		o = proto_map_request_encode(&r);
	proto_map_request_done(&r);
	return o;
}

/* decode(encode(req)) must give back the same request; enc is encode(req) (taken). */
static void check_roundtrip(const char *what, json_object *enc,
			    json_object *(*again)(json_object *, size_t), size_t n_fds)
{
	json_object *parsed = NULL, *enc2;
	const char *text, *text2;
	char *error = NULL;
	size_t len;

	if (!enc)
		abort();
	text = json_object_to_json_string_length(enc, JSON_C_TO_STRING_PLAIN, &len);
	if (proto_parse(text, len, &parsed, &error) < 0) {
		fprintf(stderr, "encoded %s request does not parse: %s\n%s\n", what, error, text);
		abort();
	}
	enc2 = again(parsed, n_fds);
	if (!enc2) {
		fprintf(stderr, "encoded %s request does not decode:\n%s\n", what, text);
		abort();
	}
	text2 = json_object_to_json_string_ext(enc2, JSON_C_TO_STRING_PLAIN);
	if (strcmp(text, text2) != 0) {
		fprintf(stderr, "%s request changed in a round trip:\n%s\n%s\n", what, text, text2);
		abort();
	}
	json_object_put(enc2);
	json_object_put(parsed);
	json_object_put(enc);
	free(error);
}

/* Every method's params decoder, from the method table: each refuses, or round-trips. */
static void decode_every_method(json_object *params, size_t n_fds)
{
	for (size_t i = 0; i < PROTO_METHOD_COUNT; i++) {
		const struct proto_method *m = &proto_methods[i];
		void *p = calloc(1, m->params_size ?: 1), *p2 = calloc(1, m->params_size ?: 1);
		json_object *enc, *enc2, *parsed = NULL;
		const char *text, *text2;
		char *error = NULL;
		size_t len;

		if (!p || !p2)
			abort();
		if (proto_method_decode(m, params, n_fds, p, &error) < 0)
			goto next;
		enc = proto_method_encode(m, p);
		if (!enc)
			abort();
		text = json_object_to_json_string_length(enc, JSON_C_TO_STRING_PLAIN, &len);
		if (proto_parse(text, len, &parsed, &error) < 0 ||
		    proto_method_decode(m, parsed, n_fds, p2, &error) < 0) {
			fprintf(stderr, "encoded %s params do not decode: %s\n%s\n", m->name,
				error ? error : "?", text);
			abort();
		}
		enc2 = proto_method_encode(m, p2);
		text2 = enc2 ? json_object_to_json_string_ext(enc2, JSON_C_TO_STRING_PLAIN) : "";
		if (strcmp(text, text2) != 0) {
			fprintf(stderr, "%s params changed in a round trip:\n%s\n%s\n", m->name,
				text, text2);
			abort();
		}
		json_object_put(enc2);
		json_object_put(parsed);
		json_object_put(enc);
		proto_method_done(m, p2);
		proto_method_done(m, p);
	next:
		free(error);
		free(p2);
		free(p);
	}
}

/* Send the decoded request again with proto_send() and its fds; it must come back whole. */
static void resend(int sv[2], int64_t id, const struct proto_load_request *req,
		   const struct proto_msg *m)
{
	json_object *msg = proto_request_new(id, "load", proto_load_request_encode(req));
	struct proto_msg back = {};
	json_object *params;
	const char *method;
	char *error = NULL;
	int64_t id2;

	if (!msg)
		abort();
	if (proto_send(sv[0], msg, m->fds, m->n_fds, PROTO_MAX_REQUEST_BYTES) < 0) {
		json_object_put(msg);
		return; /* larger than a request may be: fine */
	}
	if (proto_recv(sv[1], PROTO_MAX_REQUEST_BYTES, PROTO_MAX_REQUEST_FDS, &back, &error) != 1 ||
	    back.n_fds != m->n_fds ||
	    proto_request_check(back.json, &id2, &method, &params, &error) < 0 || id2 != id ||
	    strcmp(method, "load") != 0) {
		fprintf(stderr, "resent request did not come back: %s\n", error ? error : "?");
		abort();
	}
	proto_msg_done(&back);
	json_object_put(msg);
	free(error);
}

static void handle_msg(int sv[2], struct proto_msg *m)
{
	struct proto_load_request req = {};
	json_object *params = NULL;
	const char *method = NULL;
	char *error = NULL;
	int64_t id;

	if (proto_request_check(m->json, &id, &method, &params, &error) < 0) {
		free(error);
		return;
	}
	/* The daemon decodes "load" params; try every request's params the same way. */
	if (proto_load_request_decode(params, m->n_fds, &req, &error) == 0) {
		int fd;

		check_roundtrip("load", proto_load_request_encode(&req), load_again, m->n_fds);
		resend(sv, id, &req, m);
		fd = proto_msg_take_fd(m, req.object_fd);
		if (fd < 0)
			abort(); /* decode promised the index is in range */
		close(fd);
		if (proto_msg_take_fd(m, req.object_fd) != -EBADF)
			abort();
		proto_load_request_done(&req);
	}
	free(error);
	error = NULL;
	{
		struct proto_insns_request ireq = {};

		if (proto_insns_request_decode(params, m->n_fds, &ireq, &error) == 0) {
			check_roundtrip("load_insns", proto_insns_request_encode(&ireq),
					insns_again, m->n_fds);
			proto_insns_request_done(&ireq);
		}
		free(error);
		error = NULL;
	}
	{
		struct proto_map_request mreq = {};

		if (proto_map_request_decode(params, &mreq, &error) == 0) {
			/* Decoding bounds what the worker then allocates; count is a
			 * dump's alone (0 for the other ops). */
			if (mreq.key_size > PROTO_MAP_MAX_KEY ||
			    mreq.value_size > PROTO_MAP_MAX_VALUE ||
			    (mreq.op == PROTO_MAP_DUMP) != (mreq.count != 0) ||
			    mreq.count > PROTO_MAP_MAX_DUMP_ENTRIES ||
			    mreq.flags > PROTO_MAP_MAX_FLAGS)
				abort();
			check_roundtrip("map", proto_map_request_encode(&mreq), map_again,
					m->n_fds);
			proto_map_request_done(&mreq);
		}
		free(error);
		error = NULL;
	}

	decode_every_method(params, m->n_fds);
	{
		json_object *reply = proto_reply_new(id, json_object_new_string(method));
		json_object *err = proto_error_new(id, PROTO_E_INVALID, -22, method);

		if (!reply || !err)
			abort();
		json_object_put(reply);
		json_object_put(err);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t max_bytes_choice[] = {PROTO_MAX_REQUEST_BYTES, PROTO_MAX_REPLY_BYTES,
						  64, 1024};
	int baseline;
	size_t lens[8], fd_counts[8], k, max_bytes, off;
	const uint8_t *payload;
	size_t payload_len;
	int sv[2], fd_source;

	if (size < 2)
		return 0;
	max_bytes = max_bytes_choice[data[0] & 3];
	k = 1 + data[1] % 8;
	if (size < 2 + 3 * k)
		return 0;
	payload = data + 2 + 3 * k;
	payload_len = size - 2 - 3 * k;
	off = 0;
	for (size_t i = 0; i < k; i++) {
		const uint8_t *h = data + 2 + 3 * i;
		size_t want = (size_t)h[0] | (size_t)h[1] << 8;
		size_t left = payload_len - off;

		lens[i] = (i == k - 1 || want > left) ? left : want;
		fd_counts[i] = h[2] % 6;
		off += lens[i];
	}

	/*
	 * Counted before each input, not once: between inputs libFuzzer may start
	 * llvm-symbolizer (to print a NEW_FUNC) and keep its pipes open.
	 */
	baseline = count_fds();
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		abort();
	fd_source = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd_source < 0)
		abort();

	off = 0;
	for (size_t i = 0; i < k; i++) {
		const uint8_t *chunk = payload + off;
		struct proto_msg m = {};
		char *error = NULL;
		json_object *o = NULL;
		char *copy;
		int r;

		off += lens[i];

		/* The pure parser, on a buffer exactly the chunk's size. */
		copy = malloc(lens[i] ? lens[i] : 1);
		if (!copy)
			abort();
		memcpy(copy, chunk, lens[i]);
		if (proto_parse(copy, lens[i], &o, &error) == 0) {
			struct json_span top;

			/*
			 * The scanner, on what the parser accepts (it may refuse some of
			 * it: json-c takes UTF-8-encoded surrogates, the scanner does not).
			 */
			if (json_object_is_type(o, json_type_object)) {
				json_object *built = NULL;

				(void)json_scan_object_text(copy, lens[i], &top);
				/* A tree built from the scan is json-c's (store.c reads metadata
				 * so). */
				if (json_scan_build(copy, lens[i], &built) == 0 &&
				    !json_object_equal(built, o))
					abort();
				json_object_put(built);
			}
			json_object_put(o);
		} else if (lens[i] <= PROTO_MAX_REPLY_BYTES) {
			/*
			 * What the parser refuses (not for its size), the scanner refuses too, but
			 * for numbers beyond a double (json-c's Infinity), which it does not
			 * convert; the builder refuses or leaves it to json-c.
			 */
			struct json_span top;
			json_object *built = NULL;
			bool finite = !error || !strstr(error, "NaN and Infinity");

			if (finite && json_scan_object_text(copy, lens[i], &top) == 0) {
				fprintf(stderr, "scanner took what the parser refused: %s\n",
					error);
				abort();
			}
			if (json_scan_build(copy, lens[i], &built) == 0) {
				fprintf(stderr, "builder took what the parser refused: %s\n",
					error);
				abort();
			}
		}
		free(copy);
		free(error);
		error = NULL;

		if (send_chunk(sv[0], chunk, lens[i], fd_source, fd_counts[i]) < 0)
			continue;
		r = proto_recv(sv[1], max_bytes, PROTO_MAX_REQUEST_FDS, &m, &error);
		if (r == 1) {
			if (!m.json || m.n_fds != fd_counts[i])
				abort();
			handle_msg(sv, &m);
			proto_msg_done(&m);
		} else if (r == -EAGAIN) {
			abort(); /* a packet was sent, so one must be waiting */
		}
		free(error);
	}

	close(fd_source);
	close(sv[0]);
	close(sv[1]);
	if (count_fds() != baseline) {
		fprintf(stderr, "fd leak: %d fds open, %d before\n", count_fds(), baseline);
		abort();
	}
	return 0;
}
