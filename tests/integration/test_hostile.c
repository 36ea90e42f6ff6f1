/* SPDX-License-Identifier: MIT */
/*
 * Hostile input and faults against the real daemon: thousands of malformed
 * ELF objects over a few connections, workers killed mid-load, clients that
 * hang up mid-request, a long run of requests, and SIGTERM under load. After
 * each, the daemon must be alive, answer, and hold no more fds or memory than
 * before, and no kernel object may outlive its client.
 */
#include <bpf/bpf.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/btf.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "client/libbpfbroker.h"
#include "harness.h"

#define UID_NOBODY 65534
#define N_WORKERS 2 /* harness_start passes --workers 2 */
/*
 * Under AddressSanitizer every daemon process is several times slower: the
 * sanitizer pass runs a fifth of the random mutations and requests, the
 * plain pass all of them.
 */
#ifdef __SANITIZE_ADDRESS__
#define HOSTILE_SCALE 5
#define HOSTILE_SAMPLE 10 /* and sends one mutation in 10 of the rest */
#define HOSTILE_CHECK_RSS false /* ASan's quarantine holds freed memory: RSS means nothing */
#else
#define HOSTILE_SCALE 1
#define HOSTILE_SAMPLE 1
#define HOSTILE_CHECK_RSS true
#endif
#define JOB_TIMEOUT "--timeout=20" /* a worker that spins on an object is killed soon */
#define REQUEST_WATCHDOG 30 /* seconds a client waits for any one reply */
#define RSS_SLACK_KB 512
#define WARMUP 50

static const struct user nobody = {UID_NOBODY, UID_NOBODY};

/* ---- the daemon seen from outside ---- */

static size_t children_of(pid_t parent, pid_t *pids, size_t max)
{
	char path[96];
	size_t n = 0;
	long p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)parent, (int)parent);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (n < max && fscanf(f, "%ld", &p) == 1)
		pids[n++] = (pid_t)p;
	fclose(f);
	return n;
}

/*
 * The daemon's workers; returns how many, up to max in pids. They are the
 * children of its one child, the spawner that forks them.
 */
static size_t daemon_children(pid_t *pids, size_t max)
{
	pid_t spawner[4];
	size_t n = 0, n_spawners = children_of(H.daemon, spawner, 4);

	for (size_t i = 0; i < n_spawners && n < max; i++)
		n += children_of(spawner[i], pids + n, max - n);
	return n;
}

/* State letter and parent of a process, from /proc/PID/stat; 0 if it is gone. */
static char proc_state(pid_t pid, pid_t *ppid)
{
	char path[64], buf[512], *paren;
	char state = 0;
	int pp = 0;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	if (!paren || sscanf(paren + 1, " %c %d", &state, &pp) != 2)
		return 0;
	if (ppid)
		*ppid = pp;
	return state;
}

static bool daemon_alive(void)
{
	int status;

	return H.daemon > 0 && waitpid(H.daemon, &status, WNOHANG) == 0;
}

struct dstat {
	unsigned fds;
	long rss_kb;
};

/*
 * Wait until the daemon is at rest: the pool full of idle workers (N_WORKERS
 * children, and one more for each open connection whose worker waits for
 * its next request, none a zombie, all asleep) and its fd count unchanged
 * between two looks. Then take its fd count and RSS.
 */
static int quiet_stats(struct dstat *st)
{
	unsigned long long rss;
	unsigned last = ~0u;

	for (int i = 0; i < 1000; i++) {
		pid_t kids[16];
		size_t n = daemon_children(kids, 16);
		bool rest = n >= N_WORKERS;
		unsigned fds;

		if (!daemon_alive())
			return -ESRCH;
		for (size_t j = 0; j < n && rest; j++)
			rest = proc_state(kids[j], NULL) == 'S';
		fds = harness_count_fds(H.daemon);
		if (rest && fds == last) {
			st->fds = fds;
			rss = harness_status_field(H.daemon, "VmRSS", 10);
			st->rss_kb = rss == ~0ull ? -1 : (long)rss;
			return 0;
		}
		last = rest ? fds : ~0u;
		usleep(5000);
	}
	return -ETIMEDOUT;
}

static void dump_fds(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ls -l /proc/%d/fd >&2", (int)H.daemon);
	(void)system(cmd);
}

/* The same fds, and at most RSS_SLACK_KB more memory, as in before. */
static int check_flat(const char *what, const struct dstat *before)
{
	struct dstat after;

	CHECK(quiet_stats(&after) == 0, "%s: daemon does not come to rest", what);
	fprintf(stderr, "%s: daemon fds %u -> %u, VmRSS %ld -> %ld kB\n", what, before->fds,
		after.fds, before->rss_kb, after.rss_kb);
	if (after.fds != before->fds)
		dump_fds();
	CHECK(after.fds == before->fds, "%s: daemon fds %u, were %u", what, after.fds, before->fds);
	CHECK(!HOSTILE_CHECK_RSS || after.rss_kb <= before->rss_kb + RSS_SLACK_KB,
	      "%s: daemon VmRSS %ld kB, was %ld kB", what, after.rss_kb, before->rss_kb);
	return 0;
}

/* ---- kernel objects made since a mark ---- */

struct mark {
	__u32 prog, map, link;
};

static __u32 highest_id(int (*next)(__u32, __u32 *))
{
	__u32 id = 0, high = 0;

	while (next(id, &id) == 0)
		high = id;
	return high;
}

static void mark_kernel(struct mark *m)
{
	m->prog = highest_id(bpf_prog_get_next_id);
	m->map = highest_id(bpf_map_get_next_id);
	m->link = highest_id(bpf_link_get_next_id);
}

static int kernel_left(const struct mark *m, bool report)
{
	__u32 id;

	if ((id = m->prog, bpf_prog_get_next_id(id, &id) == 0)) {
		if (report)
			fprintf(stderr, "program id %u outlived its client\n", id);
		return 1;
	}
	if ((id = m->map, bpf_map_get_next_id(id, &id) == 0)) {
		if (report)
			fprintf(stderr, "map id %u outlived its client\n", id);
		return 1;
	}
	if ((id = m->link, bpf_link_get_next_id(id, &id) == 0)) {
		if (report)
			fprintf(stderr, "link id %u outlived its client\n", id);
		return 1;
	}
	return 0;
}

/* Freed from a workqueue after an RCU grace period: poll for a while. */
static int check_no_kernel_objects_since(const struct mark *m)
{
	for (int i = 0; i < 200 && kernel_left(m, false); i++)
		usleep(10000);
	return kernel_left(m, true) ? -1 : 0;
}

/* ---- clients as forked unprivileged processes, with a parent that watches ---- */

static pid_t spawn_as(const struct user *u, int (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid != 0)
		return pid;
	if (setgroups(0, NULL) < 0 || setresgid(u->gid, u->gid, u->gid) < 0 ||
	    setresuid(u->uid, u->uid, u->uid) < 0) {
		perror("dropping privileges");
		_exit(120);
	}
	if (geteuid() != u->uid || setuid(0) == 0) {
		fprintf(stderr, "privilege drop did not hold\n");
		_exit(121);
	}
	_exit(fn(arg));
}

