/* The CFI rule compiler and evaluator against real ELF files: a fixture
 * built by the makefile and the system's libc. */
#include <criterion/criterion.h>
#include <dwarf.h>
#include <gelf.h>
#include <string.h>

#include "symbolize/error.h"
#include "symbolize/cfi.h"
#include "symbolize/module.h"
#include "symbolize/rules_file.h"
#include "tests/symbolize/unwind_util.h"

static struct mt_unwind_modules *ms;

static void setup(void)
{
	cr_assert_eq(mt_unwind_modules_new(&ms, NULL), 0);
}

static void teardown(void)
{
	mt_unwind_modules_free(ms);
}

TestSuite(cfi, .init = setup, .fini = teardown);

Test(cfi, function_entry_and_body)
{
	/* recurse: "sub $8,%rsp" first (no frame pointer build), so at entry
	 * CFA = rsp + 8 and after the sub CFA = rsp + 16; RA always at CFA-8. */
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, ut_fixture("unwind_recursion"), NULL, 0);
	cr_assert_eq(m->state, MT_UNWIND_MOD_OK);
	uint64_t f = ut_symbol(m, "recurse");
	cr_assert_neq(f, 0, "no symbol recurse");
	const struct mt_unwind_rule *r = mt_unwind_rule_get(m, f);
	cr_assert_eq(r->status, MT_UNWIND_RULE_OK);
	cr_assert_eq(r->cfa_is_expr, 0);
	cr_assert_eq(r->cfa_reg, MT_UNWIND_REG_SP);
	cr_assert_eq(r->cfa_off, 8);
	cr_assert_eq(r->kind[MT_UNWIND_REG_RA], MT_UNWIND_AT_CFA);
	cr_assert_eq(r->off[MT_UNWIND_REG_RA], -8);
	/* Somewhere inside the body the frame is bigger: find a pc where the
	 * CFA offset is 16 within the first 16 bytes. */
	int grown = 0;
	for (uint64_t pc = f; pc < f + 16; pc++)
		grown |= mt_unwind_rule_get(m, pc)->cfa_off == 16;
	cr_assert(grown, "no pc of recurse with CFA = rsp + 16");
}

/* r is the rule of an outermost frame: applying it ends the stack. */
static void assert_outermost(const struct mt_unwind_rule *r)
{
	cr_assert_eq(r->status, MT_UNWIND_RULE_OK, "status %d", r->status);
	cr_assert_eq(r->kind[MT_UNWIND_REG_RA], MT_UNWIND_UNDEF);
	struct mt_unwind_regs in = { .valid = 0x1ffff }, out;
	uint8_t stack[64] = { 0 };
	in.r[MT_UNWIND_REG_SP] = 0x1000;
	struct mt_unwind_memory mem = { .base = 0x1000, .data = stack, .size = sizeof(stack) };
	cr_assert_eq(mt_unwind_rule_apply(r, &in, &mem, &out), MT_UNWIND_STEP_OUTERMOST);
}

Test(cfi, outermost_frame)
{
	/* _start marks the return address undefined: the end of the stack. */
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, ut_fixture("unwind_recursion"), NULL, 0);
	uint64_t f = ut_symbol(m, "_start");
	cr_assert_neq(f, 0);
	assert_outermost(mt_unwind_rule_get(m, f + 1));
}

/* The dynamic loader's _start has no FDE, yet every process's stack starts
 * there: its return address (entry + 8, after mov %rsp,%rdi; call) ends
 * the stack as complete.  Other code without CFI stays without a rule. */
Test(cfi, dynamic_loader_entry_is_outermost)
{
	const char *ld = "/lib64/ld-linux-x86-64.so.2";
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, ld, NULL, 0);
	cr_assert_eq(m->state, MT_UNWIND_MOD_OK);
	Dwarf_Addr bias;
	GElf_Ehdr eh;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	cr_assert(elf && gelf_getehdr(elf, &eh));
	assert_outermost(mt_unwind_rule_get(m, eh.e_entry + 7));
	/* 16 bytes on, the rule is whatever the CFI says, if anything. */
	const struct mt_unwind_rule *r = mt_unwind_rule_get(m, eh.e_entry + 16);
	cr_assert(r->status != MT_UNWIND_RULE_OK || r->kind[MT_UNWIND_REG_RA] != MT_UNWIND_UNDEF);
}

