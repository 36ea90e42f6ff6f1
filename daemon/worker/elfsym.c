/* SPDX-License-Identifier: MIT */
#include "elfsym.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <string.h>

#include "common/macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(Elf *, elf_end);
#define _cleanup_elf_ _cleanup_(elf_endp)

/* Symbols found so far by one name: the first, and the first global one. */
struct candidates {
	bool any, mixed; /* mixed: some at another address than the first */
	GElf_Sym first;
	bool any_global, global_mixed;
	GElf_Sym global;
};

static void candidates_add(struct candidates *c, const GElf_Sym *s)
{
	if (!c->any) {
		c->any = true;
		c->first = *s;
	} else if (s->st_value != c->first.st_value) {
		c->mixed = true;
	}
	if (GELF_ST_BIND(s->st_info) != STB_GLOBAL)
		return;
	if (!c->any_global) {
		c->any_global = true;
		c->global = *s;
	} else if (s->st_value != c->global.st_value) {
		c->global_mixed = true;
	}
}

/*
 * One name may have several symbols: aliases at one address (fine), local
 * statics of different files (then the one global wins, as a linker would
 * pick it), or a real ambiguity the caller must settle with an offset.
 */
static int candidates_pick(const struct candidates *c, GElf_Sym *ret)
{
	if (!c->any)
		return -ENOENT;
	if (!c->mixed)
		*ret = c->first;
	else if (c->any_global && !c->global_mixed)
		*ret = c->global;
	else
		return -ENOTUNIQ;
	return 0;
}

static bool sym_type_fits(const GElf_Sym *s, enum elfsym_kind kind)
{
	int t = GELF_ST_TYPE(s->st_info);

	/* NOTYPE: labels of hand-written assembly, and some linker-made symbols. */
	if (kind == ELFSYM_CODE)
		return t == STT_FUNC || t == STT_NOTYPE;
	return t == STT_OBJECT || t == STT_NOTYPE;
}

/* Every table of one type (SHT_SYMTAB or SHT_DYNSYM). */
static int symbols_search(Elf *elf, Elf64_Word type, const char *name, enum elfsym_kind kind,
			  struct candidates *c)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh))
			return -ENOEXEC;
		if (sh.sh_type != type || sh.sh_entsize == 0)
			continue;
		if (sh.sh_size > ELFSYM_MAX_SYMTAB_BYTES)
			return -EFBIG;
		data = elf_getdata(scn, NULL);
		if (!data)
			return -EIO;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *n;
			GElf_Sym s;

			if (!gelf_getsym(data, (int)i, &s))
				break;
			if (s.st_shndx == SHN_UNDEF || s.st_name == 0 || !sym_type_fits(&s, kind))
				continue;
			n = elf_strptr(elf, sh.sh_link, s.st_name);
			if (n && strcmp(n, name) == 0)
				candidates_add(c, &s);
		}
	}
	return 0;
}

/* .symtab has every symbol; .dynsym (all a stripped file keeps) only exported ones. */
static int symbol_find(Elf *elf, const char *name, enum elfsym_kind kind, GElf_Sym *ret)
{
	static const Elf64_Word tables[] = {SHT_SYMTAB, SHT_DYNSYM};

	for (size_t t = 0; t < ARRAY_SIZE(tables); t++) {
		struct candidates c = {};
		int k = symbols_search(elf, tables[t], name, kind, &c);

		if (k < 0)
			return k;
		k = candidates_pick(&c, ret);
		if (k != -ENOENT)
			return k;
	}
	return -ENOENT;
}

static bool segment_fits(const GElf_Phdr *p, enum elfsym_kind kind)
{
	return p->p_type == PT_LOAD && (p->p_flags & (kind == ELFSYM_CODE ? PF_X : PF_W));
}

/*
 * addr is a symbol's address (is_addr) or a file offset: either way it must
 * lie in the file bytes of a loadable segment of the kind, since the kernel
 * finds uprobes and semaphores through the file mapping of that segment.
 */
static int segment_offset(Elf *elf, uint64_t addr, bool is_addr, enum elfsym_kind kind,
			  uint64_t *ret)
{
	size_t n = 0;

	if (elf_getphdrnum(elf, &n) < 0)
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr p;
		uint64_t start;

		if (!gelf_getphdr(elf, (int)i, &p))
			return -ENOEXEC;
		if (!segment_fits(&p, kind))
			continue;
		start = is_addr ? p.p_vaddr : p.p_offset;
		if (addr < start || addr - start >= p.p_filesz)
			continue;
		*ret = addr - start + p.p_offset;
		return 0;
	}
	return -ERANGE;
}

