/* Helpers for the perf stream tests. */
#include "tests/codec/perf_test_util.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void pt_tmpdir(char *out, size_t len)
{
	const char *t = getenv("TMPDIR");

	snprintf(out, len, "%s/mt-perf-test.XXXXXX", t && *t ? t : "/tmp");
	cr_assert_not_null(mkdtemp(out), "mkdtemp: %s", strerror(errno));
}

void pt_tmpdir_remove(const char *dir)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		cr_log_warn("could not remove %s", dir);
}

static const char *fixtures(void)
{
	const char *f = getenv("MT_FIXTURES");

	return f && *f ? f : "build/fixtures";
}

void pt_fixture_path(char *out, size_t len)
{
	char path[PATH_MAX], real[PATH_MAX];

	snprintf(path, sizeof(path), "%s/perf_small", fixtures());
	cr_assert_not_null(realpath(path, real), "fixture %s: %s (build it with make)", path,
			   strerror(errno));
	snprintf(out, len, "%s", real);
}

uint8_t *pt_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0;

	cr_assert_not_null(f, "cannot open %s: %s", path, strerror(errno));
	for (;;) {
		size_t got;

		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			cr_assert_not_null(buf);
		}
		got = fread(buf + n, 1, cap - n, f);
		if (!got)
			break;
		n += got;
	}
	fclose(f);
	*len = n;
	return buf;
}

/* perf's messages when perf_event_open or tracefs is denied. */
static int denied(const char *err)
{
	return strstr(err, "perf_event_paranoid") || strstr(err, "Permission denied") ||
	       strstr(err, "Access to performance monitoring") ||
	       strstr(err, "No permission");
}

static char *slurp_text(const char *path)
{
	size_t len;
	uint8_t *b = pt_slurp(path, &len);

	b = realloc(b, len + 1);
	b[len] = 0;
	return (char *)b;
}

pid_t pt_perf_record(const char *dir, const char *args, int pipe_mode, const char *name)
{
	char cmd[4 * PATH_MAX], fixture[PATH_MAX], errpath[PATH_MAX], pidpath[PATH_MAX];
	char *err;
	int rc;
	long pid;
	FILE *f;

	pt_fixture_path(fixture, sizeof(fixture));
	snprintf(errpath, sizeof(errpath), "%s/%s.err", dir, name);
	snprintf(pidpath, sizeof(pidpath), "%s/%s.pid", dir, name);
	if (pipe_mode)
		snprintf(cmd, sizeof(cmd), "cd '%s' && perf record -q %s -o - -- '%s' '%s' "
			 "> '%s' 2> '%s'", dir, args, fixture, pidpath, name, errpath);
	else
		snprintf(cmd, sizeof(cmd), "cd '%s' && perf record -q %s -o '%s' -- '%s' '%s' "
			 "2> '%s'", dir, args, name, fixture, pidpath, errpath);
	rc = system(cmd);
	err = slurp_text(errpath);
	if (rc != 0 && denied(err))
		cr_skip_test("perf record cannot open events here (perf_event_paranoid or "
			     "CAP_PERFMON): %s", err);
	cr_assert_eq(rc, 0, "`%s` failed (status %d): %s", cmd, rc, err);
	free(err);
	f = fopen(pidpath, "r");
	cr_assert_not_null(f, "the fixture wrote no pid file %s", pidpath);
	cr_assert_eq(fscanf(f, "%ld", &pid), 1);
	fclose(f);
	return (pid_t)pid;
}

void pt_probe_add(char *event, size_t len)
{
	char cmd[512], group[64], errpath[] = "/tmp/mt-perf-probe.XXXXXX";
	char *err;
	int fd, rc;

	fd = mkstemp(errpath);
	cr_assert(fd >= 0);
	close(fd);
	/* perf probe wants event names unique across groups too. */
	snprintf(group, sizeof(group), "mtcodec%ld", (long)getpid());
	snprintf(event, len, "%s:malloc%ld", group, (long)getpid());
	snprintf(cmd, sizeof(cmd), "perf probe -x \"$(ldd /bin/true | sed -n "
		 "'s,.*=> \\(/[^ ]*libc\\.so[^ ]*\\).*,\\1,p')\" --add '%s=malloc' "
		 ">/dev/null 2> '%s'",
		 event, errpath);
	rc = system(cmd);
	err = slurp_text(errpath);
	unlink(errpath);
	/* Skip only when the system says no; any other failure is a failure. */
	if (rc != 0 && (strcasestr(err, "permission") || strstr(err, "tracefs") ||
			strstr(err, "uprobe_events") || strstr(err, "debugfs")))
		cr_skip_test("cannot add a uprobe with perf probe (needs root and tracefs "
			     "uprobe_events): %s", err);
	cr_assert_eq(rc, 0, "perf probe failed: %s", err);
	free(err);
}

void pt_probe_del(const char *event)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "perf probe -q -d '%s' 2>/dev/null", event);
	if (system(cmd) != 0)
		cr_log_warn("could not delete probe %s", event);
}

ssize_t pt_mem_read(void *ctx, void *buf, size_t len)
{
	struct pt_mem *m = ctx;
	size_t n = m->len - m->pos;

	if (n > len)
		n = len;
	if (m->chunk && n > m->chunk)
		n = m->chunk;
	memcpy(buf, m->data + m->pos, n);
	m->pos += n;
	return (ssize_t)n;
}

int pt_mem_reader(struct mt_perf_reader **r, struct pt_mem *m, const void *data, size_t len,
		  size_t chunk)
{
	m->data = data;
	m->len = len;
	m->pos = 0;
	m->chunk = chunk;
	return mt_perf_reader_new(r, pt_mem_read, m, "memory");
}

int pt_drain(struct mt_perf_reader *r, size_t max_items, size_t *items)
{
	struct mt_perf_item it;
	size_t n = 0;
	int ret;

	while ((ret = mt_perf_reader_next(r, &it)) == 1 && n < max_items)
		n++;
	if (items)
		*items = n;
	return ret;
}