/* Exit status (or 128+signal) of pid within timeout_ms; else kill it and -ETIMEDOUT. */
static int reap(pid_t pid, int timeout_ms)
{
	int status;

	for (int t = 0; t < timeout_ms; t++) {
		pid_t k = waitpid(pid, &status, WNOHANG);

		if (k == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		if (k < 0)
			return -errno;
		usleep(1000);
	}
	fprintf(stderr, "client %d hangs; killing it\n", (int)pid);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -ETIMEDOUT;
}

/* Counters a client shares with the parent (MAP_SHARED, made before fork). */
struct shared {
	volatile int stop;
	volatile unsigned ok, internal, other_err, dropped, failed_connect;
	volatile unsigned not_started; /* "busy": waiting for a worker when SIGTERM came */
};

static struct shared *shared_new(void)
{
	void *p = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : memset(p, 0, sizeof(struct shared));
}

/* A watchdog for clients: a request that gets no reply in time fails the test, loudly. */
static const char *volatile watchdog_what = "";

static void on_watchdog(int sig)
{
	static const char msg[] = "client: no reply within the watchdog time to: ";

	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)!write(STDERR_FILENO, watchdog_what, strlen(watchdog_what));
	(void)!write(STDERR_FILENO, "\n", 1);
	_exit(99);
}

static void watchdog_init(void)
{
	signal(SIGALRM, on_watchdog);
}

/* Child <-> parent rendezvous over a pair of pipes. */
struct sync {
	int to_parent[2], to_child[2];
};

