/* SPDX-License-Identifier: MIT */
/* A text file under /proc read whole through an open fd, from its start, with a bound. */
#pragma once

/* A status with a very long Groups: line still fits; what the checks need comes anyway. */
#define PROCFS_MAX_BYTES (1024u * 1024)

/*
 * The text of the file open at fd from its start (fresh text at every read: a /proc file
 * reread through the same fd shows the state now), NUL-terminated, malloc'ed. -EFBIG over
 * PROCFS_MAX_BYTES, -ENOMEM, or read's errno (ESRCH once a /proc/PID file's process is gone).
 */
int procfs_read(int fd, char **ret);
