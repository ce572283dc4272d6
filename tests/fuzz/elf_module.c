/* Fuzz target: mt-unwind on an ELF file it did not expect, the way a
 * recording can lead it to one: its MMAP records name any path.  The
 * fuzzer's bytes are an ELF file (its CFI, symbols and DWARF drive the
 * unwinder's rule compiler, the symbol tables and the inline scopes) and
 * the registers and stack of a few samples taken in it; this target writes
 * the recording around them (pipe mode: an attr, COMM, MMAP2 naming the
 * file, the samples) and runs mt-unwind's main() on it, as unwind_stream.c
 * does.  Parsing the ELF file itself is libelf's and libdw's work.
 * Input: u16 n, then n bytes of ELF file, then the samples' material:
 *   byte 0: bit 0 --srcline, bit 1 --no-inline, bit 2 --addrs; then per
 *   sample (4) a u32 offset of its pc in the file and a u32 of its stack
 *   pointer below the dump's end; then 17 register values; the rest is the
 *   stack dump (at most 1024 bytes), the same for every sample.
 * It must end without a crash, a hang or a sanitizer report. */
#include "tests/fuzz/fuzz.h"

#include <asm/perf_regs.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/buf.h"
#include "codec/perf_stream.h"

#define PID 100u
#define BASE 0x400000u
#define STACK_TOP 0x7ff000000000ull
#define DUMP 1024u
#define NSAMPLES 4
#define NREGS 17	/* AX..R15 and IP, SP among them: perf's x86_64 mask below */
#define REGS_MASK 0xff01ffull

/* Appends n bytes at p.  @return : the end. */
static uint8_t *put(uint8_t *p, const void *v, size_t n)
{
	memcpy(p, v, n);
	return p + n;
}

static uint8_t *put_u64(uint8_t *p, uint64_t v)
{
	return put(p, &v, 8);
}

/* pid and tid, as records and sample_id trailers begin and end. */
static uint8_t *put_pid_tid(uint8_t *p)
{
	const uint32_t pt[2] = { PID, PID };
	return put(p, pt, 8);
}

/* The record of type (and misc) from u's header to p. */
static void emit(struct mt_perf_writer *w, struct perf_event_header *h, const uint8_t *p,
		 uint32_t type, uint16_t misc)
{
	*h = (struct perf_event_header){ .type = type, .misc = misc,
					 .size = (uint16_t)(p - (const uint8_t *)h) };
	mt_perf_writer_record(w, h);
}

/* The recording, written to fd. */
static int write_stream(int fd, const char *elf_path, size_t elf_len, const uint8_t *m,
			size_t mlen)
{
	struct mt_perf_writer *w;
	if (mt_perf_writer_new(&w, fd, "fuzz"))
		return -1;
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr), .config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		.sample_regs_user = REGS_MASK, .sample_stack_user = DUMP, .sample_id_all = 1,
	};
	uint64_t id = 1;
	mt_perf_writer_pipe_header(w);
	mt_perf_writer_attr(w, &attr, &id, 1);
	union {
		struct perf_event_header h;
		uint8_t b[65536];
	} u;
	uint8_t *body = u.b + sizeof(u.h), *p;

	/* COMM, then MMAP2 of the file; each with its sample_id trailer
	 * (pid, tid, time). */
	p = put(put_pid_tid(body), "fuzz\0\0\0", 8);
	p = put_u64(put_pid_tid(p), 1);
	emit(w, &u.h, p, PERF_RECORD_COMM, 0);

	uint64_t len = (elf_len + 4095) & ~(uint64_t)4095;
	if (!len)
		len = 4096;
	const uint64_t where[3] = { BASE, len, 0 };		/* addr, len, pgoff */
	const uint32_t dev[2] = { 0, 0 };
	const uint64_t ino[2] = { 1, 0 };			/* ino, ino_generation */
	const uint32_t prot[2] = { PROT_READ | PROT_EXEC, MAP_PRIVATE };
	p = put(put_pid_tid(body), where, sizeof(where));
	p = put(put(put(p, dev, sizeof(dev)), ino, sizeof(ino)), prot, sizeof(prot));
	size_t nlen = strlen(elf_path) + 1, padded = (nlen + 7) & ~(size_t)7;
	memset(p, 0, padded);
	p = put(p, elf_path, nlen) + (padded - nlen);
	p = put_u64(put_pid_tid(p), 2);
	emit(w, &u.h, p, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);

	/* the samples' material, zeros past what the input gives */
	uint8_t mat[8 * (2 * NSAMPLES + NREGS) + DUMP] = { 0 };
	memcpy(mat, m, mlen < sizeof(mat) ? mlen : sizeof(mat));
	size_t dyn = mlen > 8 * (2 * NSAMPLES + NREGS) ? mlen - 8 * (2 * NSAMPLES + NREGS) : 0;
	if (dyn > DUMP)
		dyn = DUMP;
	const uint8_t *regs = mat + 8 * NSAMPLES, *stack = regs + 8 * NREGS;
	for (unsigned k = 0; k < NSAMPLES; k++) {
		uint64_t ip = BASE + mt_ld32(mat + 8 * k) % len;
		uint64_t sp = STACK_TOP - DUMP + mt_ld32(mat + 8 * k + 4) % (DUMP + 64);
		p = put_u64(put_pid_tid(put_u64(body, ip)), 10 + k);	/* ip, pid, tid, time */
		p = put_u64(p, PERF_SAMPLE_REGS_ABI_64);
		for (unsigned r = 0, i = 0; r < 24; r++) {	/* mask bit order */
			if (!(REGS_MASK & (1ull << r)))
				continue;
			uint64_t v = mt_ld64(regs + 8 * i++);
			p = put_u64(p, r == PERF_REG_X86_IP ? ip : r == PERF_REG_X86_SP ? sp : v);
		}
		p = put_u64(put(put_u64(p, DUMP), stack, DUMP), dyn);	/* size, data, dyn_size */
		emit(w, &u.h, p, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	}
	return mt_perf_writer_free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	size_t n = mt_ld16(data);
	if (n > size - 2)
		n = size - 2;
	const uint8_t *m = data + 2 + n;
	size_t mlen = size - 2 - n;
	unsigned opt = mlen ? m[0] : 0;
	int elf = mt_fuzz_memfd("fuzz-elf", data + 2, n), rec = -1;
	char elf_path[64];
	snprintf(elf_path, sizeof(elf_path), "/proc/self/fd/%d", elf);
	if (elf < 0 || (rec = mt_fuzz_memfd("fuzz-rec", "", 0)) < 0 ||
	    write_stream(rec, elf_path, n, mlen ? m + 1 : m, mlen ? mlen - 1 : 0) != 0)
		goto out;
	const char *opts[4];
	int k = 0;
	if (opt & 1)
		opts[k++] = "--srcline";
	if (opt & 2)
		opts[k++] = "--no-inline";
	if (opt & 4)
		opts[k++] = "--addrs";
	opts[k] = NULL;
	mt_fuzz_unwind(rec, opts);
out:
	if (elf >= 0)
		close(elf);
	if (rec >= 0)
		close(rec);
	return 0;
}