static int sync_init(struct sync *s)
{
	if (pipe2(s->to_parent, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(s->to_child, O_CLOEXEC) < 0)
		return -errno;
	return 0;
}

/* In the parent, after the fork: drop the child's ends, so its exit reads as EOF. */
static void sync_parent_side(struct sync *s)
{
	close(s->to_parent[1]);
	close(s->to_child[0]);
}

static void sync_close(struct sync *s)
{
	close(s->to_parent[0]);
	close(s->to_child[1]);
}

/* In the child: tell the parent, wait for its go-ahead. */
static int child_rendezvous(struct sync *s)
{
	char c = 's';

	/*
	 * Drop the parent's ends first, so a parent that failed an assertion and
	 * went reads as EOF here: otherwise the child waits for ever, holding the
	 * machine's integration lock.
	 */
	if (s->to_child[1] >= 0) {
		close(s->to_parent[0]);
		close(s->to_child[1]);
		s->to_parent[0] = s->to_child[1] = -1;
	}
	if (write(s->to_parent[1], &c, 1) != 1)
		return -1;
	return read(s->to_child[0], &c, 1) == 1 ? 0 : -1;
}

/* In the parent: wait up to timeout_ms for the child to arrive; 0 if it did. */
static int parent_await(struct sync *s, int timeout_ms)
{
	struct pollfd p = {.fd = s->to_parent[0], .events = POLLIN};
	char c;

	if (poll(&p, 1, timeout_ms) != 1)
		return -1;
	return read(s->to_parent[0], &c, 1) == 1 ? 0 : -1;
}

static void parent_release(struct sync *s)
{
	char c = 'g';

	(void)!write(s->to_child[1], &c, 1);
}

/* ---- malformed objects ---- */

struct base {
	const char *name;
	uint8_t *buf;
	size_t len;
};

static const char *const base_names[] = {"counter",  "multi",  "configurable",	 "egress",
					 "callback", "reject", "subprog_kernel", "mapinmap"};
#define N_BASES (sizeof(base_names) / sizeof(base_names[0]))
static struct base bases[N_BASES];

static int read_object(const char *name, uint8_t **buf, size_t *len)
{
	int fd = open(harness_object(name), O_RDONLY | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	*buf = malloc((size_t)st.st_size);
	n = *buf ? read(fd, *buf, (size_t)st.st_size) : -1;
	close(fd);
	*len = (size_t)st.st_size;
	return n == st.st_size ? 0 : -1;
}

static uint64_t rng_state = 0x5eedb0b0cafef00dull;

static uint64_t rng(void)
{
	/* xorshift64*: fixed seed, the same mutations on every run */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

struct fuzz {
	struct bpfbroker *b;
	struct sync *sync;
	unsigned n, ok, errors, dropped, reconnects;
	struct {
		char code[32];
		unsigned n;
	} codes[24];
	size_t n_codes;
	char notable[24][300]; /* the first drops, internal errors and timeouts */
	size_t n_notable;
	bool lost; /* the daemon is gone */
	char desc[200];
};

static void fuzz_note(struct fuzz *f, const char *what)
{
	if (f->n_notable < 24)
		snprintf(f->notable[f->n_notable++], sizeof(f->notable[0]), "%.140s: %.150s", what,
			 f->desc);
}

static void fuzz_count_code(struct fuzz *f, const char *code)
{
	size_t i;

	for (i = 0; i < f->n_codes; i++)
		if (strcmp(f->codes[i].code, code) == 0)
			break;
	if (i == f->n_codes) {
		if (f->n_codes == 24)
			return;
		snprintf(f->codes[f->n_codes++].code, sizeof(f->codes[0].code), "%s", code);
	}
	f->codes[i].n++;
}

/* With HOSTILE_DUMP_DIR set (writable by the client), keep notable objects for reproducing. */
static void dump_object(struct fuzz *f, const void *buf, size_t len)
{
	const char *dir = getenv("HOSTILE_DUMP_DIR");
	char path[512];
	FILE *out;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%u.o", dir, f->n);
	out = fopen(path, "we");
	if (!out)
		return;
	fwrite(buf, 1, len, out);
	fclose(out);
	fprintf(stderr, "  kept %s: %s\n", path, f->desc);
}

/* Send one object; every one must get a reply, an error or a load (then freed). */
static void send_object(struct fuzz *f, const void *buf, size_t len, const char *fmt, ...)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	va_list ap;
	int k;

	if (f->lost)
		return;
	{
		static unsigned n;

		if (n++ % HOSTILE_SAMPLE != 0)
			return;
	}
	va_start(ap, fmt);
	vsnprintf(f->desc, sizeof(f->desc), fmt, ap);
	va_end(ap);
	if (!f->b) {
		if (bpfbroker_connect(H.socket, &f->b) < 0) {
			f->lost = true;
			fuzz_note(f, "cannot reconnect");
			return;
		}
		f->reconnects++;
	}
	watchdog_what = f->desc;
	alarm(REQUEST_WATCHDOG);
	k = bpfbroker_load_mem(f->b, buf, len, NULL, &res, &err);
	alarm(0);
	f->n++;
	if (k == 0) {
		f->ok++;
		bpfbroker_result_free(res);
	} else if (err) {
		f->errors++;
		fuzz_count_code(f, err->code);
		if (strcmp(err->code, "internal") == 0 || strcmp(err->code, "timeout") == 0) {
			char what[160];

			snprintf(what, sizeof(what), "%s (%.120s)", err->code, err->message);
			fuzz_note(f, what);
			dump_object(f, buf, len);
		}
		bpfbroker_error_free(err);
	} else {
		/* No reply: the daemon dropped us (or died). */
		f->dropped++;
		fprintf(stderr, "no reply (%s) to %s\n", strerror(-k), f->desc);
		fuzz_note(f, "dropped");
		bpfbroker_close(f->b);
		f->b = NULL;
	}
	if (f->n == WARMUP && f->sync && child_rendezvous(f->sync) < 0)
		f->lost = true;
}

/* A copy of b with len bytes at off replaced by val (little endian). */
static void send_patched(struct fuzz *f, const struct base *b, size_t off, uint64_t val,
			 size_t width, const char *what)
{
	uint8_t *c;

	if (off + width > b->len)
		return;
	c = malloc(b->len);
	if (!c)
		return;
	memcpy(c, b->buf, b->len);
	memcpy(c + off, &val, width); /* the host is little endian, as the objects are */
	send_object(f, c, b->len, "%s: %s = %#llx", b->name, what, (unsigned long long)val);
	free(c);
}

#define PATCH(f, b, base_off, type, field, val)                                                    \
	send_patched(f, b, (base_off) + offsetof(type, field), (uint64_t)(val),                    \
		     sizeof(((type *)0)->field), #type "." #field)

static const Elf64_Shdr *shdr(const struct base *b, size_t i)
{
	const Elf64_Ehdr *eh = (const void *)b->buf;

	return (const void *)(b->buf + eh->e_shoff + i * sizeof(Elf64_Shdr));
}

static const char *section_name(const struct base *b, size_t i)
{
	const Elf64_Ehdr *eh = (const void *)b->buf;
	const Elf64_Shdr *str = shdr(b, eh->e_shstrndx);

	return (const char *)b->buf + str->sh_offset + shdr(b, i)->sh_name;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

static void mutate_truncations(struct fuzz *f, const struct base *b)
{
	const Elf64_Ehdr *eh = (const void *)b->buf;
	size_t cuts[512], n = 0;

	cuts[n++] = 1;
	cuts[n++] = 4;
	cuts[n++] = EI_NIDENT;
	cuts[n++] = sizeof(Elf64_Ehdr) - 1;
	cuts[n++] = sizeof(Elf64_Ehdr);
	cuts[n++] = b->len - 1;
	for (size_t i = 0; i < eh->e_shnum && n + 8 < 400; i++) {
		const Elf64_Shdr *s = shdr(b, i);

		cuts[n++] = eh->e_shoff + i * sizeof(Elf64_Shdr);
		cuts[n++] = eh->e_shoff + i * sizeof(Elf64_Shdr) + sizeof(Elf64_Shdr) / 2;
		if (s->sh_type == SHT_NOBITS)
			continue;
		cuts[n++] = s->sh_offset;
		cuts[n++] = s->sh_offset + 1;
		cuts[n++] = s->sh_offset + s->sh_size / 2;
		cuts[n++] = s->sh_offset + s->sh_size - 1;
		cuts[n++] = s->sh_offset + s->sh_size;
	}
	for (int i = 0; i < 40; i++)
		cuts[n++] = rng() % b->len;
	qsort(cuts, n, sizeof(cuts[0]), cmp_size);
	for (size_t i = 0; i < n; i++)
		if (cuts[i] > 0 && cuts[i] < b->len && (i == 0 || cuts[i] != cuts[i - 1]))
			send_object(f, b->buf, cuts[i], "%s: truncated to %zu of %zu bytes",
				    b->name, cuts[i], b->len);
}

static void mutate_flips(struct fuzz *f, const struct base *b)
{
	const Elf64_Ehdr *eh = (const void *)b->buf;
	uint8_t *c = malloc(b->len);

	if (!c)
		return;
	/* single bits anywhere */
	for (int i = 0; i < 250 / HOSTILE_SCALE; i++) {
		size_t off = rng() % b->len;
		unsigned bit = rng() % 8;

		memcpy(c, b->buf, b->len);
		c[off] ^= 1u << bit;
		send_object(f, c, b->len, "%s: bit %u of byte %zu flipped", b->name, bit, off);
	}
	/* bursts of random bytes */
	for (int i = 0; i < 40; i++) {
		size_t off = rng() % b->len, n = 1 + rng() % 16;

		memcpy(c, b->buf, b->len);
		for (size_t j = 0; j < n && off + j < b->len; j++)
			c[off + j] = (uint8_t)rng();
		send_object(f, c, b->len, "%s: %zu random bytes at %zu", b->name, n, off);
	}
	/* a few flips inside every section's data: BTF, .BTF.ext, .maps, symbols, relocations */
	for (size_t s = 1; s < eh->e_shnum; s++) {
		const Elf64_Shdr *h = shdr(b, s);

		if (h->sh_type == SHT_NOBITS || h->sh_size == 0)
			continue;
		for (int i = 0; i < 4; i++) {
			size_t off = h->sh_offset + rng() % h->sh_size;
			unsigned bit = rng() % 8;

			memcpy(c, b->buf, b->len);
			c[off] ^= 1u << bit;
			send_object(f, c, b->len, "%s: bit %u of byte %zu (section %s) flipped",
				    b->name, bit, off, section_name(b, s));
		}
	}
	free(c);
}

static void mutate_header(struct fuzz *f, const struct base *b)
{
	const Elf64_Ehdr *eh = (const void *)b->buf;
	const uint64_t offs[] = {0,
				 b->len,
				 b->len - 1,
				 b->len - 8,
				 eh->e_shoff + 1,
				 UINT64_MAX,
				 UINT64_MAX - 63,
				 1ull << 62,
				 (uint64_t)b->len << 20};
	const uint64_t counts[] = {0, 1, 2, eh->e_shnum - 1u, eh->e_shnum + 1u, 0xff00, 0xffff};
	const uint64_t strndx[] = {0, 1, eh->e_shnum, eh->e_shnum - 1u, SHN_LORESERVE, SHN_XINDEX};
	const uint64_t entsize[] = {0, 1, 32, 65, 128, 0xffff};

	PATCH(f, b, 0, Elf64_Ehdr, e_ident[EI_CLASS], ELFCLASS32);
	PATCH(f, b, 0, Elf64_Ehdr, e_ident[EI_CLASS], ELFCLASSNONE);
	PATCH(f, b, 0, Elf64_Ehdr, e_ident[EI_CLASS], 7);
	PATCH(f, b, 0, Elf64_Ehdr, e_ident[EI_DATA], ELFDATA2MSB);
	PATCH(f, b, 0, Elf64_Ehdr, e_ident[EI_DATA], ELFDATANONE);
	PATCH(f, b, 0, Elf64_Ehdr, e_ident[EI_VERSION], 0);
	PATCH(f, b, 0, Elf64_Ehdr, e_ident[EI_OSABI], 0x61);
	PATCH(f, b, 0, Elf64_Ehdr, e_ident[EI_MAG1], 'X');
	PATCH(f, b, 0, Elf64_Ehdr, e_machine, EM_X86_64);
	PATCH(f, b, 0, Elf64_Ehdr, e_machine, EM_NONE);
	PATCH(f, b, 0, Elf64_Ehdr, e_machine, 0xffff);
	PATCH(f, b, 0, Elf64_Ehdr, e_type, ET_EXEC);
	PATCH(f, b, 0, Elf64_Ehdr, e_type, ET_DYN);
	PATCH(f, b, 0, Elf64_Ehdr, e_type, ET_CORE);
	PATCH(f, b, 0, Elf64_Ehdr, e_type, 0xffff);
	PATCH(f, b, 0, Elf64_Ehdr, e_version, 0);
	PATCH(f, b, 0, Elf64_Ehdr, e_ehsize, 0);
	PATCH(f, b, 0, Elf64_Ehdr, e_ehsize, 0xffff);
	PATCH(f, b, 0, Elf64_Ehdr, e_phoff, UINT64_MAX);
	PATCH(f, b, 0, Elf64_Ehdr, e_phnum, 0xffff);
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		PATCH(f, b, 0, Elf64_Ehdr, e_shoff, offs[i]);
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		PATCH(f, b, 0, Elf64_Ehdr, e_shnum, counts[i]);
	for (size_t i = 0; i < sizeof(strndx) / sizeof(strndx[0]); i++)
		PATCH(f, b, 0, Elf64_Ehdr, e_shstrndx, strndx[i]);
	for (size_t i = 0; i < sizeof(entsize) / sizeof(entsize[0]); i++)
		PATCH(f, b, 0, Elf64_Ehdr, e_shentsize, entsize[i]);
	/* Extended numbering: e_shnum 0 / e_shstrndx SHN_XINDEX defer to section 0. */
	{
		uint8_t *c = malloc(b->len);
		Elf64_Ehdr *ch = (void *)c;
		Elf64_Shdr *s0 = (void *)(c + eh->e_shoff);
		const uint64_t huge[] = {0xffffffffu, UINT64_MAX, 0x10000};

		for (size_t i = 0; c && i < sizeof(huge) / sizeof(huge[0]); i++) {
			memcpy(c, b->buf, b->len);
			ch->e_shnum = 0;
			s0->sh_size = huge[i];
			send_object(f, c, b->len, "%s: e_shnum 0, section 0 sh_size %#llx", b->name,
				    (unsigned long long)huge[i]);
			memcpy(c, b->buf, b->len);
			ch->e_shstrndx = SHN_XINDEX;
			s0->sh_link = (uint32_t)huge[i];
			send_object(f, c, b->len, "%s: e_shstrndx XINDEX, section 0 sh_link %#x",
				    b->name, (unsigned)s0->sh_link);
		}
		free(c);
	}
}

static void mutate_sections(struct fuzz *f, const struct base *b)
{
	const Elf64_Ehdr *eh = (const void *)b->buf;

	for (size_t i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *s = shdr(b, i);
		size_t at = eh->e_shoff + i * sizeof(Elf64_Shdr);
		const uint64_t offs[] = {UINT64_MAX, b->len, b->len - 1,
					 UINT64_MAX - s->sh_size + 1, 0};
		const uint64_t sizes[] = {UINT64_MAX, b->len + 1, b->len - s->sh_offset + 1,
					  1ull << 40, 0,	  s->sh_size + 1};

		for (size_t j = 0; j < sizeof(offs) / sizeof(offs[0]); j++)
			PATCH(f, b, at, Elf64_Shdr, sh_offset, offs[j]);
		for (size_t j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++)
			PATCH(f, b, at, Elf64_Shdr, sh_size, sizes[j]);
		PATCH(f, b, at, Elf64_Shdr, sh_link, 0xffffffffu);
		PATCH(f, b, at, Elf64_Shdr, sh_link, eh->e_shnum);
		PATCH(f, b, at, Elf64_Shdr, sh_link, i);
		PATCH(f, b, at, Elf64_Shdr, sh_info, 0xffffffffu);
		PATCH(f, b, at, Elf64_Shdr, sh_info, eh->e_shnum);
		PATCH(f, b, at, Elf64_Shdr, sh_info, i);
		PATCH(f, b, at, Elf64_Shdr, sh_entsize, 0);
		PATCH(f, b, at, Elf64_Shdr, sh_entsize, 1);
		PATCH(f, b, at, Elf64_Shdr, sh_entsize, UINT64_MAX);
		PATCH(f, b, at, Elf64_Shdr, sh_name, 0xffffffffu);
		PATCH(f, b, at, Elf64_Shdr, sh_type, SHT_NOBITS);
		PATCH(f, b, at, Elf64_Shdr, sh_type, SHT_SYMTAB);
		PATCH(f, b, at, Elf64_Shdr, sh_type, SHT_REL);
		PATCH(f, b, at, Elf64_Shdr, sh_type, SHT_STRTAB);
		PATCH(f, b, at, Elf64_Shdr, sh_type, 0x7fffffffu);
		PATCH(f, b, at, Elf64_Shdr, sh_flags, UINT64_MAX);
		PATCH(f, b, at, Elf64_Shdr, sh_addralign, 1ull << 63);
	}
}

/* Symbol tables and relocations: huge counts and out-of-range entries. */
static void mutate_symbols_relocs(struct fuzz *f, const struct base *b)
{
	const Elf64_Ehdr *eh = (const void *)b->buf;

	for (size_t i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *s = shdr(b, i);
		size_t at = eh->e_shoff + i * sizeof(Elf64_Shdr);

		if (s->sh_type == SHT_SYMTAB) {
			size_t n = s->sh_size / sizeof(Elf64_Sym);

			PATCH(f, b, at, Elf64_Shdr, sh_size, sizeof(Elf64_Sym) * 0x10000000ull);
			PATCH(f, b, at, Elf64_Shdr, sh_size, sizeof(Elf64_Sym) * (n + 1));
			PATCH(f, b, at, Elf64_Shdr, sh_size, sizeof(Elf64_Sym) * n - 1);
			PATCH(f, b, at, Elf64_Shdr, sh_info, n + 1);
			for (size_t k = 1; k < n; k += 1 + n / 12) {
				size_t sym = s->sh_offset + k * sizeof(Elf64_Sym);

				PATCH(f, b, sym, Elf64_Sym, st_shndx, 0xfff0);
				PATCH(f, b, sym, Elf64_Sym, st_shndx, eh->e_shnum + 5);
				PATCH(f, b, sym, Elf64_Sym, st_shndx, SHN_ABS);
				PATCH(f, b, sym, Elf64_Sym, st_shndx, SHN_COMMON);
				PATCH(f, b, sym, Elf64_Sym, st_shndx, SHN_XINDEX);
				PATCH(f, b, sym, Elf64_Sym, st_name, 0xffffffffu);
				PATCH(f, b, sym, Elf64_Sym, st_value, UINT64_MAX);
				PATCH(f, b, sym, Elf64_Sym, st_value, 7);
				PATCH(f, b, sym, Elf64_Sym, st_size, UINT64_MAX);
				PATCH(f, b, sym, Elf64_Sym, st_info, (uint8_t)rng());
			}
		}
		if (s->sh_type == SHT_REL) {
			size_t n = s->sh_size / sizeof(Elf64_Rel);

			PATCH(f, b, at, Elf64_Shdr, sh_size, sizeof(Elf64_Rel) * 0x100000000ull);
			PATCH(f, b, at, Elf64_Shdr, sh_size, sizeof(Elf64_Rel) * (n + 1));
			for (size_t k = 0; k < n && k < 4; k++) {
				size_t rel = s->sh_offset + k * sizeof(Elf64_Rel);
				const Elf64_Rel *r = (const void *)(b->buf + rel);

				PATCH(f, b, rel, Elf64_Rel, r_info,
				      ELF64_R_INFO(0xffffffffu, ELF64_R_TYPE(r->r_info)));
				PATCH(f, b, rel, Elf64_Rel, r_info,
				      ELF64_R_INFO(ELF64_R_SYM(r->r_info), 0xff));
				PATCH(f, b, rel, Elf64_Rel, r_info, 0);
				PATCH(f, b, rel, Elf64_Rel, r_offset, UINT64_MAX);
				PATCH(f, b, rel, Elf64_Rel, r_offset, r->r_offset + 1);
				PATCH(f, b, rel, Elf64_Rel, r_offset, r->r_offset + 0x100000);
			}
		}
	}
}

/* The BTF and BTF.ext headers: offsets and lengths past the end, and overflowing. */
static void mutate_btf(struct fuzz *f, const struct base *b)
{
	const Elf64_Ehdr *eh = (const void *)b->buf;
	const uint64_t vals[] = {0xffffffffu, 0x7fffffff, 0xfffffff0u, 1};

	for (size_t i = 1; i < eh->e_shnum; i++) {
		const Elf64_Shdr *s = shdr(b, i);
		const char *name = section_name(b, i);
		size_t at = s->sh_offset;

		if (strcmp(name, ".BTF") == 0 && s->sh_size >= sizeof(struct btf_header)) {
			for (size_t j = 0; j < sizeof(vals) / sizeof(vals[0]); j++) {
				PATCH(f, b, at, struct btf_header, hdr_len, vals[j]);
				PATCH(f, b, at, struct btf_header, type_off, vals[j]);
				PATCH(f, b, at, struct btf_header, type_len, vals[j]);
				PATCH(f, b, at, struct btf_header, str_off, vals[j]);
				PATCH(f, b, at, struct btf_header, str_len, vals[j]);
			}
			PATCH(f, b, at, struct btf_header, version, 2);
			PATCH(f, b, at, struct btf_header, magic, 0x9feb);
		}
		if (strcmp(name, ".BTF.ext") == 0 && s->sh_size >= 24) {
			/* magic u16, version u8, flags u8, then u32 hdr_len and off/len pairs */
			for (size_t off = 4; off + 4 <= 32 && off + 4 <= s->sh_size; off += 4)
				for (size_t j = 0; j < sizeof(vals) / sizeof(vals[0]); j++) {
					char what[32];

					snprintf(what, sizeof(what), ".BTF.ext u32 at %zu", off);
					send_patched(f, b, at + off, vals[j], 4, what);
				}
		}
	}
}

static void mutate_junk(struct fuzz *f)
{
	static uint8_t junk[8192];
	static const char text[] = "SEC(\"socket\") int prog(void *ctx) { return 0; }\n";
	const struct base *b = &bases[0];

	send_object(f, junk, 0, "zero-length object");
	send_object(f, "\x7f", 1, "1 byte");
	send_object(f, ELFMAG, SELFMAG, "ELF magic only");
	send_object(f, b->buf, sizeof(Elf64_Ehdr), "ELF header only");
	send_object(f, text, sizeof(text) - 1, "C source text");
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t) "hello, broker\n"[i % 14];
	send_object(f, junk, sizeof(junk), "8 KiB of text");
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)rng();
	send_object(f, junk, sizeof(junk), "8 KiB of random bytes");
	memcpy(junk, b->buf, sizeof(Elf64_Ehdr));
	send_object(f, junk, sizeof(junk), "ELF header and random bytes");
	memset(junk, 0, sizeof(junk));
	send_object(f, junk, sizeof(junk), "8 KiB of zeros");
	memcpy(junk, b->buf, sizeof(Elf64_Ehdr));
	send_object(f, junk, sizeof(junk), "ELF header and zeros");
}

static int client_fuzz(void *arg)
{
	struct fuzz f = {.sync = arg};
	time_t start = time(NULL);

	watchdog_init();
	/* Warm-up: valid objects and junk, then the parent takes the daemon's baseline. */
	for (int i = 0; f.n < WARMUP && i < WARMUP; i++) {
		const struct base *b = &bases[i % N_BASES];

		send_object(&f, b->buf, b->len, "%s, unchanged (warm-up)", b->name);
	}
	mutate_junk(&f);
	for (size_t i = 0; i < N_BASES; i++) {
		const struct base *b = &bases[i];

		mutate_truncations(&f, b);
		mutate_header(&f, b);
		mutate_sections(&f, b);
		mutate_symbols_relocs(&f, b);
		mutate_btf(&f, b);
		mutate_flips(&f, b);
		/* The unchanged object still loads (or is denied) the same way. */
		send_object(&f, b->buf, b->len, "%s, unchanged", b->name);
	}
	fprintf(stderr,
		"malformed objects: %u requests in %llds: %u loaded, %u errors, %u without "
		"reply, %u reconnects\n",
		f.n, (long long)(time(NULL) - start), f.ok, f.errors, f.dropped, f.reconnects);
	for (size_t i = 0; i < f.n_codes; i++)
		fprintf(stderr, "  %-16s %u\n", f.codes[i].code, f.codes[i].n);
	for (size_t i = 0; i < f.n_notable; i++)
		fprintf(stderr, "  notable: %s\n", f.notable[i]);
	CHECK(!f.lost, "lost the daemon: %s", f.n_notable ? f.notable[f.n_notable - 1] : "");
	/* The parent measures again while this connection is still open. */
	CHECK(child_rendezvous(f.sync) == 0, "parent went away");
	bpfbroker_close(f.b);
	CHECK(f.dropped == 0, "%u requests got no reply", f.dropped);
	return 0;
}

static void test_malformed_objects(void **state)
{
	struct sync s;
	struct dstat before;
	struct mark m;
	pid_t pid;

	mark_kernel(&m);
	assert_int_equal(sync_init(&s), 0);
	pid = spawn_as(&nobody, client_fuzz, &s);
	assert_true(pid > 0);
	sync_parent_side(&s);
	assert_int_equal(parent_await(&s, 60000), 0); /* warm-up done */
	assert_int_equal(quiet_stats(&before), 0);
	parent_release(&s);
	/* All mutations: a few thousand requests; the child has its own watchdog. */
	if (parent_await(&s, 300000) == 0) {
		assert_true(daemon_alive());
		assert_int_equal(check_flat("malformed objects", &before), 0);
		parent_release(&s);
	}
	assert_int_equal(reap(pid, 60000), 0);
	sync_close(&s);
	assert_true(daemon_alive());
	assert_int_equal(check_no_kernel_objects_since(&m), 0);
}

/* ---- faults ---- */

static int load_counter(struct bpfbroker **b, struct shared *sh, const char *what)
{
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k;

	if (!*b && bpfbroker_connect(H.socket, b) < 0) {
		*b = NULL;
		sh->failed_connect++;
		return -ECONNREFUSED;
	}
	watchdog_what = what;
	alarm(REQUEST_WATCHDOG);
	k = bpfbroker_load_mem(*b, bases[0].buf, bases[0].len, NULL, &res, &err);
	alarm(0);
	if (k == 0) {
		sh->ok++;
		bpfbroker_result_free(res);
		return 0;
	}
	if (err) {
		if (strcmp(err->code, "internal") == 0)
			sh->internal++;
		else if (strcmp(err->code, "busy") == 0 && strstr(err->message, "shutting down"))
			sh->not_started++;
		else {
			sh->other_err++;
			fprintf(stderr, "%s: %s: %s\n", what, err->code, err->message);
		}
		bpfbroker_error_free(err);
		return k;
	}
	sh->dropped++;
	bpfbroker_close(*b);
	*b = NULL;
	return k;
}

static int client_load_until_stopped(void *arg)
{
	struct shared *sh = arg;
	struct bpfbroker *b = NULL;

	watchdog_init();
	while (!sh->stop)
		load_counter(&b, sh, "a load while workers are being killed");
	/* The daemon serves again as soon as nobody kills its workers. */
	CHECK(load_counter(&b, sh, "the load after the killing") == 0, "no load after the killing");
	bpfbroker_close(b);
	return 0;
}

/* Send SIGKILL to every current child of the daemon (checked through a pidfd: no pid reuse). */
static unsigned kill_workers(void)
{
	pid_t kids[16];
	size_t n = daemon_children(kids, 16);
	unsigned killed = 0;

	for (size_t i = 0; i < n; i++) {
		int pfd = (int)syscall(SYS_pidfd_open, kids[i], 0);
		pid_t ppid = 0;

		if (pfd < 0)
			continue;
		pid_t gp = 0;

		/* A worker is the child of the spawner, the daemon's child. */
		if (proc_state(kids[i], &ppid) && proc_state(ppid, &gp) && gp == H.daemon &&
		    syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0) == 0)
			killed++;
		close(pfd);
	}
	return killed;
}

static void test_worker_killed(void **state)
{
	struct shared *sh = shared_new();
	struct dstat before;
	struct mark m;
	unsigned killed = 0;
	pid_t pid;
	struct timespec t0, t;

	assert_non_null(sh);
	assert_int_equal(quiet_stats(&before), 0);
	mark_kernel(&m);
	pid = spawn_as(&nobody, client_load_until_stopped, sh);
	assert_true(pid > 0);
	/* Kill workers until 30 loads have died with theirs (or 20 s have passed). */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		killed += kill_workers();
		usleep(200 + rand() % 800); /* vary the phase of the load that is hit */
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (sh->internal < 30 && t.tv_sec - t0.tv_sec < 20 && daemon_alive());
	sh->stop = 1;
	assert_int_equal(reap(pid, 60000), 0);
	fprintf(stderr,
		"worker kills: %u workers killed; client: %u loaded, %u internal, %u other errors, "
		"%u without reply\n",
		killed, sh->ok, sh->internal, sh->other_err, sh->dropped);
	assert_true(daemon_alive());
	assert_true(sh->internal > 0); /* some kills did hit a busy worker */
	assert_int_equal(sh->dropped, 0); /* each of those got an error reply */
	assert_int_equal(sh->other_err, 0);
	assert_int_equal(check_flat("worker kills", &before), 0);
	assert_int_equal(check_no_kernel_objects_since(&m), 0);
	munmap(sh, sizeof(*sh));
}

static int raw_send_load(int sock, int obj)
{
	static const char req[] =
		"{\"bpfbroker\":1,\"id\":1,\"method\":\"load\",\"params\":{\"object_fd\":0}}";
	struct iovec iov = {.iov_base = (void *)req, .iov_len = sizeof(req) - 1};
	char control[CMSG_SPACE(sizeof(int))] = {};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = control,
			    .msg_controllen = sizeof(control)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &obj, sizeof(int));
	return sendmsg(sock, &mh, MSG_NOSIGNAL) > 0 ? 0 : -1;
}

