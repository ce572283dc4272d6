/* Compiled CFI rules: libdw answers once per pc what its CFI row says, and
 * the answer is kept as a small rule the unwinder applies in a tight loop.
 *
 *   CFA  = register + offset            (or a DWARF expression)
 *   reg  = same value | undefined | [CFA + off] | CFA + off | other register
 *          | [expression] | expression
 *
 * Expressions (PLT entries, stack realignment in main, signal trampolines)
 * are copied into the rule and run by a small evaluator over the register
 * set and the stack dump; a row using an operation the evaluator lacks
 * compiles to MT_UNWIND_RULE_FAIL and the unwinder takes the frame-pointer
 * fallback there.
 */
#ifndef MT_UNWIND_CFI_H
#define MT_UNWIND_CFI_H

#include <elfutils/libdw.h>
#include <stdint.h>

#include "symbolize/arch.h"
#include "symbolize/error.h"
#include "symbolize/module.h"

enum mt_unwind_rule_status {
	MT_UNWIND_RULE_OK,
	MT_UNWIND_RULE_NONE,	/* no CFI covers the pc */
	MT_UNWIND_RULE_FAIL,	/* CFI exists but did not compile */
};

enum mt_unwind_reg_rule {
	MT_UNWIND_SAME,		/* the caller's value is the callee's */
	MT_UNWIND_UNDEF,	/* lost (call-clobbered; RA undefined: outermost) */
	MT_UNWIND_AT_CFA,	/* saved at CFA + off */
	MT_UNWIND_VAL_CFA,	/* value is CFA + off */
	MT_UNWIND_REG,		/* value is in register off */
	MT_UNWIND_AT_EXPR,	/* saved at the address expr computes */
	MT_UNWIND_VAL_EXPR,	/* value is what expr computes */
};

struct mt_unwind_expr {
	uint32_t nops;
	Dwarf_Op ops[];
};

struct mt_unwind_rule {
	/* Hot: all that applying the common row reads (CFA = register +
	 * offset, every other register it changes saved at or computed from
	 * the CFA), in the rule's first cache line or two.  Spread over the
	 * whole rule, these reads were cache misses, a large part of the
	 * apply's time (python3.11d recording). */
	uint8_t status;		/* enum mt_unwind_rule_status */
	uint8_t signal;		/* the FDE is a signal trampoline's ('S') */
	uint8_t cfa_is_expr;
	uint8_t cfa_reg;
	uint8_t nr_active;	/* derived (mt_unwind_rule_finish), as below */
	uint8_t cfa_only;	/* CFA = register + offset, and every active
				 * register AT_CFA or VAL_CFA at an int32 offset */
	uint8_t ra_undef;	/* RA undefined: the outermost frame */
	uint8_t sp_is_cfa;	/* SP same or undefined: the caller's is the CFA */
	uint32_t same_mask;	/* the registers that keep their value */
	uint32_t at_mask;	/* bit i: active[i] is read at CFA + act_off[i] */
	int64_t cfa_off;
	uint8_t active[MT_UNWIND_NREGS];	/* the registers not same nor undefined */
	int32_t act_off[MT_UNWIND_NREGS];	/* with cfa_only: off[active[i]] */
	/* Cold: the rule as compiled. */
	const struct mt_unwind_expr *cfa_expr;
	uint8_t kind[MT_UNWIND_NREGS];	/* enum mt_unwind_reg_rule */
	int64_t off[MT_UNWIND_NREGS];
	const struct mt_unwind_expr *expr[MT_UNWIND_NREGS];
};

/* Fill the derived fields of a rule built by hand.  Compiled rules have
 * them already. */
void mt_unwind_rule_finish(struct mt_unwind_rule *rule);

/* The memory an unwind may read: the stack dump, at its address. */
struct mt_unwind_memory {
	uint64_t base;		/* address of data[0] (the sample's sp) */
	const uint8_t *data;
	uint64_t size;
};

/* Read the word at addr from the dump.  @return : 0, or MT_UNWIND_ERANGE
 * outside it. */
static inline int mt_unwind_memory_read(const struct mt_unwind_memory *mem, uint64_t addr,
					uint64_t *val)
{
	uint64_t off = addr - mem->base;
	if (addr < mem->base || off > mem->size || mem->size - off < 8)
		return MT_UNWIND_ERANGE;
	__builtin_memcpy(val, mem->data + off, 8);
	return 0;
}

