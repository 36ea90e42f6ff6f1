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

#include "common/macro.h"
#include "proto/proto.h"

struct bpfbroker {
	int fd;
	int64_t next_id;
};

struct result_priv {
	struct bpfbroker_result pub;
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
};

int bpfbroker_connect(const char *path, struct bpfbroker **ret)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_close_ int fd = -1;
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

/* Send one request and wait for its reply. */
static int call(struct bpfbroker *b, json_object *req, int64_t id, const int *fds, size_t n_fds,
		struct proto_msg *ret)
{
	struct proto_msg m = {};
	int64_t got = -1;
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
		k = proto_recv(b->fd, PROTO_MAX_REPLY_BYTES, PROTO_MAX_REPLY_FDS, &m, NULL);
		if (k == -EAGAIN)
			continue;
		if (k == 0)
			return -ECONNRESET;
		if (k < 0)
			return k;
		break;
	}
	if (proto_get_int(m.json, "id", true, 0, INT64_MAX, &got, NULL) < 0 || got != id) {
		proto_msg_done(&m);
		return -EPROTO;
	}
	*ret = m;
	return 0;
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
	k = call(b, req, id, fds, n_fds, &m);
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
	p->reasons = string_array(e, "reasons");
	p->pub.reasons = p->reasons;
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
	free(p);
}

static int fd_at(struct result_priv *r, json_object *o)
{
	int64_t idx = get_int(o, "fd", -1);

	if (idx < 0 || (size_t)idx >= r->n_fds)
		return -1;
	return r->fds[idx];
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

static int result_build(struct proto_msg *m, struct bpfbroker_result **ret)
{
	struct result_priv *r = calloc(1, sizeof(*r));
	json_object *result, *progs, *maps;
	size_t np = 0, nm = 0;

	if (!r)
		return -ENOMEM;
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
	r->pub.programs = calloc(np + 1, sizeof(*r->pub.programs));
	r->pub.maps = calloc(nm + 1, sizeof(*r->pub.maps));
	if (!r->pub.programs || !r->pub.maps) {
		bpfbroker_result_free(&r->pub);
		return -ENOMEM;
	}
	r->pub.allowed = get_bool(result, "allowed");
	r->pub.reasons = remember(r, string_array(result, "reasons"));
	r->pub.json = json_object_to_json_string_ext(r->reply, JSON_C_TO_STRING_PLAIN);
	for (size_t i = 0; i < np; i++) {
		json_object *o = json_object_array_get_idx(progs, i);
		struct bpfbroker_program *p = &r->pub.programs[i];

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
		struct bpfbroker_map *p = &r->pub.maps[i];
		const char *access = get_str(o, "access") ?: "none";

		p->name = get_str(o, "name") ?: "";
		p->type = get_str(o, "type") ?: "";
		p->id = (uint32_t)get_int(o, "id", 0);
		p->key_size = (uint32_t)get_int(o, "key_size", 0);
		p->value_size = (uint32_t)get_int(o, "value_size", 0);
		p->max_entries = (uint32_t)get_int(o, "max_entries", 0);
		p->pinned = get_bool(o, "pinned");
		p->access = strcmp(access, "rw") == 0	? BPFBROKER_ACCESS_RW
			    : strcmp(access, "ro") == 0 ? BPFBROKER_ACCESS_RO
			    : strcmp(access, "wo") == 0 ? BPFBROKER_ACCESS_WO
							: BPFBROKER_ACCESS_NONE;
		p->fd = fd_at(r, o);
		p->verdict = get_str(o, "verdict") ?: "";
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
	free(r->pub.programs);
	free(r->pub.maps);
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
			r->fds[i] = -1;
	*slot = -1;
	return fd;
}

int bpfbroker_result_take_map_fd(struct bpfbroker_result *pub, const char *name)
{
	for (size_t i = 0; i < pub->n_maps; i++)
		if (strcmp(pub->maps[i].name, name) == 0)
			return result_take((struct result_priv *)pub, &pub->maps[i].fd);
	return -1;
}

int bpfbroker_result_take_prog_fd(struct bpfbroker_result *pub, const char *name)
{
	for (size_t i = 0; i < pub->n_programs; i++)
		if (strcmp(pub->programs[i].name, name) == 0)
			return result_take((struct result_priv *)pub, &pub->programs[i].fd);
	return -1;
}

const struct bpfbroker_map *bpfbroker_result_map(const struct bpfbroker_result *r, const char *name)
{
	for (size_t i = 0; i < r->n_maps; i++)
		if (strcmp(r->maps[i].name, name) == 0)
			return &r->maps[i];
	return NULL;
}

const struct bpfbroker_program *bpfbroker_result_program(const struct bpfbroker_result *r,
							 const char *name)
{
	for (size_t i = 0; i < r->n_programs; i++)
		if (strcmp(r->programs[i].name, name) == 0)
			return &r->programs[i];
	return NULL;
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
	default:
		return "none";
	}
}

/* Translate the public options into the wire request (copies; the caller keeps its own). */
static int opts_to_request(const struct bpfbroker_load_opts *opts, struct proto_load_request *req)
{
	*req = (struct proto_load_request){.object_fd = 0};
	if (!opts)
		return 0;
	if (opts->sz < offsetof(struct bpfbroker_load_opts, n_programs) + sizeof(size_t) &&
	    opts->sz != 0)
		return -EINVAL;
	req->check_only = opts->check_only;
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
	return 0;
}

int bpfbroker_load_fd(struct bpfbroker *b, int fd, const struct bpfbroker_load_opts *opts,
		      struct bpfbroker_result **ret, struct bpfbroker_error **err)
{
	struct proto_load_request req;
	struct proto_msg m = {};
	json_object *params, *msg;
	int64_t id = b->next_id++;
	int k;

	k = opts_to_request(opts, &req);
	if (k < 0) {
		proto_load_request_done(&req);
		return k;
	}
	params = proto_load_request_encode(&req);
	proto_load_request_done(&req);
	if (!params)
		return -ENOMEM;
	msg = proto_request_new(id, "load", params);
	if (!msg)
		return -ENOMEM;
	k = call(b, msg, id, &fd, 1, &m);
	json_object_put(msg);
	if (k < 0)
		return k;
	k = error_from_reply(m.json, err);
	if (k < 0) {
		m.json = NULL; /* taken by the error */
		proto_msg_done(&m);
		return k;
	}
	k = result_build(&m, ret);
	proto_msg_done(&m);
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
		if (opts)
			memcpy(&named, opts,
			       opts->sz && opts->sz < sizeof(named) ? opts->sz : sizeof(named));
		named.sz = sizeof(named);
		named.object_name = n ? name : NULL;
		opts = &named;
	}
	return bpfbroker_load_fd(b, fd, opts, ret, err);
}