static void spin_us(unsigned us)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static int client_hang_up(void *arg)
{
	int obj = open(harness_object("counter"), O_RDONLY | O_CLOEXEC);
	struct shared sh = {};
	struct bpfbroker *b = NULL;

	watchdog_init();
	CHECK(obj >= 0, "open: %m");
	/* Hang up after 0 to ~4 ms: while queued, in the worker, or with the reply on its way. */
	for (unsigned i = 0; i < 200; i++) {
		int s = harness_connect();

		CHECK(s >= 0, "connect: %m");
		CHECK(raw_send_load(s, obj) == 0, "send: %m");
		spin_us((i % 40) * 100);
		close(s);
	}
	/* Half-close: the daemon must still answer or close, not wait forever. */
	for (unsigned i = 0; i < 20; i++) {
		int s = harness_connect();
		struct pollfd p = {.fd = s, .events = POLLIN};
		char buf[4096];

		CHECK(s >= 0, "connect: %m");
		CHECK(raw_send_load(s, obj) == 0, "send: %m");
		spin_us(i * 100);
		CHECK(shutdown(s, SHUT_WR) == 0, "shutdown: %m");
		CHECK(poll(&p, 1, REQUEST_WATCHDOG * 1000) == 1, "half-closed request: no reply "
								 "and no close");
		(void)!recv(s, buf, sizeof(buf), MSG_DONTWAIT);
		close(s);
	}
	close(obj);
	/* And the daemon serves. */
	CHECK(load_counter(&b, &sh, "a load after the hang-ups") == 0, "no load after hang-ups");
	bpfbroker_close(b);
	return 0;
}

