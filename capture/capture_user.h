/* Whom the command runs as.  mt-capture needs root for uprobes, -p and
 * perf_event_paranoid; the command does not: under sudo it runs as the
 * user who ran sudo (SUDO_UID, SUDO_GID), with that user's groups, HOME,
 * USER and LOGNAME; --user NAME says whom; --as-root keeps root.  See
 * docs/SECURITY.md.  Errors as in capture_err.h. */
#ifndef MT_CAPTURE_USER_H
#define MT_CAPTURE_USER_H

#include "capture/capture_err.h"

#include <limits.h>
#include <sys/types.h>

struct mt_capture_user {
	int change;		/* 0: the command runs as mt-capture does */
	uid_t uid;
	gid_t gid;
	char name[256];
	char home[PATH_MAX];
};

/* Choose: name (--user, or NULL), else SUDO_UID/SUDO_GID when mt-capture
 * runs as root, unless as_root (--as-root).
 * @return : 0; MT_CAPTURE_EUSER for a name or a SUDO_UID no user has, or
 * --user without root (err filled). */
int mt_capture_user_choose(const char *name, int as_root, struct mt_capture_user *u,
			   struct mt_capture_err *err);

/* Become u (u->change set): groups, group, user, in that order, and the
 * environment's HOME, USER and LOGNAME; dumpable again, as a process
 * started by u would be.  For a child before exec.
 * @return : 0, or -1 (errno). */
int mt_capture_user_become(const struct mt_capture_user *u);

/* A child that becomes u and holds fd open until *release (a pipe's write
 * end) is closed or mt-capture ends: a process of u's, whose
 * /proc/PID/fd/FD u's processes may open, as they may not mt-capture's
 * (root's).  The sample ring is handed over so (capture_ring.h).
 * @return : its pid, or -1 (errno: fork's, or why it could not become u;
 * nothing is left running). */
pid_t mt_capture_user_hold(const struct mt_capture_user *u, int fd, int *release);

/* End a holder: close release, wait for pid. */
void mt_capture_user_release(pid_t pid, int release);

#endif
