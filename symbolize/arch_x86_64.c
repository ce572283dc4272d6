/* x86_64: perf's register order (asm/perf_regs.h) to DWARF numbering. */
#include "symbolize/arch.h"

#include <string.h>

#include "symbolize/cfi.h"

/* perf register index -> DWARF register, -1 for those CFI never names. */
static const int8_t perf_to_dwarf[PERF_REG_X86_64_MAX] = {
	[PERF_REG_X86_AX] = 0,  [PERF_REG_X86_DX] = 1,  [PERF_REG_X86_CX] = 2,
	[PERF_REG_X86_BX] = 3,  [PERF_REG_X86_SI] = 4,  [PERF_REG_X86_DI] = 5,
	[PERF_REG_X86_BP] = 6,  [PERF_REG_X86_SP] = 7,  [PERF_REG_X86_R8] = 8,
	[PERF_REG_X86_R9] = 9,  [PERF_REG_X86_R10] = 10, [PERF_REG_X86_R11] = 11,
	[PERF_REG_X86_R12] = 12, [PERF_REG_X86_R13] = 13, [PERF_REG_X86_R14] = 14,
	[PERF_REG_X86_R15] = 15, [PERF_REG_X86_IP] = 16,
	[PERF_REG_X86_FLAGS] = -1, [PERF_REG_X86_CS] = -1, [PERF_REG_X86_SS] = -1,
	[PERF_REG_X86_DS] = -1, [PERF_REG_X86_ES] = -1, [PERF_REG_X86_FS] = -1,
	[PERF_REG_X86_GS] = -1,
};

int mt_unwind_arch_regs_from_perf(struct mt_unwind_regs *out, uint64_t mask,
				  const uint64_t *vals, unsigned nr)
{
	unsigned i = 0;

	out->valid = 0;
	for (int bit = 0; bit < 64 && i < nr; bit++) {
		if (!(mask & (1ULL << bit)))
			continue;
		uint64_t v = vals[i++];
		if (bit >= PERF_REG_X86_64_MAX)
			continue;
		int d = perf_to_dwarf[bit];
		if (d < 0)
			continue;
		out->r[d] = v;
		out->valid |= 1u << d;
	}
	const uint32_t need = (1u << MT_UNWIND_REG_SP) | (1u << MT_UNWIND_REG_RA);
	return (out->valid & need) == need ? 0 : MT_UNWIND_EFORMAT;
}

void mt_unwind_arch_fp_rule(struct mt_unwind_rule *rule)
{
	/* System V: rbx, rbp, r12-r15 are callee-saved; rbp is restored from
	 * the frame, rsp is the CFA, the rest are lost across a call. */
	static const uint8_t kept[] = { 3, 12, 13, 14, 15 };
	memset(rule, 0, sizeof(*rule));
	rule->status = MT_UNWIND_RULE_OK;
	rule->cfa_reg = MT_UNWIND_REG_FP;
	rule->cfa_off = 16;
	for (int r = 0; r < MT_UNWIND_NREGS; r++)
		rule->kind[r] = MT_UNWIND_UNDEF;
	for (size_t i = 0; i < sizeof(kept); i++)
		rule->kind[kept[i]] = MT_UNWIND_SAME;
	rule->kind[MT_UNWIND_REG_FP] = MT_UNWIND_AT_CFA;
	rule->off[MT_UNWIND_REG_FP] = -16;
	rule->kind[MT_UNWIND_REG_SP] = MT_UNWIND_VAL_CFA;
	rule->kind[MT_UNWIND_REG_RA] = MT_UNWIND_AT_CFA;
	rule->off[MT_UNWIND_REG_RA] = -8;
	mt_unwind_rule_finish(rule);
}

const char *const *mt_unwind_arch_lib_dirs(void)
{
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/lib64",
		"/usr/local/lib", "/usr/lib", "/lib", NULL,
	};
	return dirs;
}