static void test_client_hangs_up(void **state)
{
	struct dstat before;
	struct mark m;

	assert_int_equal(quiet_stats(&before), 0);
	mark_kernel(&m);
	assert_int_equal(harness_as_user(&nobody, client_hang_up, NULL), 0);
	assert_true(daemon_alive());
	assert_int_equal(check_flat("hang-ups", &before), 0);
	assert_int_equal(check_no_kernel_objects_since(&m), 0);
}

static int client_many(void *arg)
{
	struct sync *s = arg;
	struct shared sh = {};
	struct bpfbroker *b = NULL;
	unsigned policies = 0;
	time_t start;

	watchdog_init();
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect: %m");
	for (int phase = 0; phase < 2; phase++) {
		unsigned n = phase ? 10000 / HOSTILE_SCALE : WARMUP;

		start = time(NULL);
		for (unsigned i = 0; i < n; i++) {
			if (i % 10 == 9) {
				CHECK(load_counter(&b, &sh, "one of many loads") == 0,
				      "load %u failed", i);
				continue;
			}
			{
				struct bpfbroker_error *err = NULL;
				char *json = NULL;
				int k;

				watchdog_what = "one of many policy requests";
				alarm(REQUEST_WATCHDOG);
				k = bpfbroker_policy(b, &json, &err);
				alarm(0);
				CHECK(k == 0, "policy %u: %s", i,
				      err ? err->message : strerror(-k));
				free(json);
				policies++;
			}
		}
		if (phase)
			fprintf(stderr, "many requests: %u policy, %u loads in %llds\n",
				policies - (WARMUP - WARMUP / 10), sh.ok - WARMUP / 10,
				(long long)(time(NULL) - start));
		CHECK(child_rendezvous(s) == 0, "parent went away");
	}
	bpfbroker_close(b);
	return 0;
}

