/* SPDX-License-Identifier: MIT */
#include "libbpfbroker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "common/hex.h"
#include "common/macro.h"
#include "libbpfbroker-internal.h"
#include "proto/jsonscan.h"
#include "proto/proto.h"

/*
 * The programs and maps are the library's arrays, handed out one element at a
 * time (bpfbroker_result_program_at()): their structs may grow (ABI.md).
 */
struct result_priv {
	struct bpfbroker_result pub;
	struct bpfbroker_program *programs;
	struct bpfbroker_map *maps;
	json_object *reply;
	int *fds;
	size_t n_fds;
	void **allocs; /* string arrays to free */
	size_t n_allocs;
};

struct error_priv {
	struct bpfbroker_error pub;
	json_object *reply;
	const char **reasons;
	const char **reason_keys;
};

int bpfbroker_connect(const char *path, struct bpfbroker **ret)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_close_ int fd = -EBADF;
	struct bpfbroker *b;

	if (!path)
		path = getenv(PROTO_SOCKET_ENV);
	if (!path || !*path)
		path = PROTO_DEFAULT_SOCKET;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return negative_errno();
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return negative_errno();
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->fd = TAKE_FD(fd);
	b->next_id = 1;
	*ret = b;
	return 0;
}

void bpfbroker_close(struct bpfbroker *b)
{
	if (!b)
		return;
	safe_close(b->fd);
	free(b);
}

/* Send one request and wait for its reply (at most max_fds fds), as it came off the socket. */
static int call_raw(struct bpfbroker *b, json_object *req, const int *fds, size_t n_fds,
		    size_t max_fds, struct proto_raw *ret)
{
	int k;

	k = proto_send(b->fd, req, fds, n_fds, PROTO_MAX_REQUEST_BYTES);
	if (k < 0)
		return k;
	for (;;) {
		struct pollfd p = {.fd = b->fd, .events = POLLIN};

		k = poll(&p, 1, -1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return negative_errno();
		k = proto_recv_raw(b->fd, PROTO_MAX_REPLY_BYTES, max_fds, ret, NULL);
		if (k == -EAGAIN)
			continue;
		if (k == 0)
			return -ECONNRESET;
		return k < 0 ? k : 0;
	}
}

/* Parse a reply (its fds go with it) and check that it answers request id. */
static int reply_parse(struct proto_raw *raw, int64_t id, struct proto_msg *ret)
{
	struct proto_msg m = {};
	int64_t got = -1;
	int k;

	k = proto_parse(raw->buf, raw->len, &m.json, NULL);
	if (k < 0) {
		proto_raw_done(raw);
		return k;
	}
	m.fds = TAKE_PTR(raw->fds);
	m.n_fds = raw->n_fds;
	raw->n_fds = 0;
	proto_raw_done(raw);
	/*
	 * An error with id 0 is the broker's answer to the connection rather than
	 * the request (busy, too many groups, an unreadable packet): it is ours.
	 */
	if (proto_get_int(m.json, "id", true, 0, INT64_MAX, &got, NULL) < 0 ||
	    (got != id && !(got == 0 && json_object_object_get_ex(m.json, "error", NULL)))) {
		proto_msg_done(&m);
		return -EPROTO;
	}
	*ret = m;
	return 0;
}

/* Send one request and wait for its reply, which may carry at most max_fds fds. */
static int call(struct bpfbroker *b, json_object *req, int64_t id, const int *fds, size_t n_fds,
		size_t max_fds, struct proto_msg *ret)
{
	struct proto_raw raw = {};
	int k = call_raw(b, req, fds, n_fds, max_fds, &raw);

	return k < 0 ? k : reply_parse(&raw, id, ret);
}

int bpfbroker_call_raw(struct bpfbroker *b, const char *request_json, const int *fds, size_t n_fds,
		       char **ret_reply_json, int **ret_fds, size_t *ret_n_fds)
{
	json_object *req = NULL;
	struct proto_msg m = {};
	int64_t id = -1;
	char *text;
	int k;

	k = proto_parse(request_json, strlen(request_json), &req, NULL);
	if (k < 0)
		return k;
	(void)proto_get_int(req, "id", false, 0, INT64_MAX, &id, NULL);
	k = call(b, req, id, fds, n_fds, PROTO_MAX_REPLY_FDS, &m);
	json_object_put(req);
	if (k == -EPROTO && id < 0)
		k = -EPROTO;
	if (k < 0)
		return k;
	text = strdup(json_object_to_json_string_ext(m.json, JSON_C_TO_STRING_PLAIN));
	if (!text) {
		proto_msg_done(&m);
		return -ENOMEM;
	}
	*ret_reply_json = text;
	*ret_fds = TAKE_PTR(m.fds);
	*ret_n_fds = m.n_fds;
	m.n_fds = 0;
	proto_msg_done(&m);
	return 0;
}

static const char *get_str(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int64_t get_int(json_object *o, const char *key, int64_t dflt)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return dflt;
	return json_object_get_int64(v);
}

static bool get_bool(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

/* A NULL-terminated array of borrowed strings from a JSON array (NULL if absent). */
static const char **string_array(json_object *o, const char *key)
{
	json_object *a;
	const char **v;
	size_t n;

	if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array))
		return NULL;
	n = json_object_array_length(a);
	v = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; v && i < n; i++)
		v[i] = json_object_get_string(json_object_array_get_idx(a, i));
	return v;
}

/*
 * The policy key of each of o's "reasons", from "denials" (one entry per
 * reason, in the same order): NULL-terminated, "" where a reason has none or
 * the broker sent no "denials" (older brokers). NULL without "reasons".
 */
