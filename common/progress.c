#include "common/progress.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The environment's MT_PROGRESS_DELAY_MS (a decimal number of milliseconds)
 * if it is one, else the default: tests set 0 to see the line at once. */
static uint64_t delay_ms(void)
{
	const char *s = getenv("MT_PROGRESS_DELAY_MS");
	if (!s || *s < '0' || *s > '9')
		return MT_PROGRESS_DELAY_MS;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || v > 86400000ull)
		return MT_PROGRESS_DELAY_MS;
	return v;
}

void mt_progress_init(struct mt_progress *p, const char *label, uint64_t total, int quiet)
{
	p->tty = (!quiet && isatty(STDERR_FILENO)) ? stderr : NULL;
	p->label = label;
	p->total = total;
	p->start_ns = now_ns();
	p->next_ns = p->start_ns + (p->tty ? delay_ms() * 1000000u : 0);
	p->shown = 0;
}

static void print_bytes(FILE *f, double b)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;
	while (b >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	fprintf(f, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
}

void mt_progress_update(struct mt_progress *p, uint64_t done)
{
	if (!p->tty)
		return;
	uint64_t t = now_ns();
	if (t < p->next_ns)
		return;
	p->next_ns = t + (uint64_t)MT_PROGRESS_PERIOD_MS * 1000000u;
	double secs = (double)(t - p->start_ns) / 1e9;
	double rate = secs > 0 ? (double)done / secs : 0;

	fprintf(p->tty, "\r%s: ", p->label);
	print_bytes(p->tty, (double)done);
	if (p->total) {
		fputs(" / ", p->tty);
		print_bytes(p->tty, (double)p->total);
		fprintf(p->tty, " (%.0f%%)", 100.0 * (double)done / (double)p->total);
	}
	fputs(", ", p->tty);
	print_bytes(p->tty, rate);
	fputs("/s", p->tty);
	if (p->total && rate > 0 && done <= p->total) {
		unsigned eta = (unsigned)((double)(p->total - done) / rate + 0.5);
		fprintf(p->tty, ", ETA %u:%02u", eta / 60, eta % 60);
	}
	fputs("\033[K", p->tty);	/* clear what a longer line left */
	fflush(p->tty);
	p->shown = 1;
}

void mt_progress_release(struct mt_progress *p)
{
	if (p->tty && p->shown) {
		fputs("\r\033[K", p->tty);
		fflush(p->tty);
	}
	p->shown = 0;
}

uint64_t mt_progress_input_size(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	return (uint64_t)st.st_size;
}
