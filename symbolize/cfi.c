/* CFI rule compiler, cache and evaluator. */
#include "symbolize/cfi.h"
#include "symbolize/rules_file.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

/* A register rule before it is placed in the rule's block. */
struct pending {
	uint8_t kind;
	int64_t off;
	const Dwarf_Op *ops;	/* expression rules: ops to copy */
	size_t nops;
};

static int breg_of(const Dwarf_Op *op, unsigned *reg, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
		return 0;
	}
	if (op->atom == DW_OP_bregx) {
		/* out of range: a number no register has, not a truncated one */
		*reg = op->number < MT_UNWIND_NREGS ? (unsigned)op->number : MT_UNWIND_NREGS;
		*off = (int64_t)op->number2;
		return 0;
	}
	return -1;
}

static int reg_of(const Dwarf_Op *op, unsigned *reg)
{
	if (op->atom >= DW_OP_reg0 && op->atom <= DW_OP_reg31) {
		*reg = op->atom - DW_OP_reg0;
		return 0;
	}
	if (op->atom == DW_OP_regx) {
		*reg = op->number < MT_UNWIND_NREGS ? (unsigned)op->number : MT_UNWIND_NREGS;
		return 0;
	}
	return -1;
}

/* Classify what dwarf_frame_register gave for one register. */
static int classify(Dwarf_Op *ops_mem, Dwarf_Op *ops, size_t nops, struct pending *p)
{
	memset(p, 0, sizeof(*p));
	if (nops == 0) {
		/* libdw: ops == NULL means same value, ops == ops_mem undefined. */
		p->kind = ops ? MT_UNWIND_UNDEF : MT_UNWIND_SAME;
		return 0;
	}
	(void)ops_mem;
	int value = ops[nops - 1].atom == DW_OP_stack_value;
	size_t n = nops - value;
	unsigned reg;
	int64_t off;
	if (n >= 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		if (n == 1) {
			p->kind = value ? MT_UNWIND_VAL_CFA : MT_UNWIND_AT_CFA;
			return 0;
		}
		if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
			p->kind = value ? MT_UNWIND_VAL_CFA : MT_UNWIND_AT_CFA;
			p->off = (int64_t)ops[1].number;
			return 0;
		}
		if (n == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus) {
			p->kind = value ? MT_UNWIND_VAL_CFA : MT_UNWIND_AT_CFA;
			p->off = (int64_t)ops[1].number;
			return 0;
		}
	}
	if (value && n == 1 && breg_of(&ops[0], &reg, &off) == 0 && off == 0 &&
	    reg < MT_UNWIND_NREGS) {
		p->kind = MT_UNWIND_REG;
		p->off = reg;
		return 0;
	}
	/* DW_CFA_register: libdw names the register (DW_OP_regN, DW_OP_regx),
	 * a location that is the register itself (glibc's vfork keeps its
	 * return address in rdi). */
	if (!value && n == 1 && reg_of(&ops[0], &reg) == 0 && reg < MT_UNWIND_NREGS) {
		p->kind = MT_UNWIND_REG;
		p->off = reg;
		return 0;
	}
	p->kind = value ? MT_UNWIND_VAL_EXPR : MT_UNWIND_AT_EXPR;
	p->ops = ops;
	p->nops = n;
	return 0;
}

static size_t expr_size(size_t nops)
{
	return (sizeof(struct mt_unwind_expr) + nops * sizeof(Dwarf_Op) + 7) & ~(size_t)7;
}

struct mt_unwind_rule *mt_unwind_rule_compile(Dwarf_Frame *frame)
{
	struct pending regs[MT_UNWIND_NREGS], cfa = { 0 };
	/* Copies of the simple ops: ops_mem is reused per register. */
	Dwarf_Op mem[MT_UNWIND_NREGS][3];
	int fail = 0;

	Dwarf_Op *cops;
	size_t cnops;
	unsigned creg = 0;
	int64_t coff = 0;
	if (dwarf_frame_cfa(frame, &cops, &cnops) != 0 || cnops == 0) {
		fail = 1;
	} else if (cnops == 1 && breg_of(&cops[0], &creg, &coff) == 0) {
		if (creg >= MT_UNWIND_NREGS)
			fail = 1;
	} else {
		cfa.ops = cops;
		cfa.nops = cnops;
	}
	for (int r = 0; r < MT_UNWIND_NREGS && !fail; r++) {
		Dwarf_Op *ops;
		size_t nops;
		if (dwarf_frame_register(frame, r, mem[r], &ops, &nops) != 0) {
			/* A register libdw cannot describe: only fatal for RA. */
			regs[r] = (struct pending){ .kind = MT_UNWIND_UNDEF };
			if (r == MT_UNWIND_REG_RA)
				fail = 1;
			continue;
		}
		classify(mem[r], ops, nops, &regs[r]);
	}

