/* SPDX-License-Identifier: MIT */
/*
 * BTF checks before libbpf sees an object. libbpf before 1.3 trusts the BTF
 * it is given: a name offset outside the string section or a type id past the
 * last type makes bpf_object__open_mem() dereference NULL (found by
 * fuzzing). Workers are single-use, so such a crash costs one request, but a
 * root process should refuse hostile input with an error, not crash on it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * Are the object's section headers in bounds (contents inside the file,
 * links to sections that exist), and does its .BTF section (if any) pass the
 * checks libbpf 1.3 added (names and referenced type ids in range)? True when libbpf is new enough
 * to check itself, or the image isn't an ELF libbpf could open anyway.
 */
bool btfcheck_object(const void *image, size_t size);
