/* SPDX-License-Identifier: MIT */
/* Mapping an mmapable array the broker handed out: its values without a system call per read. */
#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libbpfbroker.h"

int bpfbroker_map_mmap(const struct bpfbroker_map *map, void **ret_ptr, size_t *ret_len)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t len;
	int prot;
	void *p;

	if (!map || !ret_ptr || !ret_len || page <= 0)
		return -EINVAL;
	/* array_map_mmap(): only plain arrays created BPF_F_MMAPABLE. */
	if (!map->type || strcmp(map->type, "array") != 0 || !(map->map_flags & BPF_F_MMAPABLE))
		return -EINVAL;
	switch (map->access) {
	case BPFBROKER_ACCESS_RW:
		/* A frozen map maps only read-only, whatever the fd. */
		prot = map->frozen ? PROT_READ : PROT_READ | PROT_WRITE;
		break;
	case BPFBROKER_ACCESS_RO:
		/*
		 * mmap() makes a mapping of a file opened without write access
		 * private, and the kernel maps BPF maps only shared: a
		 * BPF_F_RDONLY fd maps nothing. The broker hands out ro of a
		 * frozen map as an O_RDWR fd, which writes nothing.
		 */
		if (!map->frozen)
			return -EACCES;
		prot = PROT_READ;
		break;
	default:
		return -EACCES; /* wo: mapping needs read access; none: no fd */
	}
	if (map->fd < 0)
		return -EBADF;
	/* What the kernel maps: max_entries values of round_up(value_size, 8), whole pages. */
	len = (((uint64_t)map->value_size + 7) & ~(uint64_t)7) * map->max_entries;
	len = (len + (uint64_t)page - 1) & ~((uint64_t)page - 1);
	if (len == 0)
		return -EINVAL;
	if (len > SIZE_MAX)
		return -E2BIG;
	p = mmap(NULL, (size_t)len, prot, MAP_SHARED, map->fd, 0);
	if (p == MAP_FAILED)
		return errno > 0 ? -errno : -EIO;
	*ret_ptr = p;
	*ret_len = (size_t)len;
	return 0;
}