Test(cfi, plt_expression)
{
	/* PLT entries describe the CFA with an expression on rip: rsp + 8,
	 * or rsp + 16 once the entry has pushed its index (rip & 15 >= 11). */
	const char *path = ut_fixture("unwind_recursion");
	uint64_t size = 0, plt = ut_section(path, ".plt", &size);
	cr_assert(plt && size >= 32, "no .plt in %s", path);
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, path, NULL, 0);
	uint64_t entry = plt + 16;	/* the first entry after PLT0 */
	const struct mt_unwind_rule *r = mt_unwind_rule_get(m, entry);
	cr_assert_eq(r->status, MT_UNWIND_RULE_OK);
	cr_assert_eq(r->cfa_is_expr, 1);
	struct mt_unwind_regs in = { .valid = (1u << MT_UNWIND_REG_SP) | (1u << MT_UNWIND_REG_RA) };
	uint8_t stack[64] = { 0 };
	uint64_t ret = 0x401234, ret2 = 0x405678;
	memcpy(stack, &ret, 8);
	memcpy(stack + 8, &ret2, 8);
	struct mt_unwind_memory mem = { .base = 0x7000, .data = stack, .size = sizeof(stack) };
	struct mt_unwind_regs out;
	in.r[MT_UNWIND_REG_SP] = 0x7000;
	in.r[MT_UNWIND_REG_RA] = entry;		/* before the push */
	cr_assert_eq(mt_unwind_rule_apply(r, &in, &mem, &out), MT_UNWIND_STEP_OK);
	cr_assert_eq(out.r[MT_UNWIND_REG_RA], ret);
	cr_assert_eq(out.r[MT_UNWIND_REG_SP], 0x7008);
	in.r[MT_UNWIND_REG_RA] = entry + 11;	/* after the push */
	r = mt_unwind_rule_get(m, entry + 11);
	cr_assert_eq(mt_unwind_rule_apply(r, &in, &mem, &out), MT_UNWIND_STEP_OK);
	cr_assert_eq(out.r[MT_UNWIND_REG_RA], ret2);
	cr_assert_eq(out.r[MT_UNWIND_REG_SP], 0x7010);
}