int bpfbroker_load_mem(struct bpfbroker *b, const void *buf, size_t size,
		       const struct bpfbroker_load_opts *opts, struct bpfbroker_result **ret,
		       struct bpfbroker_error **err)
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
	/* Sealed, so the broker reads exactly what we wrote. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		return negative_errno();
	return bpfbroker_load_fd(b, fd, opts, ret, err);
}

int bpfbroker_policy(struct bpfbroker *b, char **ret_json, struct bpfbroker_error **err)
{
	struct proto_msg m = {};
	int64_t id = b->next_id++;
	json_object *msg = proto_request_new(id, "policy", NULL), *result;
	char *text;
	int k;

	if (!msg)
		return -ENOMEM;
	k = call(b, msg, id, NULL, 0, &m);
	json_object_put(msg);
	if (k < 0)
		return k;
	k = error_from_reply(m.json, err);
	if (k < 0) {
		m.json = NULL;
		proto_msg_done(&m);
		return k;
	}
	if (!json_object_object_get_ex(m.json, "result", &result)) {
		proto_msg_done(&m);
		return -EPROTO;
	}
	text = strdup(json_object_to_json_string_ext(result, JSON_C_TO_STRING_PRETTY |
								     JSON_C_TO_STRING_SPACED));
	proto_msg_done(&m);
	if (!text)
		return -ENOMEM;
	*ret_json = text;
	return 0;
}
