/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bpf-vm: a classic BPF interpreter, seccomp flavour, for the unit tests of the seccomp programs
 * (test-seccomp.c, test-seccomp-log.c): bpf_run executes a program on a struct seccomp_data and
 * refuses what seccomp would not load; EXPECT checks one call's action (a TAP line).
 */
#pragma once

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"

#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif
#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#endif

/* ---- a classic BPF interpreter, seccomp flavour ------------------------------------------ */

struct bpf_outcome {
	int ok;	      /* 0: the program is malformed for seccomp (err says why) */
	uint32_t ret; /* the action */
	char err[160];
};

static struct bpf_outcome bpf_fail(unsigned pc, uint16_t code, const char *why)
{
	struct bpf_outcome o = { 0 };

	snprintf(o.err, sizeof(o.err), "insn %u (code 0x%04x): %s", pc, code, why);
	return o;
}

static int bpf_alu(uint16_t op, uint32_t *a, uint32_t v)
{
	switch (op) {
	case BPF_ADD:
		*a += v;
		return 0;
	case BPF_SUB:
		*a -= v;
		return 0;
	case BPF_MUL:
		*a *= v;
		return 0;
	case BPF_DIV:
		if (!v)
			return -1;
		*a /= v;
		return 0;
	case BPF_MOD:
		if (!v)
			return -1;
		*a %= v;
		return 0;
	case BPF_OR:
		*a |= v;
		return 0;
	case BPF_AND:
		*a &= v;
		return 0;
	case BPF_XOR:
		*a ^= v;
		return 0;
	case BPF_LSH:
		*a = v < 32 ? *a << v : 0;
		return 0;
	case BPF_RSH:
		*a = v < 32 ? *a >> v : 0;
		return 0;
	case BPF_NEG:
		*a = -*a;
		return 0;
	}
	return -1;
}

/* The machine state of bpf_run. */
struct bpf_vm {
	const uint8_t *data; /* the struct seccomp_data */
	unsigned len;	     /* the program's length */
	uint32_t A, X, M[BPF_MEMWORDS];
};

/* LD / LDX: NULL, or why the instruction is not valid for seccomp. */
static const char *bpf_load(struct bpf_vm *vm, const struct sock_filter *f)
{
	uint16_t cls = BPF_CLASS(f->code);
	uint32_t *dst = cls == BPF_LD ? &vm->A : &vm->X;

	switch (f->code & ~BPF_CLASS(0xffff)) {
	case BPF_W | BPF_ABS:
		if (cls != BPF_LD)
			return "LDX ABS";
		/* The kernel's seccomp checker: aligned 32-bit loads inside struct seccomp_data
		 * only. */
		if (f->k % 4 || f->k + 4 > sizeof(struct seccomp_data))
			return "unaligned/out-of-range load";
		memcpy(dst, vm->data + f->k, 4);
		return NULL;
	case BPF_W | BPF_LEN:
		*dst = sizeof(struct seccomp_data);
		return NULL;
	case BPF_IMM:
		*dst = f->k;
		return NULL;
	case BPF_MEM:
		if (f->k >= BPF_MEMWORDS)
			return "scratch index";
		*dst = vm->M[f->k];
		return NULL;
	default:
		return "unknown load (seccomp allows W ABS only)";
	}
}

/* JMP at *@pc: moves *@pc to the instruction before the target; NULL, or why not valid. */
static const char *bpf_jump(const struct bpf_vm *vm, const struct sock_filter *f, unsigned *pc)
{
	uint32_t v = BPF_SRC(f->code) == BPF_X ? vm->X : f->k;
	int cond;

	if (BPF_OP(f->code) == BPF_JA) {
		if ((uint64_t)*pc + 1 + f->k >= vm->len)
			return "jump out of the program";
		*pc += f->k;
		return NULL;
	}
	switch (BPF_OP(f->code)) {
	case BPF_JEQ:
		cond = vm->A == v;
		break;
	case BPF_JGT:
		cond = vm->A > v;
		break;
	case BPF_JGE:
		cond = vm->A >= v;
		break;
	case BPF_JSET:
		cond = (vm->A & v) != 0;
		break;
	default:
		return "unknown jump";
	}
	unsigned off = cond ? f->jt : f->jf;
	if (*pc + 1 + off >= vm->len)
		return "branch out of the program";
	*pc += off;
	return NULL;
}

static struct bpf_outcome bpf_ret(const struct bpf_vm *vm, unsigned pc, const struct sock_filter *f)
{
	struct bpf_outcome o = { .ok = 1 };