static const char **reason_keys(json_object *o)
{
	json_object *reasons, *denials = NULL;
	const char **v;
	size_t n, n_denials = 0;

	if (!json_object_object_get_ex(o, "reasons", &reasons) ||
	    !json_object_is_type(reasons, json_type_array))
		return NULL;
	n = json_object_array_length(reasons);
	if (json_object_object_get_ex(o, "denials", &denials) &&
	    json_object_is_type(denials, json_type_array))
		n_denials = json_object_array_length(denials);
	v = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; v && i < n; i++) {
		json_object *d = i < n_denials ? json_object_array_get_idx(denials, i) : NULL;

		v[i] = (d && json_object_is_type(d, json_type_object) ? get_str(d, "key") : NULL)
			       ?: "";
	}
	return v;
}

/* Did string_array() and reason_keys() give o's reasons, and their keys, exactly when it has them?
 */
static bool reasons_complete(json_object *o, const char *const *reasons, const char *const *keys)
{
	json_object *a;
	bool has = json_object_object_get_ex(o, "reasons", &a) &&
		   json_object_is_type(a, json_type_array);

	return has ? reasons && keys : !reasons && !keys;
}

static int error_from_reply(json_object *reply, struct bpfbroker_error **err)
{
	json_object *e;
	struct error_priv *p;
	int code;

	if (!json_object_object_get_ex(reply, "error", &e))
		return 0;
	code = (int)get_int(e, "errno", EIO);
	if (code <= 0 || code > 4095)
		code = EIO;
	if (!err) {
		json_object_put(reply);
		return -code;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		json_object_put(reply);
		return -ENOMEM;
	}
	p->reply = reply;
	p->pub.code = get_str(e, "code") ?: "unknown";
	p->pub.err = code;
	p->pub.message = get_str(e, "message") ?: "the broker reported an error";
	p->pub.verifier_log = get_str(e, "verifier_log");
	p->pub.libbpf_log = get_str(e, "libbpf_log");
	p->reasons = string_array(e, "reasons");
	p->pub.reasons = p->reasons;
	p->reason_keys = reason_keys(e);
	p->pub.reason_keys = p->reason_keys;
	/* Out of memory: no error rather than one without the reasons or their keys. */
	if (!reasons_complete(e, p->reasons, p->reason_keys)) {
		bpfbroker_error_free(&p->pub);
		return -ENOMEM;
	}
	*err = &p->pub;
	return -code;
}

void bpfbroker_error_free(struct bpfbroker_error *e)
{
	struct error_priv *p = (struct error_priv *)e;

	if (!p)
		return;
	json_object_put(p->reply);
	free(p->reasons);
	free(p->reason_keys);
	free(p);
}

static int fd_index(struct result_priv *r, int64_t idx)
{
	if (idx < 0 || (size_t)idx >= r->n_fds)
		return -1;
	return r->fds[idx];
}

static int fd_at(struct result_priv *r, json_object *o)
{
	return fd_index(r, get_int(o, "fd", -1));
}

static void *remember(struct result_priv *r, void *p)
{
	void **grown;

	if (!p)
		return NULL;
	grown = realloc(r->allocs, (r->n_allocs + 1) * sizeof(void *));
	if (!grown) {
		free(p);
		return NULL;
	}
	r->allocs = grown;
	r->allocs[r->n_allocs++] = p;
	return p;
}

enum bpfbroker_access bpfbroker_access_from_string(const char *s)
{
	return !s			   ? BPFBROKER_ACCESS_NONE
	       : strcmp(s, "rw") == 0	   ? BPFBROKER_ACCESS_RW
	       : strcmp(s, "ro") == 0	   ? BPFBROKER_ACCESS_RO
	       : strcmp(s, "wo") == 0	   ? BPFBROKER_ACCESS_WO
	       : strcmp(s, "consume") == 0 ? BPFBROKER_ACCESS_CONSUME
					   : BPFBROKER_ACCESS_NONE;
}

static int result_build(struct proto_msg *m, struct bpfbroker_result **ret)
{
	struct result_priv *r = calloc(1, sizeof(*r));
	json_object *result, *progs, *maps;
	size_t np = 0, nm = 0;

	if (!r)
		return -ENOMEM;
	r->pub.btf_fd = -1;
	r->reply = TAKE_PTR(m->json);
	r->fds = TAKE_PTR(m->fds);
	r->n_fds = m->n_fds;
	m->n_fds = 0;
	if (!json_object_object_get_ex(r->reply, "result", &result)) {
		bpfbroker_result_free(&r->pub);
		return -EPROTO;
	}
	if (json_object_object_get_ex(result, "programs", &progs))
		np = json_object_array_length(progs);
	if (json_object_object_get_ex(result, "maps", &maps))
		nm = json_object_array_length(maps);
	r->programs = calloc(np + 1, sizeof(*r->programs));
	r->maps = calloc(nm + 1, sizeof(*r->maps));
	if (!r->programs || !r->maps) {
		bpfbroker_result_free(&r->pub);
		return -ENOMEM;
	}
	r->pub.allowed = get_bool(result, "allowed");
	r->pub.name = get_str(result, "name");
	r->pub.btf_fd = fd_index(r, get_int(result, "btf_fd", -1));
	r->pub.reasons = remember(r, string_array(result, "reasons"));
	r->pub.reason_keys = remember(r, reason_keys(result));
	if (!reasons_complete(result, r->pub.reasons, r->pub.reason_keys)) {
		bpfbroker_result_free(&r->pub);
		return -ENOMEM;
	}
	r->pub.json = json_object_to_json_string_ext(r->reply, JSON_C_TO_STRING_PLAIN);
	for (size_t i = 0; i < np; i++) {
		json_object *o = json_object_array_get_idx(progs, i);
		struct bpfbroker_program *p = &r->programs[i];

		p->name = get_str(o, "name") ?: "";
		p->type = get_str(o, "type") ?: "";
		p->attach_type = get_str(o, "attach_type");
		p->loaded = get_int(o, "id", 0) > 0;
		p->id = (uint32_t)get_int(o, "id", 0);
		p->tag = get_str(o, "tag");
		p->insns = (uint32_t)get_int(o, "insns", 0);
		p->fd = fd_at(r, o);
		p->verdict = get_str(o, "verdict") ?: "";
		p->helpers = remember(r, string_array(o, "helpers"));
		p->kfuncs = remember(r, string_array(o, "kfuncs"));
	}
	r->pub.n_programs = np;
	for (size_t i = 0; i < nm; i++) {
		json_object *o = json_object_array_get_idx(maps, i);
		struct bpfbroker_map *p = &r->maps[i];
		const char *access = get_str(o, "access");

		p->name = get_str(o, "name") ?: "";
		p->type = get_str(o, "type") ?: "";
		p->id = (uint32_t)get_int(o, "id", 0);
		p->key_size = (uint32_t)get_int(o, "key_size", 0);
		p->value_size = (uint32_t)get_int(o, "value_size", 0);
		p->max_entries = (uint32_t)get_int(o, "max_entries", 0);
		p->pinned = get_bool(o, "pinned");
		p->access = bpfbroker_access_from_string(access);
		p->map_flags = (uint32_t)get_int(o, "map_flags", 0);
		p->frozen = get_bool(o, "frozen");
		p->fd = fd_at(r, o);
		/* Loads and older brokers: the fd carries the access. */
		p->fd_access = p->fd < 0 ? BPFBROKER_ACCESS_NONE
			       : !get_str(o, "fd_access")
				       ? p->access
				       : bpfbroker_access_from_string(get_str(o, "fd_access"));
		p->verdict = get_str(o, "verdict") ?: "";
		p->btf_key_type_id = (uint32_t)get_int(o, "btf_key_type_id", 0);
		p->btf_value_type_id = (uint32_t)get_int(o, "btf_value_type_id", 0);
	}
	r->pub.n_maps = nm;
	*ret = &r->pub;
	return 0;
}