static void test_many_requests(void **state)
{
	struct sync s;
	struct dstat before;
	struct mark m;
	pid_t pid;

	mark_kernel(&m);
	assert_int_equal(sync_init(&s), 0);
	pid = spawn_as(&nobody, client_many, &s);
	assert_true(pid > 0);
	sync_parent_side(&s);
	assert_int_equal(parent_await(&s, 60000), 0);
	assert_int_equal(quiet_stats(&before), 0);
	parent_release(&s);
	if (parent_await(&s, 300000) == 0) {
		assert_int_equal(check_flat("10,000 requests", &before), 0);
		parent_release(&s);
	}
	assert_int_equal(reap(pid, 60000), 0);
	sync_close(&s);
	assert_true(daemon_alive());
	assert_int_equal(check_no_kernel_objects_since(&m), 0);
}

/*
 * Load until the daemon is gone; the first load that fails must not hang. On
 * SIGTERM a load that runs finishes and is answered, one still waiting for a
 * worker is answered "busy", and the connection is then closed.
 */
static int client_load_until_gone(void *arg)
{
	struct shared *sh = arg;
	struct bpfbroker *b = NULL;

	watchdog_init();
	while (load_counter(&b, sh, "a load during SIGTERM") != -ECONNREFUSED)
		;
	bpfbroker_close(b);
	return 0;
}

