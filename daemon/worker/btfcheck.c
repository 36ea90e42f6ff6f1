/* SPDX-License-Identifier: MIT */
#include "btfcheck.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <bpf/libbpf_version.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>

static bool name_ok(const struct btf *btf, __u32 off)
{
	return btf__name_by_offset(btf, off) != NULL;
}

static bool type_ok(const struct btf *btf, __u32 id)
{
	return id < btf__type_cnt(btf);
}

/* What libbpf 1.3's btf_validate_type() checks: names and referenced type ids. */
static bool btf_is_sane(const struct btf *btf)
{
	for (__u32 id = 1; id < btf__type_cnt(btf); id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		__u16 vlen;

		if (!t || !name_ok(btf, t->name_off))
			return false;
		vlen = btf_vlen(t);
		switch (btf_kind(t)) {
		case BTF_KIND_PTR:
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
		case BTF_KIND_VAR:
		case BTF_KIND_DECL_TAG:
		case BTF_KIND_FUNC:
			if (!type_ok(btf, t->type))
				return false;
			if (btf_kind(t) == BTF_KIND_FUNC &&
			    (!btf__type_by_id(btf, t->type) ||
			     !btf_is_func_proto(btf__type_by_id(btf, t->type))))
				return false;
			break;
		case BTF_KIND_ARRAY:
			if (!type_ok(btf, btf_array(t)->type) ||
			    !type_ok(btf, btf_array(t)->index_type))
				return false;
			break;
		case BTF_KIND_STRUCT:
		case BTF_KIND_UNION:
			for (__u16 i = 0; i < vlen; i++)
				if (!name_ok(btf, btf_members(t)[i].name_off) ||
				    !type_ok(btf, btf_members(t)[i].type))
					return false;
			break;
		case BTF_KIND_ENUM:
			for (__u16 i = 0; i < vlen; i++)
				if (!name_ok(btf, btf_enum(t)[i].name_off))
					return false;
			break;
		case BTF_KIND_ENUM64:
			for (__u16 i = 0; i < vlen; i++)
				if (!name_ok(btf, btf_enum64(t)[i].name_off))
					return false;
			break;
		case BTF_KIND_FUNC_PROTO:
			if (!type_ok(btf, t->type))
				return false;
			for (__u16 i = 0; i < vlen; i++)
				if (!name_ok(btf, btf_params(t)[i].name_off) ||
				    !type_ok(btf, btf_params(t)[i].type))
					return false;
			break;
		case BTF_KIND_DATASEC:
			for (__u16 i = 0; i < vlen; i++)
				if (!type_ok(btf, btf_var_secinfos(t)[i].type))
					return false;
			break;
		default:
			break;
		}
	}
	return true;
}

/*
 * Section headers libbpf 1.1.2 takes on trust (found by fuzzing): every
 * section with contents lies inside the file, and its sh_link names a
 * section that exists.
 */
static bool sections_sane(Elf *elf, size_t size)
{
	Elf_Scn *scn = NULL;
	size_t n_sections;

	if (elf_getshdrnum(elf, &n_sections) < 0)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return false;
		if (sh.sh_link >= n_sections)
			return false;
		if (sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset))
			return false;
	}
	return true;
}

/* libbpf 1.1's STRUCT_OPS_SEC, and the ".struct_ops.link" of later versions. */
static bool is_struct_ops_map_section(const char *name)
{
	return strcmp(name, ".struct_ops") == 0 || strncmp(name, ".struct_ops.", 12) == 0;
}

/* SEC("struct_ops/...") and SEC("struct_ops.s/...") programs. */
static bool is_struct_ops_prog_section(const GElf_Shdr *sh, const char *name)
{
	return (sh->sh_flags & SHF_EXECINSTR) && strncmp(name, "struct_ops", 10) == 0 &&
	       (name[10] == '/' || strncmp(name + 10, ".s/", 3) == 0);
}

bool btfcheck_object(const void *image, size_t size, const char **reason)
{
	bool check_btf = !(LIBBPF_MAJOR_VERSION > 1 ||
			   (LIBBPF_MAJOR_VERSION == 1 && LIBBPF_MINOR_VERSION >= 3));
	bool ok = true, struct_ops_map = false, struct_ops_prog = false;
	const char *why = NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		*reason = "libelf is unusable";
		return false;
	}
	elf = elf_memory((char *)image, size);
	if (!elf)
		return true; /* libbpf fails the same way */
	if (check_btf && !sections_sane(elf, size)) {
		elf_end(elf);
		*reason = "its section headers refer to data or sections that do not exist";
		return false;
	}
	if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;
			Elf_Data *data;
			struct btf *btf;

			if (!gelf_getshdr(scn, &sh))
				continue;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (!name)
				continue;
			struct_ops_map = struct_ops_map || is_struct_ops_map_section(name);
			struct_ops_prog = struct_ops_prog || is_struct_ops_prog_section(&sh, name);
			if (!check_btf || !ok || strcmp(name, ".BTF") != 0)
				continue;
			data = elf_getdata(scn, NULL);
			if (!data || !data->d_buf)
				continue;
			btf = btf__new(data->d_buf, data->d_size);
			if (btf) {
				ok = btf_is_sane(btf);
				btf__free(btf);
			}
			if (!ok)
				why = "its BTF refers to names or types that do not exist";
		}
	}
	elf_end(elf);
	if (ok && struct_ops_map && !struct_ops_prog) {
		ok = false;
		why = "it declares a struct_ops map but no struct_ops program (libbpf 1.1 "
		      "crashes on such objects, and the map would register nothing usable)";
	}
	if (!ok)
		*reason = why;
	return ok;
}