	size_t size = (sizeof(struct mt_unwind_rule) + 7) & ~(size_t)7;
	if (!fail) {
		if (cfa.ops)
			size += expr_size(cfa.nops);
		for (int r = 0; r < MT_UNWIND_NREGS; r++)
			if (regs[r].ops)
				size += expr_size(regs[r].nops);
	}
	struct mt_unwind_rule *rule = calloc(1, size);
	if (!rule)
		return NULL;
	if (fail) {
		rule->status = MT_UNWIND_RULE_FAIL;
		return rule;
	}
	Dwarf_Addr start, end;
	bool signal = false;
	dwarf_frame_info(frame, &start, &end, &signal);
	rule->signal = signal;
	char *p = (char *)rule + ((sizeof(*rule) + 7) & ~(size_t)7);
	if (cfa.ops) {
		struct mt_unwind_expr *e = (void *)p;
		e->nops = (uint32_t)cfa.nops;
		memcpy(e->ops, cfa.ops, cfa.nops * sizeof(Dwarf_Op));
		rule->cfa_is_expr = 1;
		rule->cfa_expr = e;
		p += expr_size(cfa.nops);
	} else {
		rule->cfa_reg = (uint8_t)creg;
		rule->cfa_off = coff;
	}
	for (int r = 0; r < MT_UNWIND_NREGS; r++) {
		rule->kind[r] = regs[r].kind;
		rule->off[r] = regs[r].off;
		if (regs[r].ops) {
			struct mt_unwind_expr *e = (void *)p;
			e->nops = (uint32_t)regs[r].nops;
			memcpy(e->ops, regs[r].ops, regs[r].nops * sizeof(Dwarf_Op));
			rule->expr[r] = e;
			p += expr_size(regs[r].nops);
		}
	}
	rule->status = MT_UNWIND_RULE_OK;
	mt_unwind_rule_finish(rule);
	return rule;
}

void mt_unwind_rule_finish(struct mt_unwind_rule *rule)
{
	rule->same_mask = 0;
	rule->at_mask = 0;
	rule->nr_active = 0;
	rule->cfa_only = !rule->cfa_is_expr;
	for (int r = 0; r < MT_UNWIND_NREGS; r++) {
		if (rule->kind[r] == MT_UNWIND_SAME) {
			rule->same_mask |= 1u << r;
			continue;
		}
		if (rule->kind[r] == MT_UNWIND_UNDEF)
			continue;
		unsigned i = rule->nr_active++;
		rule->active[i] = (uint8_t)r;
		if ((rule->kind[r] != MT_UNWIND_AT_CFA && rule->kind[r] != MT_UNWIND_VAL_CFA) ||
		    rule->off[r] != (int32_t)rule->off[r]) {
			rule->cfa_only = 0;
			continue;
		}
		rule->act_off[i] = (int32_t)rule->off[r];
		if (rule->kind[r] == MT_UNWIND_AT_CFA)
			rule->at_mask |= 1u << i;
	}
	rule->ra_undef = rule->kind[MT_UNWIND_REG_RA] == MT_UNWIND_UNDEF;
	rule->sp_is_cfa = rule->kind[MT_UNWIND_REG_SP] == MT_UNWIND_SAME ||
			  rule->kind[MT_UNWIND_REG_SP] == MT_UNWIND_UNDEF;
}

/* The rule of the row holding addr, and the row's range [*lo, *hi) in the
 * CFI's addresses (empty when libdw does not tell). */
static struct mt_unwind_rule *lookup(Dwarf_CFI *cfi, Dwarf_Addr addr, int *found,
				     Dwarf_Addr *lo, Dwarf_Addr *hi)
{
	Dwarf_Frame *frame;
	*found = 0;
	*lo = *hi = 0;
	if (!cfi || dwarf_cfi_addrframe(cfi, addr, &frame) != 0)
		return NULL;
	*found = 1;
	struct mt_unwind_rule *rule = mt_unwind_rule_compile(frame);
	bool signal;
	if (dwarf_frame_info(frame, lo, hi, &signal) < 0 || !(*lo <= addr && addr < *hi))
		*lo = *hi = 0;
	free(frame);
	return rule;
}

