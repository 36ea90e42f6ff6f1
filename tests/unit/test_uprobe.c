// SPDX-License-Identifier: MIT
/*
 * Unit tests for daemon/worker/elfsym.c and the pure parts of daemon/worker/uprobe.c:
 * symbol to file offset (checked against the bytes the kernel mapped, for
 * this PIE executable and for libc), the errors of hostile or wrong input,
 * reading /proc/PID/status, and every reason a process is refused.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/macro.h"
#include "daemon/worker/elfsym.h"
#include "daemon/worker/uprobe.h"
#include "tests/usdt.h"

/* A function and a USDT-style semaphore of our own, to find in our own file. */
int unit_probe_me(int x);
__attribute__((noinline, used)) int unit_probe_me(int x)
{
	__asm__ volatile("" : "+r"(x)::"memory");
	return x * 3 + 1;
}

volatile unsigned short unit_semaphore __attribute__((section(".probes"), used)) = 0x5a5a;

/* A USDT probe site with that semaphore. */
void unit_usdt_site(void);
USDT_SITE_FUNCTION(unit_usdt_site, unit_semaphore)

/* The bytes at file offset off equal those the kernel mapped at addr. */
static void assert_file_bytes_are(const char *path, uint64_t off, const void *addr, size_t n)
{
	unsigned char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_true(n <= sizeof(buf));
	assert_int_equal(pread(fd, buf, n, (off_t)off), (ssize_t)n);
	assert_memory_equal(buf, addr, n);
	close(fd);
}

