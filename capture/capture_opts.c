/* mt-capture's command line (see capture_opts.h). */
#include "capture/capture_opts.h"
#include "codec/perf_stream.h"
#include "common/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
	"usage: mt-capture [options] [--] COMMAND [ARGS...]\n"
	"       mt-capture [options] -p PID\n"
	"\n"
	"Capture allocations (or any perf event) with user stacks as a perf pipe\n"
	"stream on stdout, for mt-encode, mt-unwind or `perf script -i`.\n"
	"\n"
	"Modes:\n"
	"  --mode sample   (default with a command) preload libmt-sampler.so: byte-sampled\n"
	"                  allocations with stacks, frees of sampled pointers, exact totals\n"
	"  --mode trace    (default with -p) uprobes on every allocator call in libc or --lib\n"
	"  --mode event    (default with -e) any perf event, e.g. -e cpu-clock -F 999\n"
	"\n"
	"Options:\n"
	"  -o, --output FILE      write the stream to FILE instead of stdout\n"
	"  -p, --pid PID          attach to a running process (trace, event; sample if it\n"
	"                         already preloads libmt-sampler.so)\n"
	"      --rate BYTES       sample mode: mean bytes between sample points (524288);\n"
	"                         1 records every allocation\n"
	"      --seed N           sample mode: reproducible sampling (default: fresh seed)\n"
	"      --lib PATH         trace mode: the allocator to probe (default: libc)\n"
	"  -e, --event NAME       event mode: the event (cpu-clock, task-clock, cycles, ...,\n"
	"                         a tracepoint SYSTEM:EVENT such as sched:sched_switch,\n"
	"                         a raw hardware event rHEX)\n"
	"  -F, --freq HZ          event mode: samples per second (default 999; tracepoints:\n"
	"                         every hit unless -F or -c)\n"
	"  -c, --count N          event mode: a sample every N events; trace mode: record\n"
	"                         every Nth call of each function (no return probes)\n"
	"      --stack-size N     bytes of user stack per sample, at most 65528; default\n"
	"                         65528 in sample mode (the copy stops where the\n"
	"                         thread's frames end) and event mode at -F; 8192\n"
	"                         where every call or hit is a sample and perf copies\n"
	"                         the whole size for each: trace mode, sample mode\n"
	"                         with -p or --no-ring, a tracepoint without -F, -c\n"
	"      --mmap-pages N     ring buffer pages per CPU, a power of two (512); sample\n"
	"                         mode's sample ring is 4 times that\n"
	"      --no-ring          sample mode: the sampler's events reach mt-capture through\n"
	"                         uprobes on its markers, not a shared ring (slower)\n"
	"      --no-wait          sample mode: when the sample ring is full, drop samples\n"
	"                         (counted as lost) instead of making the program wait\n"
	"      --no-timeline      sample mode: no ticker thread in the program (memory\n"
	"                         over time every 10 ms): ticks at start and end only,\n"
	"                         for programs that must stay single-threaded\n"
	"      --strict           exit 125 when the capture lost anything (samples, LOST\n"
	"                         records, sample ring records), not the command's status\n"
	"      --user NAME        run the command as user NAME (name or uid), with its\n"
	"                         groups; needs root\n"
	"      --as-root          under sudo, run the command as root (the default runs\n"
	"                         it as the user who ran sudo: SUDO_UID, SUDO_GID)\n"
	"  -h, --help             this text\n"
	"\n"
	"Environment: MT_SAMPLER=PATH overrides where libmt-sampler.so is found\n"
	"(default: DIR/../lib/mt, DIR/.. and DIR, DIR holding mt-capture). Sample mode\n"
	"keeps a copy of each sampler build in $XDG_CACHE_HOME/mt/build-id (else\n"
	"~/.cache/mt/build-id), for mt-unwind once mt is rebuilt or upgraded.\n"
	"\n"
	"At the end one line on stderr: samples, lost samples, bytes, duration; what\n"
	"was lost is said there, and changes the exit status only with --strict.\n"
	"\n"
	"Exit status, as env(1) and timeout(1):\n"
	"  the command's   when the capture succeeded (128+N when signal N killed it;\n"
	"                  with -p: 0); 128+N when a second SIGINT/SIGTERM N ended\n"
	"                  the capture (the stream complete, the command killed)\n"
	"  125             mt-capture failed: usage; perf_event_open denied\n"
	"                  (perf_event_paranoid / CAP_PERFMON); sampler or uprobe PMU\n"
	"                  missing; unknown event or tracepoint, tracefs unreadable;\n"
	"                  the output cannot be opened or written (also after the\n"
	"                  command ran); with --strict, data lost\n"
	"  126             the command was found but cannot be run\n"
	"  127             the command was not found\n";

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	if (!s || !*s || *s == '-')
		return -1;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

