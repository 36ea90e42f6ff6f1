/* SPDX-License-Identifier: MIT */
/*
 * A process to probe, for the uprobe tests. Commands, one a line on stdin,
 * each answered with one line on stdout:
 *   call N   call uprobe_target_work() N times      -> "called N"
 *   sema     the USDT-style semaphore's value       -> "sema V"
 *   usdt N   pass the USDT probe site N times       -> "passed N"
 *   nodump   prctl(PR_SET_DUMPABLE, 0), as ssh-agent does  -> "ok"
 *   exit     (or end of input) exit 0
 * It starts by writing "ready PID".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "tests/usdt.h"

/* A USDT semaphore, as <sys/sdt.h> declares them: the kernel counts it up per probe. */
volatile unsigned short uprobe_target_semaphore __attribute__((section(".probes"), used));

/*
 * A USDT probe site with that semaphore: uprobe_target_usdt() starts with
 * it. Whoever probes that place with another semaphore, or none, makes the
 * kernel refuse the real USDT users' probes there.
 */
void uprobe_target_usdt(void);
USDT_SITE_FUNCTION(uprobe_target_usdt, uprobe_target_semaphore)

/* The probed function: not inlined, not folded away. */
int uprobe_target_work(int x);
__attribute__((noinline, used)) int uprobe_target_work(int x)
{
	__asm__ volatile("" : "+r"(x)::"memory");
	return x + 1;
}

int main(void)
{
	char line[64];
	int sum = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d\n", (int)getpid());
	while (fgets(line, sizeof(line), stdin)) {
		if (strncmp(line, "call ", 5) == 0) {
			int n = atoi(line + 5);

			for (int i = 0; i < n; i++)
				sum += uprobe_target_work(i);
			printf("called %d\n", n);
		} else if (strncmp(line, "usdt ", 5) == 0) {
			int n = atoi(line + 5);

			for (int i = 0; i < n; i++)
				uprobe_target_usdt();
			printf("passed %d\n", n);
		} else if (strcmp(line, "sema\n") == 0) {
			printf("sema %u\n", (unsigned)uprobe_target_semaphore);
		} else if (strcmp(line, "nodump\n") == 0) {
			printf("%s\n", prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 ? "ok" : "failed");
		} else if (strcmp(line, "exit\n") == 0) {
			break;
		} else {
			printf("unknown command\n");
		}
	}
	return sum == -1;
}
