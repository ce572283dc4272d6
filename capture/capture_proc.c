/* Records for a process that was running before capture began: what the
 * kernel reports for a process it watches from the start (COMM, MMAP2),
 * rebuilt from /proc. */
#include "capture/capture_proc.h"
#include "codec/perf_stream.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

struct trailer {	/* sample_id_all with TID|TIME|IDENTIFIER */
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
};

static int emit(struct mt_perf_writer *w, uint32_t type, const void *body, size_t blen,
		const char *str, pid_t pid, pid_t tid, uint64_t id)
{
	uint8_t rec[sizeof(struct perf_event_header) + 64 + PATH_MAX + 8 + sizeof(struct trailer)];
	size_t slen = strlen(str) + 1, spad = (slen + 7) & ~(size_t)7;
	struct perf_event_header h = { .type = type, .misc = PERF_RECORD_MISC_USER };
	struct trailer t = { (uint32_t)pid, (uint32_t)tid, 0, id };
	size_t n = sizeof(h);
	if (blen > 64 || spad > PATH_MAX + 8)
		return -1;
	memcpy(rec + n, body, blen);
	n += blen;
	memset(rec + n, 0, spad);
	memcpy(rec + n, str, slen);
	n += spad;
	memcpy(rec + n, &t, sizeof(t));
	n += sizeof(t);
	h.size = (uint16_t)n;
	memcpy(rec, &h, sizeof(h));
	return mt_perf_writer_record(w, (const struct perf_event_header *)rec);
}

int mt_capture_proc_threads(pid_t pid, pid_t **tids, struct mt_capture_err *err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return errno == ENOENT ? mt_capture_err_set(err, MT_CAPTURE_ENOPROC, 0, path, NULL)
				       : mt_capture_err_set(err, MT_CAPTURE_EOPEN, errno, path, NULL);
	int n = 0, cap = 16;
	pid_t *v = malloc(sizeof(*v) * (size_t)cap);
	struct dirent *de;
	while (v && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		if (n == cap) {
			pid_t *nv = realloc(v, sizeof(*v) * (size_t)(cap *= 2));
			if (!nv) {
				free(v);
				v = NULL;
				break;
			}
			v = nv;
		}
		v[n++] = (pid_t)atoi(de->d_name);
	}
	closedir(d);
	if (!v || !n) {
		free(v);
		return mt_capture_err_set(err, v ? MT_CAPTURE_ENOTHREADS : MT_CAPTURE_ENOMEM, 0, path,
					  NULL);
	}
	*tids = v;
	return n;
}

static void read_comm(pid_t pid, pid_t tid, char *comm, size_t len)
{
	char path[96];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	FILE *f = fopen(path, "re");
	snprintf(comm, len, "?");
	if (f) {
		if (fgets(comm, (int)len, f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
}

int mt_capture_proc_synthesize(struct mt_perf_writer *w, pid_t pid, uint64_t id,
			       uint64_t *records, struct mt_capture_err *err)
{
	pid_t *tids;
	int nt = mt_capture_proc_threads(pid, &tids, err);
	if (nt < 0)
		return nt;
	for (int i = 0; i < nt; i++) {
		char comm[64];
		uint32_t body[2] = { (uint32_t)pid, (uint32_t)tids[i] };
		read_comm(pid, tids[i], comm, sizeof(comm));
		if (emit(w, PERF_RECORD_COMM, body, sizeof(body), comm, pid, tids[i], id))
			goto werr;
		++*records;
	}
	free(tids);

	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return mt_capture_err_set(err, MT_CAPTURE_EOPEN, errno, path, NULL);
	char line[PATH_MAX + 256];
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, end, pgoff, ino;
		unsigned maj, mn;
		char perms[8];
		int off = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &start, &end, perms, &pgoff, &maj, &mn, &ino, &off) < 7)
			continue;
		if (perms[2] != 'x')
			continue;	/* perf synthesizes executable mappings */
		char *name = line + off;
		name[strcspn(name, "\n")] = 0;
		if (!*name)
			name = "//anon";
		struct {
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t maj, min;
			uint64_t ino, ino_generation;
			uint32_t prot, flags;
		} m = {
			(uint32_t)pid, (uint32_t)pid, start, end - start, pgoff, maj, mn, ino, 0,
			(perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC,
			perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE,
		};
		if (emit(w, PERF_RECORD_MMAP2, &m, sizeof(m), name, pid, pid, id)) {
			fclose(f);
			goto werr_nofree;
		}
		++*records;
	}
	fclose(f);
	return 0;
werr:
	free(tids);
werr_nofree:
	return mt_capture_err_set(err, MT_CAPTURE_ESYNTH, 0, NULL, NULL);
}