	if (BPF_RVAL(f->code) == BPF_K)
		o.ret = f->k;
	else if (BPF_RVAL(f->code) == BPF_A)
		o.ret = vm->A;
	else
		return bpf_fail(pc, f->code, "RET X is not valid");
	return o;
}

/* ST, STX, ALU and MISC: NULL, or why the instruction is not valid. */
static const char *bpf_other(struct bpf_vm *vm, const struct sock_filter *f)
{
	uint16_t cls = BPF_CLASS(f->code);
	uint32_t v = BPF_SRC(f->code) == BPF_X ? vm->X : f->k;

	switch (cls) {
	case BPF_ST:
	case BPF_STX:
		if (f->code != cls || f->k >= BPF_MEMWORDS)
			return "bad store";
		vm->M[f->k] = cls == BPF_ST ? vm->A : vm->X;
		return NULL;
	case BPF_ALU:
		if (bpf_alu(BPF_OP(f->code), &vm->A, v) < 0)
			return "unknown ALU op or division by zero";
		return NULL;
	case BPF_MISC:
		if (BPF_MISCOP(f->code) == BPF_TAX)
			vm->X = vm->A;
		else if (BPF_MISCOP(f->code) == BPF_TXA)
			vm->A = vm->X;
		else
			return "unknown MISC op";
		return NULL;
	default:
		return "unknown class";
	}
}

static struct bpf_outcome bpf_run(const struct sock_fprog *prog, const struct seccomp_data *d)
{
	struct bpf_vm vm = { .data = (const uint8_t *)d };

	if (!prog->filter || prog->len == 0 || prog->len > BPF_MAXINSNS)
		return bpf_fail(0, 0, "bad program length");
	vm.len = prog->len;
	for (unsigned pc = 0; pc < prog->len; pc++) {
		const struct sock_filter *f = &prog->filter[pc];
		const char *why;

		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
		case BPF_LDX:
			why = bpf_load(&vm, f);
			break;
		case BPF_JMP:
			why = bpf_jump(&vm, f, &pc);
			break;
		case BPF_RET:
			return bpf_ret(&vm, pc, f);
		default:
			why = bpf_other(&vm, f);
			break;
		}
		if (why)
			return bpf_fail(pc, f->code, why);
	}
	return bpf_fail(prog->len, 0, "fell off the end without RET");
}

static const char *action_name(uint32_t r, char *buf, size_t size)
{
	switch (r & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_KILL_PROCESS:
		return "KILL_PROCESS";
	case SECCOMP_RET_KILL_THREAD:
		return "KILL_THREAD";
	case SECCOMP_RET_TRAP:
		return "TRAP";
	case SECCOMP_RET_ALLOW:
		return "ALLOW";
	case SECCOMP_RET_USER_NOTIF:
		return "USER_NOTIF";
	case SECCOMP_RET_LOG:
		return "LOG";
	case SECCOMP_RET_TRACE:
		return "TRACE";
	case SECCOMP_RET_ERRNO:
		snprintf(buf, size, "ERRNO(%s)",
			 strerrorname_np((int)(r & SECCOMP_RET_DATA)) ?: "?");
		return buf;
	}
	snprintf(buf, size, "0x%08x", r);
	return buf;
}

static uint32_t eval(const struct sock_fprog *prog, uint32_t arch, int nr, uint64_t a0, uint64_t a1,
		     uint64_t a2)
{
	struct seccomp_data d = {
		.nr = nr,
		.arch = arch,
		.instruction_pointer = 0x7f0000001000ULL,
		.args = { a0, a1, a2, 0, 0, 0 },
	};
	struct bpf_outcome o = bpf_run(prog, &d);

	if (!o.ok) {
		diag("BPF interpreter: %s", o.err);
		return 0xffffffffU; /* matches no expected action */
	}
	return o.ret;
}

#define EXPECT(prog, arch, nr, a0, a1, a2, want, ...)                                              \
	do {                                                                                       \
		uint32_t _got = eval(prog, arch, nr, a0, a1, a2);                                  \
		char _b1[48], _b2[48];                                                             \
		if (!ok(_got == (uint32_t)(want), __VA_ARGS__))                                    \
			diag("  got %s, expected %s", action_name(_got, _b1, sizeof(_b1)),         \
			     action_name(want, _b2, sizeof(_b2)));                                 \
	} while (0)

#define X86 AUDIT_ARCH_X86_64