/* An ELF executable or shared object read from fd, and its header; or -ENOEXEC. */
static int elf_open(int fd, Elf **ret, GElf_Ehdr *ret_eh)
{
	Elf *elf;
	GElf_Ehdr eh;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EIO;
	/* ELF_C_READ reads what is asked for with pread; a mapping would fault if the file
	 * shrank. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		if (elf)
			elf_end(elf);
		return -ENOEXEC;
	}
	*ret = elf;
	*ret_eh = eh;
	return 0;
}

int elfsym_resolve(int fd, const char *symbol, uint64_t add, enum elfsym_kind kind,
		   uint64_t *ret_offset)
{
	_cleanup_elf_ Elf *elf = NULL;
	GElf_Ehdr eh;
	GElf_Sym s;
	int k;

	k = elf_open(fd, &elf, &eh);
	if (k < 0)
		return k;
	if (!symbol)
		return segment_offset(elf, add, false, kind, ret_offset);
	k = symbol_find(elf, symbol, kind, &s);
	if (k < 0)
		return k;
	if (add > 0 && s.st_size > 0 && add >= s.st_size)
		return -ERANGE;
	if (s.st_value > UINT64_MAX - add)
		return -ERANGE;
	return segment_offset(elf, s.st_value + add, true, kind, ret_offset);
}

/* ---- USDT probe sites ---- */

#define NT_STAPSDT 3

/* A section by name, or NULL. */
static Elf_Scn *section_by_name(Elf *elf, const char *name, GElf_Shdr *ret)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, ret))
			return NULL;
		n = elf_strptr(elf, shstrndx, ret->sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

/* An address of the note's description, in the file's class and byte order. */
static uint64_t note_addr(const uint8_t *p, bool is64, bool swap)
{
	uint64_t v = 0;

	if (is64) {
		uint64_t x;

		memcpy(&x, p, sizeof(x));
		v = swap ? __builtin_bswap64(x) : x;
	} else {
		uint32_t x;

		memcpy(&x, p, sizeof(x));
		v = swap ? __builtin_bswap32(x) : x;
	}
	return v;
}

int elfsym_usdt_semaphore_at(int fd, uint64_t offset)
{
	_cleanup_elf_ Elf *elf = NULL;
	GElf_Shdr sh, base_sh;
	Elf_Scn *scn;
	Elf_Data *data;
	GElf_Ehdr eh;
	GElf_Nhdr nh;
	size_t pos = 0, name_off, desc_off, asize;
	uint64_t base_addr = 0;
	bool is64, swap;
	int k;

	k = elf_open(fd, &elf, &eh);
	if (k < 0)
		return k;
	is64 = eh.e_ident[EI_CLASS] == ELFCLASS64;
	swap = eh.e_ident[EI_DATA] !=
	       (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB);
	asize = is64 ? 8 : 4;
	scn = section_by_name(elf, ".note.stapsdt", &sh);
	if (!scn || sh.sh_type != SHT_NOTE)
		return 0;
	if (sh.sh_size > ELFSYM_MAX_SYMTAB_BYTES)
		return -EFBIG;
	/* Prelinking moves the code but not the notes: .stapsdt.base says by how much. */
	if (section_by_name(elf, ".stapsdt.base", &base_sh))
		base_addr = base_sh.sh_addr;
	data = elf_getdata(scn, NULL);
	if (!data)
		return -EIO;
	while ((pos = gelf_getnote(data, pos, &nh, &name_off, &desc_off)) > 0) {
		const uint8_t *desc = (const uint8_t *)data->d_buf + desc_off;
		uint64_t pc, note_base, semaphore, at;

		if (nh.n_type != NT_STAPSDT || nh.n_namesz != sizeof("stapsdt") ||
		    memcmp((const char *)data->d_buf + name_off, "stapsdt", sizeof("stapsdt")) !=
			    0 ||
		    nh.n_descsz < 3 * asize)
			continue;
		/* The probe's address, .stapsdt.base's address when linked, the semaphore's. */
		pc = note_addr(desc, is64, swap);
		note_base = note_addr(desc + asize, is64, swap);
		semaphore = note_addr(desc + 2 * asize, is64, swap);
		if (semaphore == 0)
			continue;
		if (base_addr && note_base)
			pc += base_addr - note_base;
		if (segment_offset(elf, pc, true, ELFSYM_CODE, &at) == 0 && at == offset)
			return 1;
	}
	return 0;
}