/* Compile a libdw frame row.  @return : a rule in one heap block (free()
 * releases it, expressions included), or NULL when out of memory.  A row
 * that does not compile gives a rule with status MT_UNWIND_RULE_FAIL. */
struct mt_unwind_rule *mt_unwind_rule_compile(Dwarf_Frame *frame);

/* The rule for the ELF virtual address vaddr of module m (the pc, or pc-1
 * for a return address), from m's cache or compiled now from .eh_frame,
 * else .debug_frame.  @return : the rule (owned by m), or NULL when out of
 * memory. */
const struct mt_unwind_rule *mt_unwind_rule_get(struct mt_unwind_module *m, uint64_t vaddr);

/* A static rule for the frame-pointer convention: CFA = rbp + 16, return
 * address at CFA - 8, rbp at CFA - 16. */
const struct mt_unwind_rule *mt_unwind_rule_frame_pointer(void);

enum mt_unwind_step {
	MT_UNWIND_STEP_OK,
	MT_UNWIND_STEP_OUTERMOST,	/* the return address is undefined */
	MT_UNWIND_STEP_NO_MEMORY,	/* a read fell outside the dump */
	MT_UNWIND_STEP_BAD,		/* a register the rule needs is unknown, or
					   an expression failed */
};

/* Apply rule to the callee's registers in, giving the caller's in out
 * (out->r[MT_UNWIND_REG_RA] is the return address).
 * @return : an enum mt_unwind_step. */
int mt_unwind_rule_apply(const struct mt_unwind_rule *rule, const struct mt_unwind_regs *in,
			 const struct mt_unwind_memory *mem, struct mt_unwind_regs *out);

/* The end of every apply: the outcome, and the caller's stack pointer. */
static inline int mt_unwind_apply_end(const struct mt_unwind_rule *rule, uint64_t cfa,
				      struct mt_unwind_regs *out)
{
	if (rule->ra_undef)
		return MT_UNWIND_STEP_OUTERMOST;
	if (!(out->valid & (1u << MT_UNWIND_REG_RA)))
		return MT_UNWIND_STEP_BAD;
	/* The caller's stack pointer is the CFA unless a rule said otherwise. */
	if (rule->sp_is_cfa) {
		out->r[MT_UNWIND_REG_SP] = cfa;
		out->valid |= 1u << MT_UNWIND_REG_SP;
	}
	return MT_UNWIND_STEP_OK;
}

/* Apply a common row (rule->cfa_only) in place: the callee's registers in
 * regs become the caller's (changed even when the step fails).  Each value
 * it sets comes from the CFA and the dump, so no register is read after
 * another is written.  Inline and without a copy of the register set: the
 * unwinder applies one per frame. */
static inline int mt_unwind_rule_apply_common(const struct mt_unwind_rule *rule,
					      struct mt_unwind_regs *regs,
					      const struct mt_unwind_memory *mem)
{
	if (!(regs->valid & (1u << rule->cfa_reg)))
		return MT_UNWIND_STEP_BAD;
	uint64_t cfa = regs->r[rule->cfa_reg] + (uint64_t)rule->cfa_off;
	uint32_t valid = regs->valid & rule->same_mask;
	for (unsigned i = 0; i < rule->nr_active; i++) {
		unsigned r = rule->active[i];
		uint64_t v = cfa + (uint64_t)(int64_t)rule->act_off[i];
		if ((rule->at_mask >> i & 1) && mt_unwind_memory_read(mem, v, &v) != 0) {
			if (r == MT_UNWIND_REG_RA)
				return MT_UNWIND_STEP_NO_MEMORY;
			continue;
		}
		regs->r[r] = v;
		valid |= 1u << r;
	}
	regs->valid = valid;
	return mt_unwind_apply_end(rule, cfa, regs);
}

/* Evaluate a DWARF expression (cfa pushed first when push_cfa).
 * @return : 0 with *result; MT_UNWIND_EFORMAT for an unsupported op, a bad
 *           register or stack; MT_UNWIND_ERANGE when it reads outside the dump. */
int mt_unwind_expr_eval(const struct mt_unwind_expr *e, const struct mt_unwind_regs *regs,
			const struct mt_unwind_memory *mem, uint64_t cfa, uint64_t *result);

#endif