#define N_TERM_CLIENTS 4

static void test_sigterm_during_loads(void **state)
{
	struct shared *sh[N_TERM_CLIENTS];
	pid_t pids[N_TERM_CLIENTS];
	struct mark m;
	int status = -1;
	bool running = false;

	mark_kernel(&m);
	for (int i = 0; i < N_TERM_CLIENTS; i++) {
		sh[i] = shared_new();
		assert_non_null(sh[i]);
		pids[i] = spawn_as(&nobody, client_load_until_gone, sh[i]);
		assert_true(pids[i] > 0);
	}
	/* Every client has loaded a few times: loads are in flight all the time now. */
	for (int t = 0; t < 20000 && !running; t++) {
		running = true;
		for (int i = 0; i < N_TERM_CLIENTS; i++)
			running &= sh[i]->ok >= 3;
		if (!running)
			usleep(1000);
	}
	assert_true(running);
	assert_int_equal(kill(H.daemon, SIGTERM), 0);
	for (int t = 0; t < 5000; t++) {
		if (waitpid(H.daemon, &status, WNOHANG) == H.daemon)
			break;
		usleep(1000);
	}
	if (status == -1) {
		bool reaped = false;

		fprintf(stderr, "bpfbrokerd did not exit within 5 s of SIGTERM\n");
		/* A second signal: it logs the workers it still waits for, and exits. */
		kill(H.daemon, SIGTERM);
		for (int t = 0; t < 1000 && !reaped; t++) {
			reaped = waitpid(H.daemon, &status, WNOHANG) == H.daemon;
			if (!reaped)
				usleep(1000);
		}
		if (!reaped) {
			kill(H.daemon, SIGKILL);
			waitpid(H.daemon, &status, 0);
		}
		H.daemon = -1;
		fail();
	}
	H.daemon = -1;
	fprintf(stderr, "SIGTERM: daemon exit status %#x\n", status);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (int i = 0; i < N_TERM_CLIENTS; i++) {
		assert_int_equal(reap(pids[i], 30000), 0);
		fprintf(stderr,
			"SIGTERM: client %d: %u loaded, %u internal, %u not started, %u other, %u "
			"cut off\n",
			i, sh[i]->ok, sh[i]->internal, sh[i]->not_started, sh[i]->other_err,
			sh[i]->dropped);
		assert_int_equal(sh[i]->other_err, 0);
		/* Nothing that ran was killed: every load got its answer. */
		assert_int_equal(sh[i]->internal, 0);
		munmap(sh[i], sizeof(*sh[i]));
	}
	assert_int_equal(check_no_kernel_objects_since(&m), 0);
	/* A restart serves again. */
	assert_int_equal(harness_start(JOB_TIMEOUT), 0);
	{
		static struct shared once = {.stop = 1};

		assert_int_equal(harness_as_user(&nobody, client_load_until_stopped, &once), 0);
	}
}

/* Clock ticks of CPU a process has used (utime + stime, /proc/PID/stat). */
static unsigned long long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long utime = 0, stime = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* After "pid (comm)": state is field 3, utime 14, stime 15. */
	if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
			&stime) != 2)
		return 0;
	return utime + stime;
}

static int client_load_times_out(void *arg)
{
	struct bpfbroker *b = NULL;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	int k;

	watchdog_init();
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	alarm(REQUEST_WATCHDOG);
	k = bpfbroker_load_mem(b, bases[0].buf, bases[0].len, NULL, &res, &err);
	alarm(0);
	CHECK(k < 0 && err, "a load without workers: %d, no error reply", k);
	CHECK(strcmp(err->code, "timeout") == 0, "got %s: %s", err->code, err->message);
	bpfbroker_error_free(err);
	bpfbroker_close(b);
	return 0;
}

/*
 * A worker spawner that dies as soon as it starts (here by fault injection;
 * in life, say, a capability it cannot drop): the daemon restarts it with a
 * growing delay instead of in a tight loop, and a queued request is answered
 * with a timeout instead of waiting forever.
 */
