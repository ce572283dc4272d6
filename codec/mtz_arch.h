/* Architecture specifics of the .mtz codec: which perf user register is the
 * stack pointer (bit number in perf_event_attr.sample_regs_user). */
#ifndef MTZ_ARCH_H
#define MTZ_ARCH_H

#if defined(__x86_64__) || defined(__i386__)
#define MTZ_ARCH_SP_REG 7	/* PERF_REG_X86_SP */
#elif defined(__aarch64__)
#define MTZ_ARCH_SP_REG 31	/* PERF_REG_ARM64_SP */
#else
#error "mtz: stack pointer register unknown for this architecture"
#endif

#endif
