/* The files a capture needs besides its events (see capture_files.h). */
#include "capture/capture_files.h"
#include "common/trust.h"
#include "common/self.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mt_capture_command_check(const char *cmd, struct mt_capture_err *err)
{
	struct stat sb;
	if (strchr(cmd, '/')) {
		if (access(cmd, X_OK) != 0)
			return mt_capture_err_set(err, errno == ENOENT ? MT_CAPTURE_ENOTFOUND
						  : MT_CAPTURE_ECANTRUN, errno, cmd, NULL);
		if (stat(cmd, &sb) == 0 && S_ISDIR(sb.st_mode))
			return mt_capture_err_set(err, MT_CAPTURE_ECANTRUN, EISDIR, cmd, NULL);
		return 0;
	}
	/* As execvp: the first executable file of that name in $PATH; when
	 * there is none but one that cannot be executed, that one's error. */
	const char *path = getenv("PATH");
	int denied = 0;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;; p++) {
		const char *e = strchrnul(p, ':');
		char full[PATH_MAX];
		snprintf(full, sizeof(full), "%.*s/%s", (int)(e - p), e == p ? "." : p, cmd);
		if (stat(full, &sb) == 0 && S_ISREG(sb.st_mode)) {
			if (access(full, X_OK) == 0)
				return 0;
			denied = 1;
		}
		if (!*e)
			break;
		p = e;
	}
	if (denied)
		return mt_capture_err_set(err, MT_CAPTURE_ECANTRUN, EACCES, cmd, NULL);
	return mt_capture_err_set(err, MT_CAPTURE_ENOTFOUND, 0, cmd, "command not found");
}

/* $MT_SAMPLER, else libmt-sampler.so beside this program, into out
 * (PATH_MAX bytes, the real path).  @return : 0 or -1. */
static int sampler_path(char *out)
{
	const char *env = getenv("MT_SAMPLER");
	if (env && *env)
		return realpath(env, out) ? 0 : -1;
	char dir[PATH_MAX];
	if (mt_self_dir(dir, sizeof(dir)))
		return -1;
	static const char *const rel[] = { "../lib/mt/", "../", "" };
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char cand[PATH_MAX * 2];
		snprintf(cand, sizeof(cand), "%s/%slibmt-sampler.so", dir, rel[i]);
		if (access(cand, R_OK) == 0 && realpath(cand, out))
			return 0;
	}
	return -1;
}

int mt_capture_find_sampler(char *out, struct mt_capture_err *err)
{
	if (sampler_path(out))
		return mt_capture_err_set(err, MT_CAPTURE_ENOSAMPLER, 0, NULL, NULL);
	const char *base = strrchr(out, '/') ? strrchr(out, '/') + 1 : out;
	if (strncmp(base, "libmt-sampler.so", 16))
		return mt_capture_err_set(err, MT_CAPTURE_ESAMPLERNAME, 0, out, NULL);
	return 0;
}

char *mt_capture_preload_the_copy(const char *real, const char *copy)
{
	const char *old = getenv("LD_PRELOAD");
	if (!old || !*old)
		return NULL;
	size_t cap = sizeof("LD_PRELOAD=") + strlen(old) * (strlen(copy) + 1);
	char *out = malloc(cap), *o = out, entry[PATH_MAX], found[PATH_MAX];
	if (!out)
		return NULL;
	o += sprintf(o, "LD_PRELOAD=");
	int replaced = 0, first = 1;
	for (const char *p = old; *p; ) {
		size_t n = strcspn(p, ": ");
		if (n) {
			int same = 0;
			if (n < sizeof(entry)) {
				memcpy(entry, p, n);
				entry[n] = 0;
				same = strchr(entry, '/') && realpath(entry, found) && !strcmp(found, real);
			}
			if (!first)
				*o++ = ':';
			first = 0;
			if (same) {
				o += sprintf(o, "%s", copy);
				replaced = 1;
			} else {	/* as it was, however long */
				memcpy(o, p, n);
				o += n;
				*o = 0;
			}
		}
		p += n;
		p += strspn(p, ": ");
	}
	if (!replaced) {
		free(out);
		return NULL;
	}
	return out;
}

const char *mt_capture_copy_base(char *why, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	why[0] = 0;
	if (!tmp || !*tmp)
		return "/tmp";
	char reason[PATH_MAX + 64];
	int t = mt_dir_trusted(tmp, reason, sizeof(reason));
	if (t == 1)
		return tmp;
	snprintf(why, len, "TMPDIR '%s' is not safe for private copies (%s): using /tmp", tmp,
		 reason);
	return "/tmp";
}

int mt_capture_private_copy(const char *file, const char *base, char *dir, char *copy,
			    struct mt_capture_err *err)
{
	char reason[PATH_MAX + 64];
	if (mt_dir_trusted(base, reason, sizeof(reason)) != 1) {
		dir[0] = 0;
		return mt_capture_err_set(err, MT_CAPTURE_ECOPY, 0, file, reason);
	}
	snprintf(dir, PATH_MAX, "%s/mt-capture.XXXXXX", base);
	/* 0755 once made: a command run as another user (capture_run.c) reads
	 * the copies; no one else can change them. */
	int made = mkdtemp(dir) != NULL;
	if (!made || chmod(dir, 0755) != 0) {
		int e = errno;
		if (made)
			rmdir(dir);
		dir[0] = 0;
		return mt_capture_err_set(err, MT_CAPTURE_ECOPY, e, file, NULL);
	}
	char to[PATH_MAX], name[PATH_MAX];
	snprintf(name, sizeof(name), "%s", file);
	snprintf(to, sizeof(to), "%.*s/%s", PATH_MAX / 2, dir, basename(name));
	int in = open(file, O_RDONLY | O_CLOEXEC), out = -1, e = 0;
	if (in < 0 || (out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755)) < 0) {
		e = errno;
	} else {
		char buf[65536];
		ssize_t n, w = 0;
		while ((n = read(in, buf, sizeof(buf))) > 0 && (w = write(out, buf, (size_t)n)) == n)
			;
		if (n < 0 || w < 0)
			e = errno;
		else if (n > 0)
			e = EIO;	/* a short write without an error */
	}
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) != 0 && !e)
		e = errno;
	if (e) {
		unlink(to);
		rmdir(dir);
		dir[0] = 0;
		return mt_capture_err_set(err, MT_CAPTURE_ECOPY, e, file, NULL);
	}
	snprintf(copy, PATH_MAX, "%s", to);
	return 0;
}

int mt_capture_find_mapped(pid_t pid, const char *prefix, char *out, size_t len)
{
	char path[64], line[PATH_MAX + 256];
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	FILE *f = fopen(path, "re");
	if (!f)
		return 1;
	int rc = 1;
	while (rc && fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '/');
		if (!name)
			continue;
		name[strcspn(name, "\n")] = 0;
		const char *base = strrchr(name, '/') + 1;
		if (!strncmp(base, prefix, strlen(prefix))) {
			snprintf(out, len, "%s", name);
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}
