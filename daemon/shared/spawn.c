/* SPDX-License-Identifier: MIT */
/* The spawner's answer for each worker it forks, as the event loop reads it (spawn.h). */
#include "spawn.h"

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "common/macro.h"

int spawn_send_worker(int sock, pid_t pid, int worker_sock, int pidfd)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))] = {};
	int32_t pid32 = pid;
	struct iovec iov = {.iov_base = &pid32, .iov_len = sizeof(pid32)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cm;

	if (pid > 0) {
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
		memcpy(CMSG_DATA(cm), (int[]){worker_sock, pidfd}, 2 * sizeof(int));
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? negative_errno() : 0;
}