void bpfbroker_result_free(struct bpfbroker_result *pub)
{
	struct result_priv *r = (struct result_priv *)pub;

	if (!r)
		return;
	if (r->fds)
		close_many(r->fds, r->n_fds);
	free(r->fds);
	for (size_t i = 0; i < r->n_allocs; i++)
		free(r->allocs[i]);
	free(r->allocs);
	free(r->programs);
	free(r->maps);
	json_object_put(r->reply);
	free(r);
}

static int result_take(struct result_priv *r, int *slot)
{
	int fd = *slot;

	if (fd < 0)
		return -1;
	for (size_t i = 0; i < r->n_fds; i++)
		if (r->fds[i] == fd)
			r->fds[i] = -EBADF;
	*slot = -1;
	return fd;
}

int bpfbroker_result_take_map_fd(struct bpfbroker_result *pub, const char *name)
{
	struct result_priv *r = (struct result_priv *)pub;

	for (size_t i = 0; i < pub->n_maps; i++)
		if (strcmp(r->maps[i].name, name) == 0)
			return result_take(r, &r->maps[i].fd);
	return -1;
}

int bpfbroker_result_take_prog_fd(struct bpfbroker_result *pub, const char *name)
{
	struct result_priv *r = (struct result_priv *)pub;

	for (size_t i = 0; i < pub->n_programs; i++)
		if (strcmp(r->programs[i].name, name) == 0)
			return result_take(r, &r->programs[i].fd);
	return -1;
}

const struct bpfbroker_map *bpfbroker_result_map_at(const struct bpfbroker_result *pub, size_t i)
{
	return i < pub->n_maps ? &((const struct result_priv *)pub)->maps[i] : NULL;
}

const struct bpfbroker_program *bpfbroker_result_program_at(const struct bpfbroker_result *pub,
							    size_t i)
{
	return i < pub->n_programs ? &((const struct result_priv *)pub)->programs[i] : NULL;
}

const struct bpfbroker_map *bpfbroker_result_map(const struct bpfbroker_result *r, const char *name)
{
	const struct bpfbroker_map *m;

	for (size_t i = 0; (m = bpfbroker_result_map_at(r, i)); i++)
		if (strcmp(m->name, name) == 0)
			return m;
	return NULL;
}