/* Is vaddr, which no CFI covers, in the first bytes of the module's entry
 * point?  The dynamic loader's _start (mov %rsp,%rdi; call _dl_start) has
 * no FDE, and it is where every process's stack begins: a stack that ends
 * there is complete, not cut for want of CFI.  (Executables' _start mark
 * their return address undefined in their CFI.)  Under m->lock, or apart. */
static int at_entry_point(struct mt_unwind_module *m, uint64_t vaddr)
{
	Dwarf_Addr bias;
	Elf *elf = m->mod ? dwfl_module_getelf(m->mod, &bias) : NULL;
	GElf_Ehdr eh;
	return elf && gelf_getehdr(elf, &eh) && eh.e_entry && vaddr - eh.e_entry < 16;
}

/* The rule of the outermost frame: the return address is undefined. */
static struct mt_unwind_rule *outermost_rule(void)
{
	struct mt_unwind_rule *rule = calloc(1, sizeof(*rule));
	if (!rule)
		return NULL;
	rule->status = MT_UNWIND_RULE_OK;
	rule->cfa_reg = MT_UNWIND_REG_SP;
	rule->kind[MT_UNWIND_REG_RA] = MT_UNWIND_UNDEF;
	mt_unwind_rule_finish(rule);
	return rule;
}

/* The rule of every pc no CFI covers: one for all, never freed. */
static const struct mt_unwind_rule no_cfi = { .status = MT_UNWIND_RULE_NONE };

/* The rule for vaddr from libdw: .eh_frame, else .debug_frame, else the
 * entry point's; NULL when there is none (*none set) or out of memory.
 * *klo, *khi: the range of the .eh_frame row it is, for the cache file
 * (empty: not one). */
static struct mt_unwind_rule *rule_from_libdw(struct mt_unwind_module *m, uint64_t vaddr,
					      uint64_t *klo, uint64_t *khi, int *none)
{
	struct mt_unwind_rule *rule = NULL;
	int found = 0;
	Dwarf_Addr lo, hi;
	*klo = *khi = 0;
	/* libdw: see struct mt_unwind_module; lookups in .eh_frame use mod,
	 * which only this thread uses once the symbol session is apart. */
	int apart = __atomic_load_n(&m->apart, __ATOMIC_ACQUIRE);
	if (!apart)
		pthread_mutex_lock(&m->lock);
	if (m->state == MT_UNWIND_MOD_OK) {
		mt_unwind_module_load_cfi(m);
		rule = lookup(m->eh_cfi, vaddr - m->eh_bias, &found, &lo, &hi);
		if (found && rule && rule->status == MT_UNWIND_RULE_OK && lo < hi) {
			/* The row's end is where libdw stopped, the next advance
			 * past the pc: every address from the pc up to it has
			 * this row.  Its start is not: after DW_CFA_restore_state
			 * it is the remembered row's (libdw 0.188's execute_cfi),
			 * so the range kept starts at the pc. */
			*klo = vaddr;
			*khi = hi + m->eh_bias;
		}
		if (!found || (rule && rule->status != MT_UNWIND_RULE_OK)) {
			if (apart)	/* .debug_frame: usually in the symbol session */
				pthread_mutex_lock(&m->lock);
			mt_unwind_module_load_dwarf_cfi(m);
			int found2;
			Dwarf_Addr lo2, hi2;
			struct mt_unwind_rule *r2 = lookup(m->dw_cfi, vaddr - m->dw_bias, &found2,
							   &lo2, &hi2);
			if (apart)
				pthread_mutex_unlock(&m->lock);
			if (found2 && r2 && (!rule || r2->status == MT_UNWIND_RULE_OK)) {
				free(rule);
				rule = r2;
				found = 1;
			} else {
				free(r2);
			}
		}
		if (!found && at_entry_point(m, vaddr)) {
			free(rule);
			rule = outermost_rule();
			found = 1;
		}
	}
	if (!apart)
		pthread_mutex_unlock(&m->lock);
	*none = !found;
	if (!found) {
		free(rule);
		rule = NULL;
	}
	return rule;
}

