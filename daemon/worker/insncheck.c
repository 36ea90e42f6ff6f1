/* SPDX-License-Identifier: MIT */
#include "insncheck.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <string.h>

#include "common/error.h"

#define INSN_SIZE sizeof(struct bpf_insn)

/* Newer than the 6.1 UAPI headers Debian 12 ships. */
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80 /* sign-extending loads, Linux 6.6 */
#endif
#ifndef BPF_JCOND
#define BPF_JCOND 0xe0 /* may_goto, Linux 6.9 */
#endif

/* The highest register an instruction may name: r10, the frame pointer. */
#define INSN_MAX_REG 10

const char *insn_kind_to_string(enum insn_kind k)
{
	switch (k) {
	case INSN_PLAIN:
		return "an instruction";
	case INSN_CONST64:
		return "a 64-bit constant";
	case INSN_HELPER_CALL:
		return "a helper call";
	case INSN_SUBPROG_CALL:
		return "a subprogram call";
	case INSN_KFUNC_CALL:
		return "a kfunc call";
	case INSN_FUNC_REF:
		return "a callback reference";
	case INSN_MAP_REF:
		return "a map reference";
	case INSN_KERNEL_REF:
		return "a kernel variable or function reference";
	}
	return "an instruction";
}

static bool size_is(uint8_t code, uint8_t size)
{
	return BPF_SIZE(code) == size;
}

/*
 * Opcodes whose meaning the verifier checks by itself, as Linux 6.18 knows
 * them (kernel/bpf/core.c's instruction table, plus BPF_JCOND and the
 * BPF_MEMSX loads). Calls and 64-bit loads are decoded separately.
 */
static bool opcode_is_plain(uint8_t code)
{
	uint8_t op = BPF_OP(code), mode = BPF_MODE(code);

	switch (BPF_CLASS(code)) {
	case BPF_ALU:
	case BPF_ALU64:
		/* ADD through END: the verifier checks sources, immediates and offsets. */
		return op <= BPF_END;
	case BPF_JMP:
		if (op == BPF_JA)
			return BPF_SRC(code) == BPF_K; /* BPF_JA|BPF_X is an indirect jump */
		if (op == BPF_EXIT || op == BPF_JCOND)
			return BPF_SRC(code) == BPF_K;
		if (op == BPF_CALL)
			return false;
		return op <= BPF_JSLE;
	case BPF_JMP32:
		/* Conditional jumps, and BPF_JA (gotol); no call, exit or may_goto here. */
		if (op == BPF_JA)
			return BPF_SRC(code) == BPF_K;
		return op != BPF_CALL && op != BPF_EXIT && op <= BPF_JSLE;
	case BPF_LD:
		/* Legacy packet loads; BPF_IMM|BPF_DW is decoded by itself. */
		return (mode == BPF_ABS || mode == BPF_IND) && !size_is(code, BPF_DW);
	case BPF_LDX:
		return mode == BPF_MEM || (mode == BPF_MEMSX && !size_is(code, BPF_DW));
	case BPF_ST:
		return mode == BPF_MEM;
	case BPF_STX:
		return mode == BPF_MEM || mode == BPF_ATOMIC;
	default:
		return false;
	}
}

static int decode_call(const struct bpf_insn *insn, size_t i, struct insn_decoded *ret,
		       char **error)
{
	if (insn->dst_reg != 0)
		return error_setf(error, -EBADMSG,
				  "instruction %zu is a call with a destination register set", i);
	switch (insn->src_reg) {
	case 0:
		ret->kind = INSN_HELPER_CALL;
		break;
	case BPF_PSEUDO_CALL:
		ret->kind = INSN_SUBPROG_CALL;
		break;
	case BPF_PSEUDO_KFUNC_CALL:
		ret->kind = INSN_KFUNC_CALL;
		break;
	default:
		return error_setf(error, -EBADMSG,
				  "instruction %zu is a call of unknown kind %u (source register)",
				  i, (unsigned)insn->src_reg);
	}
	/* Only a kfunc call uses the offset (to pick a module's BTF). */
	if (insn->off != 0 && ret->kind != INSN_KFUNC_CALL)
		return error_setf(error, -EBADMSG, "instruction %zu is %s with an offset set", i,
				  insn_kind_to_string(ret->kind));
	return 0;
}

