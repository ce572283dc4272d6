/* Which files and directories mt may trust (see trust.h). */
#include "common/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Owned by us or root, and no one else can write it (a sticky directory
 * may be written: its entries stay their owners'). */
static int owned_safely(const struct stat *st, const char *path, char *why, size_t len)
{
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(why, len, "%s%s%sowned by uid %u", path ? "'" : "", path ? path : "",
			 path ? "' is " : "", (unsigned)st->st_uid);
		return 0;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX))) {
		snprintf(why, len, "%s%s%swritable by %s", path ? "'" : "", path ? path : "",
			 path ? "' is " : "", st->st_mode & S_IWOTH ? "others" : "its group");
		return 0;
	}
	return 1;
}

int mt_dir_trusted(const char *dir, char *why, size_t len)
{
	char real[PATH_MAX];
	if (!realpath(dir, real)) {
		snprintf(why, len, "cannot resolve '%s': %s", dir, strerror(errno));
		return -1;
	}
	/* From the root down: once a directory is ours, what it holds stays so. */
	for (char *s = real;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;
		*s = '\0';
		const char *p = s == real ? "/" : real;
		struct stat st;
		if (lstat(p, &st) != 0) {
			int e = errno;
			snprintf(why, len, "cannot examine '%s': %s", p, strerror(e));
			errno = e;
			return -1;
		}
		if (!S_ISDIR(st.st_mode)) {
			snprintf(why, len, "'%s' is not a directory", p);
			errno = ENOTDIR;
			return -1;
		}
		int ok = owned_safely(&st, p, why, len);
		*s = c;
		if (!ok)
			return 0;
		if (!c)
			return 1;
	}
}

int mt_mkdirs_trusted(const char *dir, char *why, size_t len)
{
	char p[PATH_MAX];
	if (dir[0] != '/' || snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p)) {
		snprintf(why, len, "'%s' is not an absolute path", dir);
		errno = EINVAL;
		return -1;
	}
	/* Each directory is checked before anything is made inside it. */
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST) {
			int e = errno;
			snprintf(why, len, "cannot make '%s': %s", p, strerror(e));
			errno = e;
			return -1;
		}
		int t = mt_dir_trusted(p, why, len);
		*s = c;
		if (t != 1)
			return t;
		if (!c)
			return 1;
	}
}

int mt_file_trusted(const struct stat *st, char *why, size_t len)
{
	if (!S_ISREG(st->st_mode)) {
		snprintf(why, len, "not a regular file");
		return 0;
	}
	return owned_safely(st, NULL, why, len);
}

/* Is path's directory sticky and writable by others? */
static int in_shared_dir(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	struct stat st;
	return stat(dir, &st) == 0 && (st.st_mode & S_ISVTX) && (st.st_mode & S_IWOTH);
}

int mt_open_output(const char *path)
{
	int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
	if (in_shared_dir(path)) {
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
			errno = ELOOP;
			return -1;
		}
		flags |= O_NOFOLLOW;	/* nor one planted since */
	}
	return open(path, flags, 0600);
}

const char *mt_open_output_strerror(int err)
{
	return err == ELOOP ? "a symbolic link in a directory others can write (refused)"
			    : strerror(err);
}

int mt_path_absolute(const char *path, char *out, size_t cap)
{
	char cwd[PATH_MAX];
	if (path[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return -1;
	int n = snprintf(out, cap, "%s%s%s", path[0] == '/' ? "" : cwd, path[0] == '/' ? "" : "/",
			 path);
	if (n < 0 || (size_t)n >= cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}
