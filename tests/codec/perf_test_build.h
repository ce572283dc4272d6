/* A hand-written pipe stream like mt-capture's: pipe header, two attrs
 * with names, then one record of each kind the library parses. */
#ifndef PERF_TEST_BUILD_H
#define PERF_TEST_BUILD_H

#include <stddef.h>
#include <stdint.h>

#define PT_PID 4242u
#define PT_TID 4243u
#define PT_TIME 1234567891234ULL
#define PT_IP 0x401234ULL
#define PT_ID_A1 101ULL
#define PT_ID_A2 102ULL
#define PT_ID_B 201ULL
#define PT_STACK 64u
#define PT_REG(i) (0x1000ULL + (i))
#define PT_REGS_MASK 0x181ULL		/* AX, SP, IP */
#define PT_UNKNOWN_TYPE 99

enum pt_kind {
	PT_PIPE_HEADER, PT_COMM, PT_FORK, PT_MMAP, PT_MMAP2_INODE, PT_MMAP2_BUILD_ID,
	PT_SAMPLE_A, PT_SAMPLE_B, PT_LOST, PT_LOST_SAMPLES, PT_UNKNOWN, PT_EXIT,
	PT_OTHER, PT_NR_KINDS
};

struct pt_stream {
	uint8_t *data;
	size_t len;
	/* Offsets of some records, for the hostile tests to damage. */
	size_t off_attr_a, off_sample_a, off_sample_b, off_mmap2;
};

/* Written through mt_perf_writer (header, attrs, names, records).
 * with_unknown adds a record of type PT_UNKNOWN_TYPE (perf rejects those). */
void pt_stream_build_ex(struct pt_stream *st, int with_unknown);
#define pt_stream_build(st) pt_stream_build_ex((st), 1)
void pt_stream_free(struct pt_stream *st);

#endif