static void test_spawner_keeps_failing(void **state)
{
	unsigned long long t0, t1;

	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(
		harness_start("--fault-inject=spawner-start --timeout=2 --verifier-timeout=1"), 0);
	t0 = cpu_ticks(H.daemon);
	assert_int_equal(harness_as_user(&nobody, client_load_times_out, NULL), 0);
	sleep(1);
	t1 = cpu_ticks(H.daemon);
	/* Restarting in a loop burns a whole CPU; backing off, next to nothing. */
	fprintf(stderr, "spawner failing: daemon used %llu ticks in 3 s\n", t1 - t0);
	assert_true(t1 - t0 < (unsigned long long)sysconf(_SC_CLK_TCK) / 4);
	assert_true(daemon_alive());
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start(JOB_TIMEOUT), 0);
}

/*
 * A request that runs over --timeout (here a test run whose worker stalls, by
 * fault injection): the client gets a "timeout" error naming the limit, the
 * worker that held it is killed and reaped, and the same connection serves
 * the next request.
 */
static int client_request_times_out(void *arg)
{
	pid_t *before = arg;
	struct bpfbroker *b = NULL;
	struct bpfbroker_result *res = NULL;
	struct bpfbroker_error *err = NULL;
	struct bpfbroker_test_run_result *tr = NULL;
	struct bpfbroker_test_run_opts opts = {.sz = sizeof(opts),
					       .object = "stall",
					       .program = "prog",
					       .data_in = "x",
					       .data_in_size = 1};
	bool gone = false;
	int k;

	watchdog_init();
	CHECK(bpfbroker_connect(H.socket, &b) == 0, "connect");
	alarm(REQUEST_WATCHDOG);
	k = bpfbroker_test_run(b, &opts, &tr, &err);
	alarm(0);
	CHECK(k < 0 && err, "a stalled test run: %d, no error reply", k);
	CHECK(strcmp(err->code, "timeout") == 0, "got %s: %s", err->code, err->message);
	CHECK(strstr(err->message, "limit of 2 s"), "message: %s", err->message);
	bpfbroker_error_free(err);
	err = NULL;

	/* The stalled worker was one of those idle before; one of them is reaped now. */
	for (int i = 0; i < 200 && !gone; i++) {
		pid_t now[16];
		size_t n = daemon_children(now, 16);

		for (size_t j = 0; before[j] && !gone; j++) {
			bool found = false;

			for (size_t l = 0; l < n; l++)
				found |= now[l] == before[j];
			gone = !found;
		}
		if (!gone)
			usleep(10000);
	}
	CHECK(gone, "the worker that ran over the limit is still there");

	alarm(REQUEST_WATCHDOG);
	k = bpfbroker_load_mem(b, bases[0].buf, bases[0].len, NULL, &res, &err);
	alarm(0);
	CHECK(k == 0, "a load after the timeout on the same connection: %d %s", k,
	      err ? err->message : "");
	bpfbroker_result_free(res);
	bpfbroker_close(b);
	return 0;
}

static void test_request_timeout(void **state)
{
	pid_t before[17] = {};
	size_t n = 0;

	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(
		harness_start("--fault-inject=worker-stall --timeout=2 --verifier-timeout=1"), 0);
	/* All of them: the spawner forks one after the other, and the newest takes the job. */
	for (int i = 0; i < 500; i++) {
		bool idle;

		n = daemon_children(before, 16);
		idle = n == N_WORKERS;
		for (size_t j = 0; j < n && idle; j++)
			idle = proc_state(before[j], NULL) == 'S';
		if (idle)
			break;
		usleep(10000);
	}
	assert_int_equal(n, N_WORKERS);
	before[n] = 0;
	assert_int_equal(harness_as_user(&nobody, client_request_times_out, before), 0);
	assert_true(daemon_alive());
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start(JOB_TIMEOUT), 0);
}

/*
 * Kernels before 6.5 with unprivileged BPF disabled want CAP_BPF effective
 * for every bpf() command. The daemon probes for that; here it is told to
 * assume it: workers then hold CAP_BPF (and only it) effective between
 * raises, and loads, named loads and fds still work.
 */
static void test_old_kernel_mode(void **state)
{
	static struct shared once = {.stop = 1};
	pid_t workers[8];
	size_t n = 0;

	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start("--fault-inject=bpf-needs-cap"), 0);
	assert_int_equal(harness_as_user(&nobody, client_load_until_stopped, &once), 0);
	for (int i = 0; i < 100 && n == 0; i++) {
		n = daemon_children(workers, 8);
		if (n == 0)
			usleep(10000);
	}
	assert_true(n > 0);
	/* CAP_BPF is 39. */
	assert_int_equal(harness_status_field(workers[0], "CapEff", 16), 1ull << 39);
	assert_true(WIFEXITED(harness_kill(SIGTERM)));
	assert_int_equal(harness_start(JOB_TIMEOUT), 0);
}

/* ---- setup ---- */

static int setup(void **state)
{
	if (harness_init() < 0)
		return -1;
	for (size_t i = 0; i < N_BASES; i++) {
		const Elf64_Ehdr *eh;

		bases[i].name = base_names[i];
		if (read_object(base_names[i], &bases[i].buf, &bases[i].len) < 0) {
			fprintf(stderr, "cannot read %s\n", harness_object(base_names[i]));
			return -1;
		}
		eh = (const void *)bases[i].buf;
		/* The mutators trust the originals: well-formed little-endian ELF64. */
		if (bases[i].len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
		    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
		    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shnum == 0 ||
		    eh->e_shoff + eh->e_shnum * sizeof(Elf64_Shdr) > bases[i].len ||
		    eh->e_shstrndx >= eh->e_shnum) {
			fprintf(stderr, "%s is not the ELF64 LE object expected\n", base_names[i]);
			return -1;
		}
	}
	if (harness_write_policy("50-hostile.json",
				 "{\"rules\": [{\"match\": {\"uids\": [\"65534\"]},"
				 " \"allow\": {\"program_types\": [\"socket_filter\"], "
				 "\"helper_classes\": [\"base\"],"
				 "  \"maps\": [{\"name\": \"*\", \"access\": \"rw\"}]},"
				 " \"limits\": {\"max_loads_per_minute\": 100000}}]}") < 0)
		return -1;
	harness_mark_kernel_objects();
	srand(1);
	return harness_start(JOB_TIMEOUT) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	if (harness_stop() < 0)
		return -1;
	return harness_check_no_kernel_objects_left();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malformed_objects),
		cmocka_unit_test(test_worker_killed),
		cmocka_unit_test(test_client_hangs_up),
		cmocka_unit_test(test_many_requests),
		cmocka_unit_test(test_sigterm_during_loads),
		cmocka_unit_test(test_spawner_keeps_failing),
		cmocka_unit_test(test_request_timeout),
		cmocka_unit_test(test_old_kernel_mode),
	};

	return cmocka_run_group_tests_name("hostile", tests, setup, teardown);
}