const struct mt_unwind_rule *mt_unwind_rule_get(struct mt_unwind_module *m, uint64_t vaddr)
{
	uint64_t v;
	if (mt_unwind_hashmap_get(&m->rules, vaddr, &v))
		return (const void *)(uintptr_t)v;
	if (vaddr == MT_UNWIND_HASH_EMPTY && m->rule_no_key)
		return m->rule_no_key;
	/* A row a run before compiled (the debug cache), a row compiled
	 * earlier in this run, else libdw.  The rows' rules are shared by
	 * their pcs; m->rules only maps each pc met to its rule. */
	const struct mt_unwind_rule *rule = mt_unwind_module_cached_rule(m, vaddr);
	if (!rule)
		rule = mt_unwind_module_kept_rule(m, vaddr);
	if (!rule) {
		uint64_t klo = 0, khi = 0;
		int none = 0;
		m->rules_asked++;
		struct mt_unwind_rule *made = rule_from_libdw(m, vaddr, &klo, &khi, &none);
		if (none)
			rule = &no_cfi;
		else if (!made || mt_unwind_module_own_rule(m, made) != 0)
			return NULL;
		else
			rule = made;
		if (klo < khi)
			mt_unwind_module_keep_rule(m, klo, khi, rule);
	}
	int rc = mt_unwind_hashmap_put(&m->rules, vaddr, (uintptr_t)rule);
	if (rc == MT_UNWIND_HASH_NO_KEY)
		m->rule_no_key = rule;
	else if (rc != 0)
		return NULL;
	return rule;
}

/* Built once, on first use (by a single thread: the unwinder's). */
static struct mt_unwind_rule fp_rule;

const struct mt_unwind_rule *mt_unwind_rule_frame_pointer(void)
{
	if (fp_rule.status != MT_UNWIND_RULE_OK || !fp_rule.nr_active)
		mt_unwind_arch_fp_rule(&fp_rule);
	return &fp_rule;
}

int mt_unwind_expr_eval(const struct mt_unwind_expr *e, const struct mt_unwind_regs *regs,
			const struct mt_unwind_memory *mem, uint64_t cfa, uint64_t *result)
{
	uint64_t st[64];
	size_t sp = 0;
#define NEED(n) do { if (sp < (n)) return MT_UNWIND_EFORMAT; } while (0)
#define PUSH(v) do { uint64_t v_ = (v); if (sp >= 64) return MT_UNWIND_EFORMAT; \
			  st[sp] = v_; sp++; } while (0)
	for (uint32_t i = 0; i < e->nops; i++) {
		const Dwarf_Op *op = &e->ops[i];
		unsigned a = op->atom;
		uint64_t x, y;
		unsigned reg;
		int64_t off;
		if (breg_of(op, &reg, &off) == 0) {
			if (reg >= MT_UNWIND_NREGS || !(regs->valid & (1u << reg)))
				return MT_UNWIND_EFORMAT;
			PUSH(regs->r[reg] + (uint64_t)off);
			continue;
		}
		if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
			PUSH(a - DW_OP_lit0);
			continue;
		}
		switch (a) {
		case DW_OP_call_frame_cfa: PUSH(cfa); break;
		case DW_OP_addr:
		case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u:
		case DW_OP_const8u: case DW_OP_constu:
		case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s:
		case DW_OP_const8s: case DW_OP_consts:
			PUSH(op->number);
			break;
		case DW_OP_deref:
			NEED(1);
			if (mt_unwind_memory_read(mem, st[sp - 1], &x) != 0)
				return MT_UNWIND_ERANGE;
			st[sp - 1] = x;
			break;
		case DW_OP_dup: NEED(1); PUSH(st[sp - 1]); break;
		case DW_OP_drop: NEED(1); sp--; break;
		case DW_OP_over: NEED(2); PUSH(st[sp - 2]); break;
		case DW_OP_pick:
			if (op->number >= sp)
				return MT_UNWIND_EFORMAT;
			PUSH(st[sp - 1 - op->number]);
			break;
		case DW_OP_swap:
			NEED(2);
			x = st[sp - 1]; st[sp - 1] = st[sp - 2]; st[sp - 2] = x;
			break;
		case DW_OP_plus_uconst: NEED(1); st[sp - 1] += op->number; break;
		case DW_OP_neg: NEED(1); st[sp - 1] = -st[sp - 1]; break;
		case DW_OP_not: NEED(1); st[sp - 1] = ~st[sp - 1]; break;
		case DW_OP_abs:
			NEED(1);
			if ((int64_t)st[sp - 1] < 0)
				st[sp - 1] = -st[sp - 1];
			break;
		case DW_OP_plus: case DW_OP_minus: case DW_OP_mul: case DW_OP_and:
		case DW_OP_or: case DW_OP_xor: case DW_OP_shl: case DW_OP_shr:
		case DW_OP_shra: case DW_OP_eq: case DW_OP_ne: case DW_OP_lt:
		case DW_OP_le: case DW_OP_gt: case DW_OP_ge:
			NEED(2);
			y = st[--sp];
			x = st[sp - 1];
			switch (a) {
			case DW_OP_plus: x += y; break;
			case DW_OP_minus: x -= y; break;
			case DW_OP_mul: x *= y; break;
			case DW_OP_and: x &= y; break;
			case DW_OP_or: x |= y; break;
			case DW_OP_xor: x ^= y; break;
			case DW_OP_shl: x = y >= 64 ? 0 : x << y; break;
			case DW_OP_shr: x = y >= 64 ? 0 : x >> y; break;
			case DW_OP_shra: x = (uint64_t)((int64_t)x >> (y >= 64 ? 63 : y)); break;
			case DW_OP_eq: x = (int64_t)x == (int64_t)y; break;
			case DW_OP_ne: x = (int64_t)x != (int64_t)y; break;
			case DW_OP_lt: x = (int64_t)x < (int64_t)y; break;
			case DW_OP_le: x = (int64_t)x <= (int64_t)y; break;
			case DW_OP_gt: x = (int64_t)x > (int64_t)y; break;
			case DW_OP_ge: x = (int64_t)x >= (int64_t)y; break;
			}
			st[sp - 1] = x;
			break;
		case DW_OP_nop: break;
		default:
			return MT_UNWIND_EFORMAT;
		}
	}
