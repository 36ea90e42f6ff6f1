/* SPDX-License-Identifier: MIT */
/*
 * The instruction allow-list: what one BPF instruction means, decided in one
 * place for every path by which instructions reach the kernel (a raw
 * instruction load, an ELF object's code before libbpf relocates it, and
 * libbpf's relocated output, checked again after loading).
 *
 * Only a few instructions mean more than the verifier checks by itself:
 * calls (of helpers, subprograms, kfuncs) and 64-bit loads whose source
 * register makes them a reference (to a map, a subprogram, or a kernel
 * variable or function). Everything the broker decides rests on reading
 * those exactly as the kernel does, so every opcode must be one this table
 * knows (an opcode a newer kernel gives a new meaning is refused, not
 * guessed), every pseudo source one it names, and reserved fields of calls
 * and 64-bit loads zero. Run only in workers; pure, no allocation.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

enum insn_kind {
	INSN_PLAIN, /* arithmetic, memory access, jumps, exit: the verifier checks it alone */
	INSN_CONST64, /* 64-bit load of a plain constant (source register 0) */
	INSN_HELPER_CALL, /* imm: the helper id */
	INSN_SUBPROG_CALL, /* BPF_PSEUDO_CALL: imm is relative to the next instruction */
	INSN_KFUNC_CALL, /* BPF_PSEUDO_KFUNC_CALL: imm a BTF id, off an fd-array index */
	INSN_FUNC_REF, /* 64-bit load of BPF_PSEUDO_FUNC: a callback, imm relative */
	INSN_MAP_REF, /* 64-bit load of BPF_PSEUDO_MAP_FD, _VALUE, _IDX or _IDX_VALUE */
	INSN_KERNEL_REF, /* 64-bit load of BPF_PSEUDO_BTF_ID: a kernel variable or function */
};

struct insn_decoded {
	enum insn_kind kind;
	unsigned width; /* instruction slots it takes: 2 for a 64-bit load, else 1 */
	uint8_t src_reg; /* the pseudo source of a call or 64-bit load */
	int32_t imm;
	int16_t off;
	int32_t imm2; /* a 64-bit load's second half */
};

/*
 * Decode instruction i of n (struct bpf_insn, possibly unaligned). -EBADMSG
 * with *error (a sentence naming instruction i, counted from 0) for anything
 * outside the allow-list; 0 and *ret otherwise.
 */
int insn_decode(const void *insns, size_t n, size_t i, struct insn_decoded *ret, char **error);

/* "a helper call", "a map reference", ... for messages. */
const char *insn_kind_to_string(enum insn_kind k);