Test(cfi, libc_rules_and_signal_frame)
{
	struct mt_unwind_module *m =
		mt_unwind_modules_get(ms, "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL, 0);
	cr_assert_eq(m->state, MT_UNWIND_MOD_OK);
	uint64_t f = ut_symbol(m, "malloc");
	cr_assert_neq(f, 0);
	const struct mt_unwind_rule *r = mt_unwind_rule_get(m, f);
	cr_assert_eq(r->status, MT_UNWIND_RULE_OK);
	cr_assert_eq(r->cfa_reg, MT_UNWIND_REG_SP);
	cr_assert_eq(r->cfa_off, 8);
	cr_assert_eq(r->signal, 0);
	/* The signal trampoline: an 'S' FDE whose CFA is read from the
	 * ucontext (an expression).  Its symbol lives in .symtab only. */
	uint64_t rt = ut_symbol(m, "__restore_rt");
	if (!rt)
		cr_skip_test("libc has no __restore_rt symbol here (no .symtab)");
	r = mt_unwind_rule_get(m, rt);
	cr_assert_eq(r->status, MT_UNWIND_RULE_OK);
	cr_assert_eq(r->signal, 1);
	cr_assert_eq(r->cfa_is_expr, 1);
}

/* The common rows take a path of their own (cfa_only: in place, inline in
 * the walk); it must give what the general one gives.  Every 32nd pc of libc's .text (every 5th cached
 * 160 MB of rules), on the same registers and stack. */
Test(cfi, common_rows_apply_as_the_general_path)
{
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, libc, NULL, 0);
	cr_assert_eq(m->state, MT_UNWIND_MOD_OK);
	uint64_t size, text = ut_section(libc, ".text", &size);
	cr_assert_neq(text, 0);
	uint64_t stack[512];
	for (size_t i = 0; i < 512; i++)
		stack[i] = 0x7f0000001000ULL + 0x9E3779B97F4A7C15ULL * i;
	struct mt_unwind_memory mem = { .base = 0x7ffd0000, .data = (void *)stack,
					.size = sizeof(stack) };
	struct mt_unwind_regs in = { .valid = 0x1ffff };
	for (int r = 0; r < MT_UNWIND_NREGS; r++)
		in.r[r] = 0x7ffd0000 + 64 * (uint64_t)r;
	unsigned common = 0, other = 0;
	for (uint64_t pc = text; pc < text + size; pc += 32) {
		const struct mt_unwind_rule *r = mt_unwind_rule_get(m, pc);
		cr_assert_not_null(r);
		if (r->status != MT_UNWIND_RULE_OK)
			continue;
		if (!r->cfa_only) {
			other++;
			continue;
		}
		common++;
		struct mt_unwind_rule general = *r;
		general.cfa_only = 0;
		struct mt_unwind_regs a, b;
		int sa = mt_unwind_rule_apply(r, &in, &mem, &a);
		int sb = mt_unwind_rule_apply(&general, &in, &mem, &b);
		cr_assert_eq(sa, sb, "pc %#lx: step %d against %d", (unsigned long)pc, sa, sb);
		if (sa != MT_UNWIND_STEP_OK)
			continue;
		cr_assert_eq(a.valid, b.valid, "pc %#lx", (unsigned long)pc);
		for (int k = 0; k < MT_UNWIND_NREGS; k++)
			if (a.valid & (1u << k))
				cr_assert_eq(a.r[k], b.r[k], "pc %#lx reg %d", (unsigned long)pc, k);
	}
	cr_assert_gt(common, 10000, "%u common rows", common);
	cr_log_info("libc: %u common rows, %u others", common, other);
}

Test(cfi, cache_returns_the_same_rule)
{
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, ut_fixture("unwind_inline"), NULL, 0);
	uint64_t f = ut_symbol(m, "main");
	const struct mt_unwind_rule *a = mt_unwind_rule_get(m, f);
	uint64_t hits = m->rules.hits;
	const struct mt_unwind_rule *b = mt_unwind_rule_get(m, f);
	cr_assert_eq(a, b);
	cr_assert_eq(m->rules.hits, hits + 1);
	/* An address outside every FDE compiles to "no CFI", cached too:
	 * libdw is asked once. */
	uint64_t asked = m->rules_asked;
	const struct mt_unwind_rule *n = mt_unwind_rule_get(m, 0x10);
	cr_assert_eq(n->status, MT_UNWIND_RULE_NONE);
	cr_assert_eq(m->rules_asked, asked + 1);
	cr_assert_eq(mt_unwind_rule_get(m, 0x10), n);
	cr_assert_eq(m->rules_asked, asked + 1);
}

/* A pc after another in the row compiled for it, in one run without a
 * debug cache: the rule compiled already, libdw not asked again. */
Test(cfi, pcs_of_a_row_compiled_share_its_rule)
{
	struct mt_unwind_module *m = mt_unwind_modules_get(ms, ut_fixture("unwind_cxx"), NULL, 0);
	uint64_t lo = 0, hi = 0;
	for (size_t i = 0; i < m->nr_loads; i++)
		if (m->loads[i].exec) {
			lo = m->loads[i].vaddr;
			hi = lo + m->loads[i].filesz;
		}
	cr_assert_lt(lo, hi);
	unsigned shared = 0;
	for (uint64_t v = lo; v < hi && !shared; v++) {
		const struct mt_unwind_rule *a = mt_unwind_rule_get(m, v);
		cr_assert_not_null(a);
		if (a->status != MT_UNWIND_RULE_OK || m->rules_new.n == 0 ||
		    m->rules_new.v[m->rules_new.n - 1].lo != v)
			continue;	/* not a row compiled for v */
		uint64_t end = m->rules_new.v[m->rules_new.n - 1].hi;
		if (end - v < 2)
			continue;
		uint64_t asked = m->rules_asked;
		cr_assert_eq(mt_unwind_rule_get(m, end - 1), a);
		cr_assert_eq(mt_unwind_rule_get(m, v + 1), a);
		cr_assert_eq(m->rules_asked, asked);
		cr_assert_eq(m->rules_reused, 2);
		shared++;
	}
	cr_assert_eq(shared, 1);
}