#undef NEED
#undef PUSH
	if (sp == 0)
		return MT_UNWIND_EFORMAT;
	*result = st[sp - 1];
	return 0;
}

int mt_unwind_rule_apply(const struct mt_unwind_rule *rule, const struct mt_unwind_regs *in,
			 const struct mt_unwind_memory *mem, struct mt_unwind_regs *out)
{
	if (rule->cfa_only) {
		*out = *in;
		return mt_unwind_rule_apply_common(rule, out, mem);
	}
	uint64_t cfa;
	if (!rule->cfa_is_expr) {
		if (!(in->valid & (1u << rule->cfa_reg)))
			return MT_UNWIND_STEP_BAD;
		cfa = in->r[rule->cfa_reg] + (uint64_t)rule->cfa_off;
	} else {
		int e = mt_unwind_expr_eval(rule->cfa_expr, in, mem, 0, &cfa);
		if (e != 0)
			return e == -2 ? MT_UNWIND_STEP_NO_MEMORY : MT_UNWIND_STEP_BAD;
	}
	/* Unchanged registers in one go, then only the rules that do work. */
	memcpy(out->r, in->r, sizeof(out->r));
	out->valid = in->valid & rule->same_mask;
	for (unsigned i = 0; i < rule->nr_active; i++) {
		unsigned r = rule->active[i];
		uint64_t v, addr;
		int e;
		switch (rule->kind[r]) {
		case MT_UNWIND_AT_CFA:
			if (mt_unwind_memory_read(mem, cfa + (uint64_t)rule->off[r], &v) != 0) {
				if (r == MT_UNWIND_REG_RA)
					return MT_UNWIND_STEP_NO_MEMORY;
				continue;
			}
			break;
		case MT_UNWIND_VAL_CFA:
			v = cfa + (uint64_t)rule->off[r];
			break;
		case MT_UNWIND_REG:
			if (!(in->valid & (1u << rule->off[r])))
				continue;
			v = in->r[rule->off[r]];
			break;
		case MT_UNWIND_AT_EXPR:
			e = mt_unwind_expr_eval(rule->expr[r], in, mem, cfa, &addr);
			if (e == 0 && mt_unwind_memory_read(mem, addr, &v) != 0)
				e = -2;
			if (e != 0) {
				if (r == MT_UNWIND_REG_RA)
					return e == -2 ? MT_UNWIND_STEP_NO_MEMORY : MT_UNWIND_STEP_BAD;
				continue;
			}
			break;
		case MT_UNWIND_VAL_EXPR:
			e = mt_unwind_expr_eval(rule->expr[r], in, mem, cfa, &v);
			if (e != 0) {
				if (r == MT_UNWIND_REG_RA)
					return e == -2 ? MT_UNWIND_STEP_NO_MEMORY : MT_UNWIND_STEP_BAD;
				continue;
			}
			break;
		default:
			continue;
		}
		out->r[r] = v;
		out->valid |= 1u << r;
	}
	return mt_unwind_apply_end(rule, cfa, out);
}