static int open_ro(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static void test_own_executable(void **state)
{
	int fd = open_ro("/proc/self/exe");
	uint64_t off = 0, again = 0, sem = 0;

	assert_int_equal(elfsym_resolve(fd, "unit_probe_me", 0, ELFSYM_CODE, &off), 0);
	assert_file_bytes_are("/proc/self/exe", off, (const void *)unit_probe_me, 16);
	/* Bytes into the function, and the same place as a plain file offset. */
	assert_int_equal(elfsym_resolve(fd, "unit_probe_me", 4, ELFSYM_CODE, &again), 0);
	assert_int_equal(again, off + 4);
	assert_int_equal(elfsym_resolve(fd, NULL, off, ELFSYM_CODE, &again), 0);
	assert_int_equal(again, off);
	/* The semaphore sits in the data segment, whose addresses are not file offsets. */
	assert_int_equal(elfsym_resolve(fd, "unit_semaphore", 0, ELFSYM_DATA, &sem), 0);
	assert_file_bytes_are("/proc/self/exe", sem, (const void *)&unit_semaphore, 2);
	assert_int_equal(elfsym_resolve(fd, NULL, sem, ELFSYM_DATA, &again), 0);
	close(fd);
}

/* USDT sites with a semaphore, from .note.stapsdt: only exactly there. */
static void test_usdt_sites(void **state)
{
	int fd = open_ro("/proc/self/exe"), tfd;
	uint64_t site = 0, work = 0;
	char text[] = "/tmp/bpfbroker-usdt-XXXXXX";

	assert_int_equal(elfsym_resolve(fd, "unit_usdt_site", 0, ELFSYM_CODE, &site), 0);
	assert_int_equal(elfsym_resolve(fd, "unit_probe_me", 0, ELFSYM_CODE, &work), 0);
	assert_int_equal(elfsym_usdt_semaphore_at(fd, site), 1);
	assert_int_equal(elfsym_usdt_semaphore_at(fd, site + 1), 0);
	assert_int_equal(elfsym_usdt_semaphore_at(fd, work), 0);
	close(fd);
	/* Not ELF. */
	tfd = mkstemp(text);
	assert_true(tfd >= 0);
	unlink(text);
	assert_int_equal(write(tfd, "#!/bin/sh\n", 10), 10);
	assert_int_equal(elfsym_usdt_semaphore_at(tfd, 0), -ENOEXEC);
	close(tfd);
}

static void test_shared_library(void **state)
{
	void *getpid_addr = dlsym(RTLD_DEFAULT, "getpid");
	Dl_info info;
	uint64_t off = 0;
	int fd;

	assert_non_null(getpid_addr);
	assert_true(dladdr(getpid_addr, &info) != 0);
	/* A stripped shared object: only .dynsym has it. */
	fd = open_ro(info.dli_fname);
	assert_int_equal(elfsym_resolve(fd, "getpid", 0, ELFSYM_CODE, &off), 0);
	assert_file_bytes_are(info.dli_fname, off, getpid_addr, 16);
	close(fd);
}

static void test_wrong_places(void **state)
{
	int fd = open_ro("/proc/self/exe");
	char text[] = "/tmp/bpfbroker-elfsym-XXXXXX";
	uint64_t off = 7, sem = 0, code = 0;
	int tfd;

	assert_int_equal(elfsym_resolve(fd, "no_such_function", 0, ELFSYM_CODE, &off), -ENOENT);
	/* A data symbol is no function, a function no semaphore. */
	assert_int_equal(elfsym_resolve(fd, "unit_semaphore", 0, ELFSYM_CODE, &off), -ENOENT);
	assert_int_equal(elfsym_resolve(fd, "unit_probe_me", 0, ELFSYM_DATA, &off), -ENOENT);
	/* Past the function's end. */
	assert_int_equal(elfsym_resolve(fd, "unit_probe_me", 1 << 20, ELFSYM_CODE, &off), -ERANGE);
	assert_int_equal(elfsym_resolve(fd, "unit_probe_me", UINT64_MAX, ELFSYM_CODE, &off),
			 -ERANGE);
	/* File offsets of the wrong kind of segment, or of none. */
	assert_int_equal(elfsym_resolve(fd, "unit_semaphore", 0, ELFSYM_DATA, &sem), 0);
	assert_int_equal(elfsym_resolve(fd, "unit_probe_me", 0, ELFSYM_CODE, &code), 0);
	assert_int_equal(elfsym_resolve(fd, NULL, sem, ELFSYM_CODE, &off), -ERANGE);
	assert_int_equal(elfsym_resolve(fd, NULL, code, ELFSYM_DATA, &off), -ERANGE);
	assert_int_equal(elfsym_resolve(fd, NULL, UINT64_MAX, ELFSYM_CODE, &off), -ERANGE);
	/* Output untouched on errors. */
	assert_int_equal(off, 7);
	close(fd);

	/* Not ELF at all, or an empty file. */
	tfd = mkstemp(text);
	assert_true(tfd >= 0);
	unlink(text);
	assert_int_equal(elfsym_resolve(tfd, "main", 0, ELFSYM_CODE, &off), -ENOEXEC);
	assert_int_equal(write(tfd, "#!/bin/sh\necho hello\n", 21), 21);
	assert_int_equal(elfsym_resolve(tfd, "main", 0, ELFSYM_CODE, &off), -ENOEXEC);
	close(tfd);
}

/* A BPF object is ELF, but relocatable: nothing to probe. */
static void test_relocatable_refused(void **state)
{
	char path[512];
	const char *dir = getenv("BPFBROKER_TEST_BPF_DIR");
	uint64_t off;
	int fd;

	if (!dir)
		skip();
	snprintf(path, sizeof(path), "%s/uprobe.bpf.o", dir);
	fd = open_ro(path);
	assert_int_equal(elfsym_resolve(fd, "count_calls", 0, ELFSYM_CODE, &off), -ENOEXEC);
	close(fd);
}

/* ---- /proc/PID/status and the checks ---- */

static const char status_text[] = "Name:\tapp\n"
				  "Umask:\t0022\n"
				  "State:\tS (sleeping)\n"
				  "Tgid:\t4242\n"
				  "Pid:\t4242\n"
				  "PPid:\t1\n"
				  "Uid:\t1000\t1000\t1000\t1000\n"
				  "Gid:\t100\t100\t100\t100\n"
				  "Groups:\t100 27\n"
				  "CapInh:\t0000000000000000\n"
				  "CapPrm:\t0000000000000000\n"
				  "CapEff:\t0000000000000000\n"
				  "CapBnd:\t000001ffffffffff\n"
				  "CapAmb:\t0000000000000000\n"
				  "NoNewPrivs:\t1\n"
				  "Seccomp:\t0\n";

static void test_status_parse(void **state)
{
	struct procfs_status p = {};
	char *own = NULL;
	size_t size = 0;
	FILE *f;

	assert_int_equal(procfs_status_parse(status_text, &p), 0);
	assert_int_equal(p.pid, 4242);
	assert_int_equal(p.state, 'S');
	assert_int_equal(p.uids[1], 1000);
	assert_int_equal(p.gids[3], 100);
	assert_true(p.no_new_privs);
	assert_int_equal(p.cap_prm, 0);
	/* Our own, as the kernel writes it. */
	f = fopen("/proc/self/status", "re");
	assert_non_null(f);
	assert_true(getdelim(&own, &size, '\0', f) > 0);
	fclose(f);
	assert_int_equal(procfs_status_parse(own, &p), 0);
	assert_int_equal(p.pid, getpid());
	assert_int_equal(p.uids[0], getuid());
	free(own);
	/* A line missing: refused, not guessed. */
	assert_int_equal(procfs_status_parse("Pid:\t1\nState:\tR\n", &p), -EINVAL);
	assert_int_equal(procfs_status_parse("", &p), -EINVAL);
}

static int refusal(const struct procfs_status *p, uid_t owner, const char *want)
{
	static const gid_t groups[] = {27};
	const struct policy_identity caller = {
		.uid = 1000, .gid = 100, .groups = groups, .n_groups = 1};
	char buf[512] = "";
	int k = uprobe_process_refusal(p, owner, &caller, buf, sizeof(buf));

	if (want && !strstr(buf, want))
		fail_msg("refusal \"%s\" lacks \"%s\"", buf, want);
	return k;
}

static void test_refusals(void **state)
{
	struct procfs_status ok, p;

	assert_int_equal(procfs_status_parse(status_text, &ok), 0);
	assert_int_equal(refusal(&ok, 1000, NULL), 0);
	/* Groups the caller is in, supplementary ones too. */
	p = ok;
	p.gids[1] = 27;
	assert_int_equal(refusal(&p, 1000, NULL), 0);

	p = ok;
	p.state = 'Z';
	assert_int_equal(refusal(&p, 0, "has exited"), -ESRCH);
	p = ok;
	p.pid = 1;
	assert_int_equal(refusal(&p, 1000, "init"), -EPERM);
	for (int i = 0; i < 4; i++) {
		static const char *const which[] = {"real uid", "effective uid", "saved uid",
						    "file system uid"};

		p = ok;
		p.uids[i] = 0; /* a setuid-root program, say */
		assert_int_equal(refusal(&p, 1000, which[i]), -EPERM);
	}
	p = ok;
	p.gids[1] = 42; /* setgid */
	assert_int_equal(refusal(&p, 1000, "effective gid that"), -EPERM);
	p = ok;
	p.cap_amb = 1ull << 12;
	assert_int_equal(refusal(&p, 1000, "holds capabilities"), -EPERM);
	p = ok;
	p.no_new_privs = false;
	assert_int_equal(refusal(&p, 1000, "no_new_privs"), -EPERM);
	/* Not dumpable: the kernel gives its /proc files to root. */
	assert_int_equal(refusal(&ok, 0, "not dumpable"), -EPERM);
}

static void test_pidfd_pid(void **state)
{
	int self = (int)syscall(SYS_pidfd_open, getpid(), 0);
	int file = open_ro("/proc/self/exe"), child_fd;
	pid_t pid = 0, child;

	assert_true(self >= 0);
	assert_int_equal(uprobe_pidfd_pid(self, &pid), 0);
	assert_int_equal(pid, getpid());
	assert_int_equal(uprobe_pidfd_pid(file, &pid), -ENOTTY);
	/* Once the process is reaped, its pidfd names nobody. */
	child = fork();
	if (child == 0)
		_exit(0);
	child_fd = (int)syscall(SYS_pidfd_open, child, 0);
	assert_true(child_fd >= 0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(uprobe_pidfd_pid(child_fd, &pid), -ESRCH);
	close(child_fd);
	close(file);
	close(self);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_executable),
		cmocka_unit_test(test_usdt_sites),
		cmocka_unit_test(test_shared_library),
		cmocka_unit_test(test_wrong_places),
		cmocka_unit_test(test_relocatable_refused),
		cmocka_unit_test(test_status_parse),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_pidfd_pid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
