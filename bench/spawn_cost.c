/* SPDX-License-Identifier: MIT */
/*
 * spawn-cost: what a new worker costs the spawner, by way of making it: a
 * fork (the child exits at once) against a fork and an exec of an executable
 * that exits at once (bpfbroker-worker with no arguments: ld.so, its
 * libraries bound at startup, its option parsing). Each waited for, N times.
 * Usage: spawn-cost N EXE [ARGS...]. Linked with the workers' libraries, so
 * that the forking image is about the spawner's size.
 */
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/capability.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static double run(int n, char **argv)
{
	double start = now_us();

	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			exit(EXIT_FAILURE);
		}
		if (pid == 0) {
			if (argv) {
				int null = open("/dev/null", O_WRONLY);

				dup2(null, STDERR_FILENO);
				execv(argv[0], argv);
			}
			_exit(0);
		}
		waitpid(pid, NULL, 0);
	}
	return (now_us() - start) / n;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0;

	if (n <= 0) {
		fprintf(stderr, "usage: spawn-cost N EXE [ARGS...]\n");
		return EXIT_FAILURE;
	}
	/* The libraries mapped and touched, as in the spawner. */
	(void)libbpf_num_possible_cpus();
	json_object_put(json_object_new_object());
	(void)elf_version(EV_CURRENT);
	cap_free(cap_get_proc());
	run(n / 10 + 1, NULL); /* warm */
	printf("fork + exit + wait:        %8.1f us\n", run(n, NULL));
	printf("fork + exec + exit + wait: %8.1f us  (%s)\n", run(n, argv + 2), argv[2]);
	return EXIT_SUCCESS;
}
