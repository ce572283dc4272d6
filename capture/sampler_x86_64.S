/* x86_64 part of the sampler: the marker functions, and the calls that pass
 * the exit totals and the timeline's ticks in thirteen registers.  mt-capture either uprobes the markers
 * or gives the sampler a sample ring (sample_ring.h), to which the markers
 * then hand their registers themselves.
 *
 * Each marker starts with `push %rbp`, an instruction the kernel's uprobe
 * code emulates instead of single-stepping, so a hit costs far less than
 * on a marker starting with `ret`, which is single-stepped (--no-ring's
 * cost: docs/BENCHMARKS.md, mt-capture).  Not a 5-byte nop: kernel 6.18
 * optimizes a probed nop5 into a call to a trampoline page that a fork()ed
 * child does not get, and the child dies of SIGSEGV at its next marker.
 * tests/capture/sampler_markers_test.c checks these first bytes in the .so.
 * The register contract is in docs/formats/capture-events.md.
 */
	.text

	.macro MARKER name kind
	.globl \name
	.protected \name	/* exported for the uprobe, called directly */
	.type \name, @function
	.p2align 4
\name:
	.cfi_startproc
	push %rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	pop %rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbp
	cmpl $0, mt_sampler_ring_on(%rip)
	jne 1f
	ret
/* With the sample ring: the registers as they were at the entry, in perf's
 * numbering (AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS R8..R15;
 * FLAGS and DS..GS 0), to mt_sampler_ring_emit(kind, regs).  200 bytes
 * keep the call 16-byte aligned. */
1:	sub $200, %rsp
	.cfi_adjust_cfa_offset 200
	mov %rax, 0(%rsp)
	mov %rbx, 8(%rsp)
	mov %rcx, 16(%rsp)
	mov %rdx, 24(%rsp)
	mov %rsi, 32(%rsp)
	mov %rdi, 40(%rsp)
	mov %rbp, 48(%rsp)
	lea 200(%rsp), %rax
	mov %rax, 56(%rsp)
	lea \name(%rip), %rax
	mov %rax, 64(%rsp)
	xor %eax, %eax
	mov %rax, 72(%rsp)
	mov %cs, %eax
	mov %rax, 80(%rsp)
	mov %ss, %eax
	mov %rax, 88(%rsp)
	xor %eax, %eax
	mov %rax, 96(%rsp)
	mov %rax, 104(%rsp)
	mov %rax, 112(%rsp)
	mov %rax, 120(%rsp)
	mov %r8, 128(%rsp)
	mov %r9, 136(%rsp)
	mov %r10, 144(%rsp)
	mov %r11, 152(%rsp)
	mov %r12, 160(%rsp)
	mov %r13, 168(%rsp)
	mov %r14, 176(%rsp)
	mov %r15, 184(%rsp)
	mov $\kind, %edi
	mov %rsp, %rsi
	call mt_sampler_ring_emit
	add $200, %rsp
	.cfi_adjust_cfa_offset -200
	ret
	.cfi_endproc
	.size \name, . - \name
	.endm

	/* kinds: MT_SAMPLE_RING_ALLOC, _FREE, _TOTALS, _TICK (sample_ring.h) */
	MARKER mt_sampler_mark_alloc 1
	MARKER mt_sampler_mark_free 2
	MARKER mt_sampler_mark_totals 3
	MARKER mt_sampler_mark_tick 4

/* void mt_sampler_report_totals(const uint64_t v[13]) and
 * mt_sampler_report_tick (same v): call mt_sampler_mark_totals (or _tick)
 * with v[0..12] in DI SI DX CX R8 R9 AX R10 R11 R12 R13 R14 R15 (four
 * pushes of callee-saved registers and 8 bytes more keep the call
 * aligned). */
	.macro REPORT name marker
	.globl \name
	.hidden \name
	.type \name, @function
	.p2align 4
\name:
	.cfi_startproc
	push %r12
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r12, 0
	push %r13
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r13, 0
	push %r14
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r14, 0
	push %r15
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %r15, 0
	sub $8, %rsp
	.cfi_adjust_cfa_offset 8
	mov 96(%rdi), %r15
	mov 88(%rdi), %r14
	mov 80(%rdi), %r13
	mov 72(%rdi), %r12
	mov 64(%rdi), %r11
	mov 56(%rdi), %r10
	mov 48(%rdi), %rax
	mov 40(%rdi), %r9
	mov 32(%rdi), %r8
	mov 24(%rdi), %rcx
	mov 16(%rdi), %rdx
	mov 8(%rdi), %rsi
	mov 0(%rdi), %rdi
	call \marker
	add $8, %rsp
	.cfi_adjust_cfa_offset -8
	pop %r15
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r15
	pop %r14
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r14
	pop %r13
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r13
	pop %r12
	.cfi_adjust_cfa_offset -8
	.cfi_restore %r12
	ret
	.cfi_endproc
	.size \name, . - \name

	.endm

	REPORT mt_sampler_report_totals mt_sampler_mark_totals
	REPORT mt_sampler_report_tick mt_sampler_mark_tick

	.section .note.GNU-stack, "", @progbits