Test(cfi, frame_pointer_rule)
{
	/* Two frames linked through rbp: [rbp] = caller's rbp, [rbp+8] = RA. */
	uint64_t st[8] = { 0 };
	st[2] = 0x9040;		/* at 0x9010: saved rbp */
	st[3] = 0x401111;	/* at 0x9018: return address */
	struct mt_unwind_memory mem = { .base = 0x9000, .data = (void *)st, .size = sizeof(st) };
	struct mt_unwind_regs in = { .valid = (1u << 6) | (1u << 7) | (1u << 16) | (1u << 3) }, out;
	in.r[6] = 0x9010;
	in.r[7] = 0x9000;
	in.r[3] = 77;
	cr_assert_eq(mt_unwind_rule_apply(mt_unwind_rule_frame_pointer(), &in, &mem, &out),
		     MT_UNWIND_STEP_OK);
	cr_assert_eq(out.r[16], 0x401111);
	cr_assert_eq(out.r[6], 0x9040);
	cr_assert_eq(out.r[7], 0x9020);
	cr_assert_eq(out.r[3], 77, "rbx is callee-saved: unchanged");
	cr_assert_eq(out.valid & 1u, 0, "rax is lost across a call");
	/* The return address outside the dump: end of dump. */
	in.r[6] = 0x9038;
	cr_assert_eq(mt_unwind_rule_apply(mt_unwind_rule_frame_pointer(), &in, &mem, &out),
		     MT_UNWIND_STEP_NO_MEMORY);
}

Test(cfi, expression_evaluator)
{
	struct {
		uint32_t nops;
		Dwarf_Op ops[6];
	} e = { 5, {
		{ .atom = DW_OP_breg7, .number = 16 },	/* rsp + 16 */
		{ .atom = DW_OP_deref },		/* [rsp + 16] */
		{ .atom = DW_OP_lit3 },
		{ .atom = DW_OP_shl },			/* * 8 */
		{ .atom = DW_OP_plus_uconst, .number = 5 },
	} };
	uint64_t st[4] = { 0, 0, 6, 0 };
	struct mt_unwind_memory mem = { .base = 0x100, .data = (void *)st, .size = sizeof(st) };
	struct mt_unwind_regs regs = { .valid = 1u << 7 };
	regs.r[7] = 0x100;
	uint64_t v;
	cr_assert_eq(mt_unwind_expr_eval((void *)&e, &regs, &mem, 0, &v), 0);
	cr_assert_eq(v, 6 * 8 + 5);
	regs.valid = 0;		/* rsp unknown */
	cr_assert_neq(mt_unwind_expr_eval((void *)&e, &regs, &mem, 0, &v), 0);
	regs.valid = 1u << 7;
	regs.r[7] = 0x200;	/* the read falls outside the dump */
	cr_assert_eq(mt_unwind_expr_eval((void *)&e, &regs, &mem, 0, &v), MT_UNWIND_ERANGE);
	e.ops[0] = (Dwarf_Op){ .atom = DW_OP_call_frame_cfa };
	e.ops[1] = (Dwarf_Op){ .atom = DW_OP_nop };
	cr_assert_eq(mt_unwind_expr_eval((void *)&e, &regs, &mem, 0x10, &v), 0);
	cr_assert_eq(v, 0x10 * 8 + 5);
	e.ops[1] = (Dwarf_Op){ .atom = DW_OP_GNU_push_tls_address };	/* unsupported */
	cr_assert_eq(mt_unwind_expr_eval((void *)&e, &regs, &mem, 0x10, &v), MT_UNWIND_EFORMAT);
}
