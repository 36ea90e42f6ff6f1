/* SPDX-License-Identifier: MIT */
/*
 * Opening configuration that only root could have written, as sshd's
 * StrictModes checks: every directory passed through, every symbolic link
 * followed and the file itself must be root's (or the euid's, when the
 * process does not run as root, such as a test or --check-config run by a
 * user), and no directory or file writable by group or others. A directory
 * with the sticky bit (such as /tmp) may be writable by others on the way,
 * when the entry taken from it is root's. Symbolic links are resolved here,
 * component by component, so that the directories on a link's way count as
 * much as those on the path given.
 */
#pragma once

/*
 * Open directory path (O_RDONLY|O_DIRECTORY). Returns the fd, or a negative
 * errno with *error naming path and why ("/etc/x/policy.d: writable by group
 * (mode 0775): the broker reads only root's configuration"). -ENOENT when it
 * (or a directory on its way) does not exist.
 */
int trust_open_dir(const char *path, char **error);

/*
 * Open dir/name for reading: a regular file. Returns the fd, or a negative
 * errno with *error naming name and why ("50-x.json: owned by uid 1000, not
 * root: the broker reads only root's configuration"). Nothing but a regular
 * file is opened for reading (a FIFO or device is refused before open()).
 */
int trust_open_file(const char *dir, const char *name, char **error);
