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

/* A USDT semaphore, as <sys/sdt.h> declares them: the kernel counts it up per probe. */
volatile unsigned short uprobe_target_semaphore __attribute__((section(".probes"), used));

/*
 * A USDT probe site, as <sys/sdt.h> makes one (which this machine need not
 * have): a nop at the start of uprobe_target_usdt(), described by a
 * .note.stapsdt note naming the semaphore above. Whoever probes that place
 * with another semaphore, or none, makes the kernel refuse the real USDT
 * users' probes there.
 */
void uprobe_target_usdt(void);
__asm__(".pushsection .text\n"
	".globl uprobe_target_usdt\n"
	".type uprobe_target_usdt, @function\n"
	"uprobe_target_usdt:\n"
	"990: nop\n"
	"ret\n"
	".size uprobe_target_usdt, . - uprobe_target_usdt\n"
	".popsection\n"
	".pushsection .note.stapsdt, \"\", \"note\"\n"
	".balign 4\n"
	".4byte 992f - 991f, 994f - 993f, 3\n"
	"991: .asciz \"stapsdt\"\n"
	"992: .balign 4\n"
	"993: .8byte 990b\n"
	".8byte _.stapsdt.base\n"
	".8byte uprobe_target_semaphore\n"
	".asciz \"bpfbroker_test\"\n"
	".asciz \"site\"\n"
	".asciz \"\"\n"
	"994: .balign 4\n"
	".popsection\n"
	".pushsection .stapsdt.base, \"aG\", @progbits, .stapsdt.base, comdat\n"
	".weak _.stapsdt.base\n"
	".hidden _.stapsdt.base\n"
	"_.stapsdt.base: .space 1\n"
	".size _.stapsdt.base, 1\n"
	".popsection\n");

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