static int decode_ld_imm64(const struct bpf_insn *insn, const struct bpf_insn *next, size_t i,
			   struct insn_decoded *ret, char **error)
{
	if (next->code || next->dst_reg || next->src_reg || next->off)
		return error_setf(error, -EBADMSG,
				  "instruction %zu is the second half of a 64-bit load and must "
				  "hold nothing but the immediate",
				  i + 1);
	if (insn->off != 0 || insn->dst_reg > INSN_MAX_REG)
		return error_setf(error, -EBADMSG,
				  "instruction %zu is a 64-bit load with reserved fields set", i);
	switch (insn->src_reg) {
	case 0:
		ret->kind = INSN_CONST64;
		break;
	case BPF_PSEUDO_MAP_FD:
	case BPF_PSEUDO_MAP_VALUE:
	case BPF_PSEUDO_MAP_IDX:
	case BPF_PSEUDO_MAP_IDX_VALUE:
		ret->kind = INSN_MAP_REF;
		break;
	case BPF_PSEUDO_BTF_ID:
		ret->kind = INSN_KERNEL_REF;
		break;
	case BPF_PSEUDO_FUNC:
		ret->kind = INSN_FUNC_REF;
		break;
	default:
		return error_setf(error, -EBADMSG,
				  "instruction %zu is a 64-bit load of unknown kind %u (source "
				  "register)",
				  i, (unsigned)insn->src_reg);
	}
	ret->width = 2;
	ret->imm2 = next->imm;
	return 0;
}

int insn_decode(const void *insns, size_t n, size_t i, struct insn_decoded *ret, char **error)
{
	const unsigned char *p = insns;
	struct insn_decoded d = {.kind = INSN_PLAIN, .width = 1};
	struct bpf_insn insn, next;
	int r;

	if (i >= n)
		return error_setf(error, -EBADMSG, "instruction %zu is past the end", i);
	memcpy(&insn, p + i * INSN_SIZE, INSN_SIZE);
	d.src_reg = insn.src_reg;
	d.imm = insn.imm;
	d.off = insn.off;
	if (insn.code == (BPF_LD | BPF_IMM | BPF_DW)) {
		if (i + 1 >= n)
			return error_setf(error, -EBADMSG,
					  "instruction %zu is a 64-bit load whose second half is "
					  "missing",
					  i);
		memcpy(&next, p + (i + 1) * INSN_SIZE, INSN_SIZE);
		r = decode_ld_imm64(&insn, &next, i, &d, error);
	} else if (insn.code == (BPF_JMP | BPF_CALL | BPF_K)) {
		r = decode_call(&insn, i, &d, error);
	} else if (BPF_OP(insn.code) == BPF_CALL &&
		   (BPF_CLASS(insn.code) == BPF_JMP || BPF_CLASS(insn.code) == BPF_JMP32)) {
		/* Refused by the kernel today; a call not read as one must never load. */
		r = error_setf(error, -EBADMSG,
			       "instruction %zu is a call encoded as opcode 0x%02x; only BPF_JMP | "
			       "BPF_CALL | BPF_K calls are allowed",
			       i, (unsigned)insn.code);
	} else if (!opcode_is_plain(insn.code)) {
		r = error_setf(error, -EBADMSG,
			       "instruction %zu has opcode 0x%02x, which the broker does not know",
			       i, (unsigned)insn.code);
	} else if (insn.dst_reg > INSN_MAX_REG || insn.src_reg > INSN_MAX_REG) {
		r = error_setf(error, -EBADMSG, "instruction %zu names a register above r10", i);
	} else {
		r = 0;
	}
	if (r < 0)
		return r;
	*ret = d;
	return 0;
}
