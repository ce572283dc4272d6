/* Architecture-specific register numbering for the unwinder (x86_64 only so
 * far; an aarch64 port replaces arch_x86_64.c and these constants).
 *
 * Registers inside mt-unwind are numbered the DWARF way, because the CFI
 * rules name them so; perf's REGS_USER order is translated once per sample.
 */
#ifndef MT_UNWIND_ARCH_H
#define MT_UNWIND_ARCH_H

#include <asm/perf_regs.h>
#include <stdint.h>

#include "symbolize/error.h"

/* perf register indices of the registers the capture-events contract
 * (docs/formats/capture-events.md) puts event fields in. */
#define MT_UNWIND_PREG_AX PERF_REG_X86_AX
#define MT_UNWIND_PREG_CX PERF_REG_X86_CX
#define MT_UNWIND_PREG_DX PERF_REG_X86_DX
#define MT_UNWIND_PREG_SI PERF_REG_X86_SI
#define MT_UNWIND_PREG_DI PERF_REG_X86_DI
#define MT_UNWIND_PREG_SP PERF_REG_X86_SP
#define MT_UNWIND_PREG_R8 PERF_REG_X86_R8
#define MT_UNWIND_PREG_R9 PERF_REG_X86_R9
#define MT_UNWIND_PREG_R10 PERF_REG_X86_R10
#define MT_UNWIND_PREG_R11 PERF_REG_X86_R11
#define MT_UNWIND_PREG_R12 PERF_REG_X86_R12
#define MT_UNWIND_PREG_R13 PERF_REG_X86_R13
#define MT_UNWIND_PREG_R14 PERF_REG_X86_R14
#define MT_UNWIND_PREG_R15 PERF_REG_X86_R15

#define MT_UNWIND_NREGS 17	/* DWARF 0..16: rax..r15 and the return address */
#define MT_UNWIND_REG_FP 6	/* rbp */
#define MT_UNWIND_REG_SP 7	/* rsp */
#define MT_UNWIND_REG_RA 16	/* return address column (rip) */

/* The registers a sample carries, DWARF-numbered. */
struct mt_unwind_regs {
	uint64_t r[MT_UNWIND_NREGS];
	uint32_t valid;		/* bit n: r[n] is known */
};

/* Translate perf's REGS_USER values (in mask bit order, nr of them) into
 * DWARF numbering; registers absent from mask stay invalid.
 * @return : 0, or MT_UNWIND_EFORMAT when the sample lacks the instruction or
 *           stack pointer. */
int mt_unwind_arch_regs_from_perf(struct mt_unwind_regs *out, uint64_t mask,
				  const uint64_t *vals, unsigned nr);

struct mt_unwind_rule;

/* Fill rule with the frame-pointer convention: CFA = rbp + 16, return
 * address at CFA - 8, caller's rbp at CFA - 16, callee-saved registers
 * unchanged, the others lost. */
void mt_unwind_arch_fp_rule(struct mt_unwind_rule *rule);

/* @return : the system's library directories, NULL-terminated (where a
 *           file that is gone may be found again by its build-id). */
const char *const *mt_unwind_arch_lib_dirs(void);

#endif
