/* The events a capture opens: their perf attrs for the three modes
 * (sample, trace, event; attr fields: docs/formats/capture-events.md). */
#ifndef MT_CAPTURE_EVENTS_H
#define MT_CAPTURE_EVENTS_H

#include "capture/capture_err.h"

#include <linux/perf_event.h>
#include <stdint.h>

#define MT_CAPTURE_MAX_EVENTS 24

/* x86_64 perf registers AX..R15 without DS ES FS GS: what perf itself asks
 * for with --call-graph dwarf, and what the unwinder needs anywhere in a
 * function (event and trace modes; mt:totals, which uses thirteen of them). */
#define MT_CAPTURE_REGS_MASK 0xff0fffULL
/* The kernel writes a sample's registers one by one, each at a cost
 * (bench/capture.sh), so sample mode's markers ask only for what is read
 * there.  mt:alloc: the arguments DI SI DX CX R8 and what unwinding from a
 * function's entry can use (BX BP SP IP R12..R15: the callee-saved
 * registers and the stack ones; the caller-saved rest holds nothing a
 * caller's frame rule refers to at a call), and R9 (seq).  mt:free: the
 * arguments and R9 (seq). */
#define MT_CAPTURE_REGS_ENTRY 0xf301feULL
#define MT_CAPTURE_REGS_ARGS 0x3003cULL

/* posix_memalign's return probe copies this much of the stack above its
 * caller's stack pointer: the block's address is stored through memptr,
 * usually a local of the caller or of a wrapper just above it. */
#define MT_CAPTURE_MEMPTR_DUMP 1024

struct mt_capture_events;

/* An empty list of events, for the mode functions below to fill.
 * @return : 0 with *out (freed with mt_capture_events_free), or
 * MT_CAPTURE_ENOMEM. */
int mt_capture_events_new(struct mt_capture_events **out);

/* evs may be NULL. */
void mt_capture_events_free(struct mt_capture_events *evs);

/* @return : how many events evs holds (at most MT_CAPTURE_MAX_EVENTS). */
int mt_capture_events_nr(const struct mt_capture_events *evs);

/* Event i's name as the stream gives it (mt:alloc, probe_libc:malloc,
 * cpu-clock, ...), valid as long as evs. */
const char *mt_capture_events_name(const struct mt_capture_events *evs, int i);

/* Event i's attr, to open it with, and to adjust before (inherit, disabled,
 * enable_on_exec ...).  Valid, and at the same place, as long as evs: a
 * uprobe's config1 (uprobe_path) points to its path inside evs. */
struct perf_event_attr *mt_capture_events_attr(struct mt_capture_events *evs, int i);

/* The file that uprobe i probes, or NULL when event i is not a uprobe. */
const char *mt_capture_events_uprobe_path(const struct mt_capture_events *evs, int i);

/* 0 for an event to open; else the kind of sample ring record whose
 * samples event i stands for (MT_SAMPLE_RING_ALLOC, ...): not opened, its
 * samples are written from the ring. */
int mt_capture_events_ring_kind(const struct mt_capture_events *evs, int i);

/* Put a software dummy event ("dummy:u") first, before the events evs
 * holds (at least one), with the first one's attr, and move the side-band
 * records (MMAP2, COMM, FORK/EXIT, build-ids) from that one to the dummy:
 * the events behind can then be opened differently (on other tasks or
 * CPUs) without losing the command's mappings.
 * @return : 0, or MT_CAPTURE_ETOOMANY (err filled). */
int mt_capture_events_track_apart(struct mt_capture_events *evs, struct mt_capture_err *err);

/* The uprobe PMU's type from sysfs.  @return : the type (>= 0), or
 * MT_CAPTURE_ENOUPROBE, EUPROBETYPE (err filled). */
int mt_capture_uprobe_type(struct mt_capture_err *err);

/* Add the sample mode's markers in sampler (mt:alloc, mt:free, mt:totals):
 * uprobes, or with ring, events written from the sample ring (then every
 * event's clock is CLOCK_MONOTONIC, the ring's).  @return : 0, or
 * MT_CAPTURE_ENOTSAMPLER (a marker is missing), or the codes of
 * mt_capture_elf_func_offset, mt_capture_uprobe_type, ETOOMANY (err). */
int mt_capture_events_sample(struct mt_capture_events *evs, const char *sampler,
			     unsigned stack_size, int ring, struct mt_capture_err *err);

/* Add trace mode's entry (and, when period is 1, return) probes on the
 * allocator functions lib defines.  @return : 0, or MT_CAPTURE_ENOALLOCATOR
 * (none), or the codes of mt_capture_elf_func_offset, mt_capture_uprobe_type,
 * ETOOMANY (err). */
int mt_capture_events_trace(struct mt_capture_events *evs, const char *lib,
			    unsigned stack_size, uint64_t period, struct mt_capture_err *err);

/* Add one event by name (cpu-clock, cycles, ...; a tracepoint SYSTEM:EVENT;
 * a raw hardware event rHEX), freq Hz when freq is not 0, else every period
 * events; neither: 999 Hz, or every hit of a tracepoint.
 * @return : 0, or MT_CAPTURE_EEVENT (no such event), ETPNAME, ETPUNKNOWN,
 * ETPDENIED, ENOTRACEFS (a tracepoint: see tracepoint_id), ETOOMANY (err). */
int mt_capture_events_named(struct mt_capture_events *evs, const char *name,
			    unsigned stack_size, uint64_t freq, uint64_t period,
			    struct mt_capture_err *err);

#endif