/* The checks of what the options mean together.  @return : 0 or -1 (said). */
static int check(struct mt_capture_opts *o, const char *mode, uint64_t pid, uint64_t stack,
		 int stack_given, uint64_t pages)
{
	if (!o->cmd == !pid)
		return mt_error("give a command or -p PID (one of them)");
	if (pid > INT32_MAX)
		return mt_error("invalid pid");
	o->pid = (pid_t)pid;
	o->mode = o->event ? MT_CAPTURE_EVENT : pid ? MT_CAPTURE_TRACE : MT_CAPTURE_SAMPLE;
	if (mode) {
		if (!strcmp(mode, "sample"))
			o->mode = MT_CAPTURE_SAMPLE;
		else if (!strcmp(mode, "trace"))
			o->mode = MT_CAPTURE_TRACE;
		else if (!strcmp(mode, "event"))
			o->mode = MT_CAPTURE_EVENT;
		else
			return mt_error("unknown mode '%s' (sample, trace or event)", mode);
	}
	if (stack > 65528 || stack % 8)
		return mt_error("--stack-size must be a multiple of 8, at most 65528");
	/* The sample ring copies only the thread's frames
	 * (capture/sampler_ring.c); perf copies the whole size for every
	 * sample.  A frequency bounds how many samples come; where every
	 * call or hit is one (uprobes: trace mode, sample mode with -p or
	 * --no-ring; a tracepoint without -F; -c), 64 KiB copies lose
	 * samples when they come fast (docs/BENCHMARKS.md, "Stack size"). */
	if (!stack_given) {
		uint32_t type;
		uint64_t config;
		int tracepoint = o->event && strchr(o->event, ':') &&
				 !mt_perf_event_by_name(o->event, &type, &config);
		int every_hit = o->mode == MT_CAPTURE_TRACE ||
				(o->mode == MT_CAPTURE_SAMPLE && (pid || o->no_ring)) ||
				(o->mode == MT_CAPTURE_EVENT && !o->freq && (o->count || tracepoint));
		stack = every_hit ? 8192 : 65528;
	}
	o->stack_size = (unsigned)stack;
	if (!pages || (pages & (pages - 1)) || pages > (1u << 20))
		return mt_error("--mmap-pages must be a power of two");
	o->mmap_pages = (unsigned)pages;
	if (!o->rate)
		return mt_error("--rate must be at least 1");
	if (o->freq && o->count)
		return mt_error("-F and -c exclude each other");
	if (o->event && o->mode != MT_CAPTURE_EVENT)
		return mt_error("-e needs --mode event");
	if (o->freq && o->mode != MT_CAPTURE_EVENT)
		return mt_error("-F is for event mode");
	if (o->count && o->mode == MT_CAPTURE_SAMPLE)
		return mt_error("-c is for trace and event modes (sample mode: --rate)");
	if (o->lib && o->mode != MT_CAPTURE_TRACE)
		return mt_error("--lib is for trace mode");
	if (o->no_ring && (o->mode != MT_CAPTURE_SAMPLE || pid))
		return mt_error("--no-ring is for sample mode with a command (-p always uses uprobes)");
	if (o->no_wait && (o->mode != MT_CAPTURE_SAMPLE || pid || o->no_ring))
		return mt_error("--no-wait is for sample mode with a command through the sample ring "
				"(uprobe events cannot wait)");
	if (o->no_timeline && (o->mode != MT_CAPTURE_SAMPLE || pid))
		return mt_error("--no-timeline is for sample mode with a command (a running "
				"process keeps its sampler's ticker)");
	if ((o->user || o->as_root) && !o->cmd)
		return mt_error("--user and --as-root are for a command mt-capture runs");
	if (o->user && o->as_root)
		return mt_error("--user and --as-root exclude each other");
	return 0;
}

int mt_capture_opts_parse(int argc, char **argv, struct mt_capture_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "rate", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 's' },
		{ "lib", required_argument, NULL, 'l' },
		{ "event", required_argument, NULL, 'e' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "stack-size", required_argument, NULL, 'S' },
		{ "mmap-pages", required_argument, NULL, 'M' },
		{ "no-ring", no_argument, NULL, 'R' },
		{ "no-wait", no_argument, NULL, 'W' },
		{ "no-timeline", no_argument, NULL, 'T' },
		{ "strict", no_argument, NULL, 'X' },
		{ "user", required_argument, NULL, 'u' },
		{ "as-root", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *mode = NULL;
	uint64_t pid = 0, stack = 0, pages = 512;
	int opt, at = -1, stack_given = 0;
	*o = (struct mt_capture_opts){ .rate = 524288 };

	while ((opt = getopt_long(argc, argv, "+o:p:e:F:c:h", longopts, &at)) != -1) {
		uint64_t *num = NULL;
		switch (opt) {
		case 'o': o->output = optarg; break;
		case 'm': mode = optarg; break;
		case 'l': o->lib = optarg; break;
		case 'e':
			if (o->event)	/* one event per capture: not the last one silently */
				return mt_error("-e given twice ('%s', '%s'): one event per capture",
						o->event, optarg);
			o->event = optarg;
			break;
		case 'p': num = &pid; break;
		case 'r': num = &o->rate; break;
		case 's': num = &o->seed; o->seeded = 1; break;
		case 'F': num = &o->freq; break;
		case 'c': num = &o->count; break;
		case 'S': num = &stack; stack_given = 1; break;
		case 'M': num = &pages; break;
		case 'R': o->no_ring = 1; break;
		case 'W': o->no_wait = 1; break;
		case 'T': o->no_timeline = 1; break;
		case 'X': o->strict = 1; break;
		case 'u': o->user = optarg; break;
		case 'A': o->as_root = 1; break;
		case 'h': fputs(usage_text, stdout); return 1;
		default: return -1;	/* getopt said why */
		}
		if (num && parse_u64(optarg, num))
			return at >= 0 ? mt_error("invalid number '%s' for --%s", optarg, longopts[at].name)
				       : mt_error("invalid number '%s' for -%c", optarg, opt);
		at = -1;
	}
	o->cmd = optind < argc ? argv + optind : NULL;
	return check(o, mode, pid, stack, stack_given, pages);
}