const struct bpfbroker_program *bpfbroker_result_program(const struct bpfbroker_result *r,
							 const char *name)
{
	const struct bpfbroker_program *p;

	for (size_t i = 0; (p = bpfbroker_result_program_at(r, i)); i++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

/* The reply's "programs" entry of the program called name, or NULL. */
static json_object *result_program_json(const struct bpfbroker_result *pub, const char *name)
{
	const struct result_priv *r = (const struct result_priv *)pub;
	json_object *result = NULL, *progs = NULL;

	if (!json_object_object_get_ex(r->reply, "result", &result) ||
	    !json_object_object_get_ex(result, "programs", &progs))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(progs); i++) {
		json_object *o = json_object_array_get_idx(progs, i);
		const char *n = get_str(o, "name");

		if (n && strcmp(n, name) == 0)
			return o;
	}
	return NULL;
}

/* "load": whether the broker loads it, libbpf's autoload (true when absent). */
static bool program_json_load(json_object *o)
{
	return !json_object_object_get_ex(o, "load", NULL) || get_bool(o, "load");
}

bool bpfbroker_result_program_selected(const struct bpfbroker_result *pub, const char *name)
{
	json_object *o = result_program_json(pub, name);

	/*
	 * "selected": false only for programs the request's list left out. Not
	 * "load", which is false for libbpf's opt-in SEC("?...") programs too;
	 * brokers before "selected" sent only that.
	 */
	if (!o)
		return false;
	return json_object_object_get_ex(o, "selected", NULL) ? get_bool(o, "selected")
							      : program_json_load(o);
}

bool bpfbroker_result_program_autoload(const struct bpfbroker_result *pub, const char *name)
{
	json_object *o = result_program_json(pub, name);

	return o && program_json_load(o);
}

const char *bpfbroker_access_to_string(enum bpfbroker_access a)
{
	switch (a) {
	case BPFBROKER_ACCESS_RO:
		return "ro";
	case BPFBROKER_ACCESS_WO:
		return "wo";
	case BPFBROKER_ACCESS_RW:
		return "rw";
	case BPFBROKER_ACCESS_CONSUME:
		return "consume";
	default:
		return "none";
	}
}

/*
 * The elements of load_opts' arrays are frozen (ABI.md): the library indexes a
 * caller's array with its own sizeof, so a field added to one would misread
 * the arrays of every program built before. Their sizes in LIBBPFBROKER_1.0,
 * on LP64; a new per-element attribute is a new array in the opts.
 */
#if __SIZEOF_POINTER__ == 8 && __SIZEOF_SIZE_T__ == 8
#define FROZEN(type, size)                                                                         \
	_Static_assert(sizeof(struct type) == (size), #type " is frozen (ABI.md)")
FROZEN(bpfbroker_global, 24);
FROZEN(bpfbroker_map_size, 16);
FROZEN(bpfbroker_program_select, 24);
FROZEN(bpfbroker_map_def, 16);
FROZEN(bpfbroker_inner_map, 32);
FROZEN(bpfbroker_attach_target, 16);
FROZEN(bpfbroker_share, 32);
#endif

/* What an opts struct without sz (0) has: the fields before name. */
#define LOAD_OPTS_SIZE_V0 (offsetof(struct bpfbroker_load_opts, n_programs) + sizeof(size_t))

/*
 * Copy a caller's opts struct of size sz into one of ours (size ours), so that
 * fields it doesn't have read as zero. sz 0 means min_sz (callers from before sz
 * was checked); bytes we don't know must be zero.
 */
static int opts_copy(void *ours, size_t ours_size, const void *theirs, size_t sz, size_t min_sz)
{
	if (sz == 0)
		sz = min_sz;
	if (sz < min_sz)
		return -EINVAL;
	for (size_t i = ours_size; i < sz; i++)
		if (((const uint8_t *)theirs)[i])
			return -EINVAL;
	memset(ours, 0, ours_size);
	memcpy(ours, theirs, sz < ours_size ? sz : ours_size);
	return 0;
}

static char *access_dup(enum bpfbroker_access a)
{
	return a == BPFBROKER_ACCESS_NONE || (unsigned)a > BPFBROKER_ACCESS_CONSUME
		       ? NULL
		       : strdup(bpfbroker_access_to_string(a));
}

static int shares_to_request(const struct bpfbroker_load_opts *opts, struct proto_load_request *req)
{
	if (!opts->n_shares)
		return 0;
	if (!opts->shares || !opts->name)
		return -EINVAL;
	req->shares = calloc(opts->n_shares, sizeof(*req->shares));
	if (!req->shares)
		return -ENOMEM;
	for (size_t i = 0; i < opts->n_shares; i++) {
		const struct bpfbroker_share *s = &opts->shares[i];
		struct proto_share *out = &req->shares[i];

		req->n_shares = i + 1;
		if (!s->map || !s->user == !s->group || s->access == BPFBROKER_ACCESS_NONE ||
		    (unsigned)s->access > BPFBROKER_ACCESS_CONSUME)
			return -EINVAL;
		out->map = strdup(s->map);
		out->access = access_dup(s->access);
		if (!out->map || !out->access)
			return -ENOMEM;
		if (s->user && !(out->user = strdup(s->user)))
			return -ENOMEM;
		if (s->group && !(out->group = strdup(s->group)))
			return -ENOMEM;
	}
	return 0;
}

/* A size of bpfbroker_map_def: 0 keeps it, BPFBROKER_SIZE_ZERO sets 0. */
static void map_def_size(uint32_t size, bool *ret_set, uint32_t *ret)
{
	*ret_set = size != 0;
	*ret = size == BPFBROKER_SIZE_ZERO ? 0 : size;
}

/* map_defs, inner_maps, attach_targets: the setup between open and load. */
static int setup_to_request(const struct bpfbroker_load_opts *opts, struct proto_load_request *req)
{
	if (opts->n_map_defs) {
		req->map_defs = calloc(opts->n_map_defs, sizeof(*req->map_defs));
		if (!req->map_defs)
			return -ENOMEM;
		for (size_t i = 0; i < opts->n_map_defs; i++) {
			const struct bpfbroker_map_def *d = &opts->map_defs[i];
			struct proto_map_def *out = &req->map_defs[i];

			req->n_map_defs = i + 1;
			if (!d->name)
				return -EINVAL;
			if (!(out->name = strdup(d->name)))
				return -ENOMEM;
			map_def_size(d->key_size, &out->set_key_size, &out->key_size);
			map_def_size(d->value_size, &out->set_value_size, &out->value_size);
		}
	}
	if (opts->n_inner_maps) {
		req->inner_maps = calloc(opts->n_inner_maps, sizeof(*req->inner_maps));
		if (!req->inner_maps)
			return -ENOMEM;
		for (size_t i = 0; i < opts->n_inner_maps; i++) {
			const struct bpfbroker_inner_map *im = &opts->inner_maps[i];
			struct proto_inner_map *out = &req->inner_maps[i];

			req->n_inner_maps = i + 1;
			if (!im->outer || !im->type)
				return -EINVAL;
			out->outer = strdup(im->outer);
			out->type = strdup(im->type);
			if (!out->outer || !out->type)
				return -ENOMEM;
			out->key_size = im->key_size;
			out->value_size = im->value_size;
			out->max_entries = im->max_entries;
			out->map_flags = im->map_flags;
		}
	}
	if (opts->n_attach_targets) {
		req->attach_targets = calloc(opts->n_attach_targets, sizeof(*req->attach_targets));
		if (!req->attach_targets)
			return -ENOMEM;
		for (size_t i = 0; i < opts->n_attach_targets; i++) {
			struct proto_attach_target *out = &req->attach_targets[i];

			req->n_attach_targets = i + 1;
			if (!opts->attach_targets[i].program || !opts->attach_targets[i].target)
				return -EINVAL;
			out->program = strdup(opts->attach_targets[i].program);
			out->target = strdup(opts->attach_targets[i].target);
			if (!out->program || !out->target)
				return -ENOMEM;
		}
	}
	return 0;
}

/* Translate the public options into the wire request (copies; the caller keeps its own). */
static int opts_to_request(const struct bpfbroker_load_opts *theirs, struct proto_load_request *req)
{
	struct bpfbroker_load_opts copy, *opts = &copy;
	int k;

	*req = (struct proto_load_request){.object_fd = 0};
	if (!theirs)
		return 0;
	k = opts_copy(&copy, sizeof(copy), theirs, theirs->sz, LOAD_OPTS_SIZE_V0);
	if (k < 0)
		return k;
	req->check_only = opts->check_only;
	req->libbpf_log = opts->libbpf_log;
	if (opts->name && !(req->name = strdup(opts->name)))
		return -ENOMEM;
	k = shares_to_request(opts, req);
	if (k < 0)
		return k;
	if (opts->object_name && !(req->object_name = strdup(opts->object_name)))
		return -ENOMEM;
	if (opts->n_globals) {
		req->globals = calloc(opts->n_globals, sizeof(*req->globals));
		if (!req->globals)
			return -ENOMEM;
		for (size_t i = 0; i < opts->n_globals; i++) {
			req->globals[i].name = strdup(opts->globals[i].name);
			req->globals[i].value = malloc(opts->globals[i].size + 1);
			req->n_globals = i + 1;
			if (!req->globals[i].name || !req->globals[i].value)
				return -ENOMEM;
			memcpy(req->globals[i].value, opts->globals[i].value,
			       opts->globals[i].size);
			req->globals[i].size = opts->globals[i].size;
		}
	}
	if (opts->n_map_sizes) {
		req->map_sizes = calloc(opts->n_map_sizes, sizeof(*req->map_sizes));
		if (!req->map_sizes)
			return -ENOMEM;
		for (size_t i = 0; i < opts->n_map_sizes; i++) {
			req->map_sizes[i].name = strdup(opts->map_sizes[i].name);
			req->map_sizes[i].max_entries = opts->map_sizes[i].max_entries;
			req->n_map_sizes = i + 1;
			if (!req->map_sizes[i].name)
				return -ENOMEM;
		}
	}
	if (opts->n_freeze) {
		req->freeze = calloc(opts->n_freeze, sizeof(*req->freeze));
		if (!req->freeze)
			return -ENOMEM;
		for (size_t i = 0; i < opts->n_freeze; i++) {
			req->freeze[i] = strdup(opts->freeze[i]);
			req->n_freeze = i + 1;
			if (!req->freeze[i])
				return -ENOMEM;
		}
	}
	if (opts->n_programs) {
		req->programs = calloc(opts->n_programs, sizeof(*req->programs));
		if (!req->programs)
			return -ENOMEM;
		for (size_t i = 0; i < opts->n_programs; i++) {
			const struct bpfbroker_program_select *s = &opts->programs[i];

			req->n_programs = i + 1;
			req->programs[i].name = strdup(s->name);
			if (!req->programs[i].name)
				return -ENOMEM;
			if (s->type && !(req->programs[i].type = strdup(s->type)))
				return -ENOMEM;
			if (s->attach_type &&
			    !(req->programs[i].attach_type = strdup(s->attach_type)))
				return -ENOMEM;
		}
	}
	return setup_to_request(opts, req);
}

/*
 * Send method with its params (the method table's typed struct, borrowed;
 * NULL for a method that takes none) and fds, and wait for the reply. The
 * table says what goes each way: the params are encoded by its encoder, a
 * request with fewer than fds_min or more than fds_max fds is refused here
 * (-EINVAL) rather than by the broker, and a reply with more fds than the
 * method hands out (reply_fds) is refused (-ETOOMANYREFS, its fds closed),
 * so no broker fills the caller's fd table. On success *ret holds the reply
 * and *ret_result points to its "result" object.
 */
int bpfbroker_request(struct bpfbroker *b, enum proto_method_id method, const void *params,
		      const int *fds, size_t n_fds, struct proto_msg *ret, json_object **ret_result,
		      struct bpfbroker_error **err)
{
	const struct proto_method *m = &proto_methods[method];
	struct proto_msg reply = {};
	json_object *p = NULL, *msg, *result;
	int64_t id;
	int k;

	if (n_fds < m->fds_min || n_fds > m->fds_max)
		return -EINVAL;
	/* A method that takes no params (policy) is sent without any. */
	if (m->params_size && !(p = proto_method_encode(m, params)))
		return -ENOMEM;
	id = b->next_id++;
	msg = proto_request_new(id, m->name, p);
	if (!msg)
		return -ENOMEM;
	k = call(b, msg, id, fds, n_fds, m->reply_fds, &reply);
	json_object_put(msg);
	if (k < 0)
		return k;
	k = error_from_reply(reply.json, err);
	if (k < 0) {
		reply.json = NULL; /* taken by the error */
		proto_msg_done(&reply);
		return k;
	}
	if (!json_object_object_get_ex(reply.json, "result", &result) ||
	    !json_object_is_type(result, json_type_object)) {
		proto_msg_done(&reply);
		return -EPROTO;
	}
	*ret = reply;
	*ret_result = result;
	return 0;
}

/* bpfbroker_request(), for a method whose answer is only that it succeeded. */
static int request_done(struct bpfbroker *b, enum proto_method_id method, const void *params,
			const int *fds, size_t n_fds, struct bpfbroker_error **err)
{
	struct proto_msg m = {};
	json_object *result;
	int k;

	k = bpfbroker_request(b, method, params, fds, n_fds, &m, &result, err);
	if (k < 0)
		return k;
	proto_msg_done(&m);
	return 0;
}

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

/* bpfbroker_request(), for methods whose answer is the result as JSON text. */
static int request_json(struct bpfbroker *b, enum proto_method_id method, const void *params,
			char **ret_json, struct bpfbroker_error **err)
{
	struct proto_msg m = {};
	json_object *result;
	char *text;
	int k;

	k = bpfbroker_request(b, method, params, NULL, 0, &m, &result, err);
	if (k < 0)
		return k;
	text = strdup(json_object_to_json_string_ext(result, JSON_C_TO_STRING_PRETTY |
								     JSON_C_TO_STRING_SPACED));
	proto_msg_done(&m);
	if (!text)
		return -ENOMEM;
	*ret_json = text;
	return 0;
}

int bpfbroker_policy(struct bpfbroker *b, char **ret_json, struct bpfbroker_error **err)
{
	return request_json(b, PROTO_METHOD_POLICY, NULL, ret_json, err);
}

/* Objects of every page so far, as the broker wrote them, comma separated. */
struct list_text {
	char *buf;
	size_t len, size;
};

static int list_text_add(struct list_text *t, const char *s, size_t len)
{
	if (t->size - t->len <= len) {
		size_t size = t->size * 2 > t->len + len + 64 ? t->size * 2 : t->len + len + 64;
		char *grown = realloc(t->buf, size);

		if (!grown)
			return -ENOMEM;
		t->buf = grown;
		t->size = size;
	}
	memcpy(t->buf + t->len, s, len);
	t->len += len;
	t->buf[t->len] = '\0';
	return 0;
}

/* A reply's "id", written as the broker writes it (digits), is id. */
static bool span_is_id(struct json_span v, int64_t id)
{
	char want[24];
	int n = snprintf(want, sizeof(want), "%lld", (long long)id);

	return n > 0 && v.len == (size_t)n && memcmp(v.s, want, v.len) == 0;
}

/*
 * A page's reply, scanned rather than parsed into a tree (for 1,000 objects
 * json-c's tree cost the client more than the broker's whole answer): the
 * objects are appended to t as the broker wrote them, *ret_next is the next
 * page's cursor or NULL. Returns 1 if the reply was a result of this shape,
 * 0 if it is something else (an error) for the common path to read, or < 0
 * if it is not JSON.
 */
static int list_page_scan(const struct proto_raw *raw, int64_t id, struct list_text *t,
			  char **ret_next)
{
	struct json_span top, key, v, result = {}, objects = {}, next = {};
	struct json_iter it;
	bool id_ok = false, error = false;
	int k;

	k = json_scan_object_text(raw->buf, raw->len, &top);
	if (k < 0)
		return -EPROTO;
	json_iter_init(&it, top, 1);
	while ((k = json_iter_next(&it, &key, &v)) > 0) {
		if (json_key_is(key, "id"))
			id_ok = span_is_id(v, id);
		else if (json_key_is(key, "error"))
			error = true;
		else if (json_key_is(key, "result"))
			result = v;
	}
	if (k < 0 || error || !id_ok || !json_span_is_object(result))
		return 0;
	json_iter_init(&it, result, 2);
	while ((k = json_iter_next(&it, &key, &v)) > 0) {
		if (json_key_is(key, "objects"))
			objects = v;
		else if (json_key_is(key, "next"))
			next = v;
	}
	/* "next" is UID/NAME: a string without escapes. */
	if (k < 0 || !json_span_is_array(objects) ||
	    (next.s && (!json_span_is_string(next) || memchr(next.s, '\\', next.len))))
		return -EPROTO;
	/* The array's elements, without its brackets and outer whitespace. */
	objects.s++;
	objects.len -= 2;
	while (objects.len && strchr(" \t\r\n", objects.s[0]))
		objects.s++, objects.len--;
	while (objects.len && strchr(" \t\r\n", objects.s[objects.len - 1]))
		objects.len--;
	/* After the head's "[" no comma; after an object one. */
	if (objects.len && ((t->buf[t->len - 1] != '[' && list_text_add(t, ",", 1) < 0) ||
			    list_text_add(t, objects.s, objects.len) < 0))
		return -ENOMEM;
	*ret_next = NULL;
	if (next.s && !(*ret_next = strndup(next.s + 1, next.len - 2)))
		return -ENOMEM;
	return 1;
}

/* One page: 0 and its objects added to t, *ret_next its "next" (NULL: the last). */
static int list_page(struct bpfbroker *b, const struct bpfbroker_list_opts *opts,
		     const char *cursor, struct list_text *t, char **ret_next,
		     struct bpfbroker_error **err)
{
	/* Borrowed strings: the encoder copies them. */
	struct proto_list_params p = {.cursor = (char *)cursor,
				      .all = opts->all,
				      .shared = opts->shared,
				      .user = (char *)opts->user,
				      .limit = PROTO_MAX_LIST_LIMIT};
	const struct proto_method *lm = &proto_methods[PROTO_METHOD_LIST];
	json_object *params = proto_method_encode(lm, &p), *req;
	int64_t id = b->next_id++;
	struct proto_raw raw = {};
	struct proto_msg m = {};
	int k;

	req = params ? proto_request_new(id, lm->name, params) : NULL;
	if (!req)
		return -ENOMEM;
	k = call_raw(b, req, NULL, 0, lm->reply_fds, &raw);
	json_object_put(req);
	if (k < 0)
		return k;
	k = list_page_scan(&raw, id, t, ret_next);
	if (k != 0) {
		proto_raw_done(&raw);
		return k < 0 ? k : 0;
	}
	/* Not a result: an error (or not an answer to this request) for the common path. */
	k = reply_parse(&raw, id, &m);
	if (k < 0)
		return k;
	k = error_from_reply(m.json, err);
	if (k < 0)
		m.json = NULL; /* taken by the error */
	proto_msg_done(&m);
	return k < 0 ? k : -EPROTO;
}

/*
 * Every page: the broker answers a list in pages of at most about 1 MiB,
 * each saying with "next" where the following one starts; the caller gets
 * them as one result, the objects as the broker wrote them.
 */
int bpfbroker_list(struct bpfbroker *b, const struct bpfbroker_list_opts *theirs, char **ret_json,
		   struct bpfbroker_error **err)
{
	static const char head[] = "{\"objects\":[", tail[] = "]}";
	struct bpfbroker_list_opts opts = {};
	_cleanup_free_ char *cursor = NULL;
	struct list_text t = {};
	int k = 0;

	if (theirs) {
		k = opts_copy(&opts, sizeof(opts), theirs, theirs->sz, sizeof(size_t));
		if (k < 0)
			return k;
	}
	k = list_text_add(&t, head, strlen(head));
	while (k >= 0) {
		char *next = NULL;

		k = list_page(b, &opts, cursor, &t, &next, err);
		/* A next page must start further on, or this would never end. */
		if (k >= 0 && next && cursor && strcmp(next, cursor) == 0)
			k = -EPROTO;
		free(cursor);
		cursor = next;
		if (!cursor)
			break;
	}
	if (k >= 0)
		k = list_text_add(&t, tail, strlen(tail));
	if (k < 0) {
		free(t.buf);
		return k;
	}
	*ret_json = t.buf;
	return 0;
}

/* {"object": REF}: show, unload, fds. Borrowed: the encoder copies it. */
#define OBJECT_PARAMS(ref) (&(struct proto_object_params){.object = (char *)(ref)})

int bpfbroker_show(struct bpfbroker *b, const char *object, char **ret_json,
		   struct bpfbroker_error **err)
{
	if (!object)
		return -EINVAL;
	return request_json(b, PROTO_METHOD_SHOW, OBJECT_PARAMS(object), ret_json, err);
}

int bpfbroker_unload(struct bpfbroker *b, const char *object, struct bpfbroker_error **err)
{
	if (!object)
		return -EINVAL;
	return request_done(b, PROTO_METHOD_UNLOAD, OBJECT_PARAMS(object), NULL, 0, err);
}

int bpfbroker_map_insert(struct bpfbroker *b, const char *object, const char *map, const void *key,
			 size_t key_size, int map_fd, struct bpfbroker_error **err)
{
	struct proto_map_insert_params p = {.object = (char *)object,
					    .map = (char *)map,
					    .key = {.data = (uint8_t *)key, .size = key_size},
					    .fd = 0};

	if (!object || !map || !key || key_size == 0 || map_fd < 0)
		return -EINVAL;
	return request_done(b, PROTO_METHOD_MAP_INSERT, &p, &map_fd, 1, err);
}

int bpfbroker_fds(struct bpfbroker *b, const char *object, struct bpfbroker_result **ret,
		  struct bpfbroker_error **err)
{
	struct proto_msg m = {};
	json_object *result;
	int k;

	if (!object)
		return -EINVAL;
	k = bpfbroker_request(b, PROTO_METHOD_FDS, OBJECT_PARAMS(object), NULL, 0, &m, &result,
			      err);
	if (k < 0)
		return k;
	k = result_build(&m, ret);
	proto_msg_done(&m);
	return k;
}

/*
 * The target, borrowing o's strings; its fds are sent in this order: cgroup:
 * the directory; uprobe: binary, pidfd.
 */
static struct proto_link_target attach_target(const struct bpfbroker_attach_opts *o, bool cgroup,
					      bool uprobe)
{
	struct proto_link_target t = {.type = (char *)o->target_type,
				      .fd = cgroup || uprobe ? 0 : -1,
				      .attach_type = (char *)o->attach_type,
				      .name = (char *)o->name,
				      .pidfd = -1,
				      .offset = -1};

	if (uprobe) {
		t.pidfd = 1;
		/* A probe at a file offset (no name) sends it even when it is 0. */
		if (!o->name || o->uprobe_offset)
			t.offset = (int64_t)o->uprobe_offset;
		t.retprobe = o->retprobe;
		t.semaphore = (char *)o->semaphore;
		t.semaphore_offset = (int64_t)o->semaphore_offset;
	}
	return t;
}

int bpfbroker_attach(struct bpfbroker *b, const struct bpfbroker_attach_opts *theirs,
		     uint32_t *ret_link_id, int *ret_link_fd, struct bpfbroker_error **err)
{
	struct bpfbroker_attach_opts o;
	struct proto_attach_params p;
	struct proto_msg m = {};
	json_object *result, *link;
	bool cgroup, uprobe;
	int fds[2];
	size_t n_fds = 0;
	int64_t id, idx;
	int k, fd = -1;

	if (!theirs)
		return -EINVAL;
	k = opts_copy(&o, sizeof(o), theirs, theirs->sz, sizeof(size_t));
	if (k < 0)
		return k;
	if (!o.object || !o.program || !o.target_type)
		return -EINVAL;
	cgroup = strcmp(o.target_type, "cgroup") == 0;
	uprobe = strcmp(o.target_type, "uprobe") == 0;
	if (cgroup) {
		if (o.cgroup_fd < 0)
			return -EBADF;
		fds[n_fds++] = o.cgroup_fd;
	} else if (uprobe) {
		if (o.binary_fd < 0 || o.pidfd < 0 || o.uprobe_offset > INT64_MAX ||
		    o.semaphore_offset > INT64_MAX)
			return o.binary_fd < 0 || o.pidfd < 0 ? -EBADF : -EINVAL;
		fds[n_fds++] = o.binary_fd;
		fds[n_fds++] = o.pidfd;
	}
	p = (struct proto_attach_params){.program = (char *)o.program,
					 .pin = o.pin,
					 .target = attach_target(&o, cgroup, uprobe),
					 .object = (char *)o.object};
	k = bpfbroker_request(b, PROTO_METHOD_ATTACH, &p, n_fds ? fds : NULL, n_fds, &m, &result,
			      err);
	if (k < 0)
		return k;
	if (!json_object_object_get_ex(result, "link", &link) ||
	    (id = get_int(link, "id", -1)) < 0 || id > UINT32_MAX) {
		proto_msg_done(&m);
		return -EPROTO;
	}
	/* The link fd's index: "fd" in "link", or next to it. */
	idx = get_int(link, "fd", get_int(result, "fd", -1));
	if (!get_bool(link, "pinned")) {
		if (idx < 0 || (size_t)idx >= m.n_fds) {
			proto_msg_done(&m);
			return -EPROTO;
		}
		if (ret_link_fd)
			fd = proto_msg_take_fd(&m, (size_t)idx);
	}
	proto_msg_done(&m);
	if (ret_link_id)
		*ret_link_id = (uint32_t)id;
	if (ret_link_fd)
		*ret_link_fd = fd;
	return 0;
}

int bpfbroker_detach(struct bpfbroker *b, const char *object, const char *program, uint32_t link_id,
		     uint32_t **ret_ids, size_t *ret_n, struct bpfbroker_error **err)
{
	struct proto_detach_params p = {
		.object = (char *)object, .program = (char *)program, .link = link_id};
	struct proto_msg m = {};
	json_object *result, *a;
	uint32_t *ids;
	size_t n;
	int k;

	if (!object || !program)
		return -EINVAL;
	k = bpfbroker_request(b, PROTO_METHOD_DETACH, &p, NULL, 0, &m, &result, err);
	if (k < 0)
		return k;
	if (!json_object_object_get_ex(result, "detached", &a) ||
	    !json_object_is_type(a, json_type_array)) {
		proto_msg_done(&m);
		return -EPROTO;
	}
	n = json_object_array_length(a);
	ids = calloc(n + 1, sizeof(*ids));
	if (!ids) {
		proto_msg_done(&m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(a, i);
		int64_t x = json_object_get_int64(v);

		if (!json_object_is_type(v, json_type_int) || x <= 0 || x > UINT32_MAX) {
			free(ids);
			proto_msg_done(&m);
			return -EPROTO;
		}
		ids[i] = (uint32_t)x;
	}
	proto_msg_done(&m);
	if (ret_n)
		*ret_n = n;
	if (ret_ids)
		*ret_ids = ids;
	else
		free(ids);
	return 0;
}

int bpfbroker_test_run(struct bpfbroker *b, const struct bpfbroker_test_run_opts *theirs,
		       struct bpfbroker_test_run_result **ret, struct bpfbroker_error **err)
{
	struct bpfbroker_test_run_opts o;
	struct bpfbroker_test_run_result *r;
	struct proto_test_run_params p;
	struct proto_msg m = {};
	json_object *result;
	const char *hex;
	uint8_t *out = NULL;
	size_t out_size = 0;
	int k;

	if (!theirs)
		return -EINVAL;
	k = opts_copy(&o, sizeof(o), theirs, theirs->sz, sizeof(size_t));
	if (k < 0)
		return k;
	if (!o.object || !o.program || (o.data_in_size && !o.data_in) ||
	    (o.ctx_in_size && !o.ctx_in) || o.repeat > BPFBROKER_TEST_RUN_MAX_REPEAT)
		return -EINVAL;
	if (o.data_in_size > BPFBROKER_TEST_RUN_MAX_DATA ||
	    o.ctx_in_size > BPFBROKER_TEST_RUN_MAX_CTX)
		return -E2BIG;
	/* Borrowed; data_in is sent even when empty (as ""), ctx_in only when given. */
	p = (struct proto_test_run_params){
		.object = (char *)o.object,
		.program = (char *)o.program,
		.data_in = {.data = (uint8_t *)(o.data_in_size ? o.data_in : ""),
			    .size = o.data_in_size},
		.ctx_in = {.data = o.ctx_in_size ? (uint8_t *)o.ctx_in : NULL,
			   .size = o.ctx_in_size},
		.repeat = o.repeat};
	k = bpfbroker_request(b, PROTO_METHOD_TEST_RUN, &p, NULL, 0, &m, &result, err);
	if (k < 0)
		return k;
	hex = get_str(result, "data_out") ?: "";
	if (*hex && hex_decode(hex, strlen(hex), &out, &out_size) < 0) {
		proto_msg_done(&m);
		return -EPROTO;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		free(out);
		proto_msg_done(&m);
		return -ENOMEM;
	}
	r->retval = get_int(result, "retval", 0);
	r->duration_ns = (uint64_t)get_int(result, "duration_ns", 0);
	r->data_out = out;
	r->data_out_size = out_size;
	proto_msg_done(&m);
	*ret = r;
	return 0;
}

void bpfbroker_test_run_result_free(struct bpfbroker_test_run_result *r)
{
	if (!r)
		return;
	free(r->data_out);
	free(r);
}

/* Map access straight on the fd (map.c has maps by name, proxied where bpf() is refused). */
int bpfbroker_map_lookup(int map_fd, const void *key, void *value)
{
	return bpf_map_lookup_elem(map_fd, key, value) < 0 ? negative_errno() : 0;
}

int bpfbroker_map_update(int map_fd, const void *key, const void *value, uint64_t flags)
{
	return bpf_map_update_elem(map_fd, key, value, flags) < 0 ? negative_errno() : 0;
}

int bpfbroker_map_delete(int map_fd, const void *key)
{
	return bpf_map_delete_elem(map_fd, key) < 0 ? negative_errno() : 0;
}

int bpfbroker_map_next_key(int map_fd, const void *key, void *next_key)
{
	return bpf_map_get_next_key(map_fd, key, next_key) < 0 ? negative_errno() : 0;
}
