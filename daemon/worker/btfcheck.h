/* SPDX-License-Identifier: MIT */
/*
 * BTF checks before libbpf sees an object. libbpf before 1.3 trusts the BTF
 * it is given: a name offset outside the string section or a type id past the
 * last type makes bpf_object__open_mem() dereference NULL (found by
 * fuzzing). A crash ends only its worker and costs one request, but a
 * root process should refuse hostile input with an error, not crash on it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * Known crash inputs of libbpf 1.1.2, refused before libbpf sees them:
 *  - section headers out of bounds (contents outside the file, links to
 *    sections that don't exist), and a .BTF section failing the checks
 *    libbpf 1.3 added (names and referenced type ids in range): skipped
 *    when libbpf is new enough to check itself;
 *  - a struct_ops map (".struct_ops" section) without a struct_ops program:
 *    libbpf then loads no kernel BTF and dereferences NULL describing the
 *    map. Such a map would register nothing usable anyway (its callbacks
 *    are the programs), so it is refused with every libbpf.
 * True when the image passes, or isn't an ELF libbpf could open anyway;
 * false with *reason (static text) otherwise.
 */
bool btfcheck_object(const void *image, size_t size, const char **reason);
