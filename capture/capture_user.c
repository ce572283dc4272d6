/* Whom the command runs as (see capture_user.h). */
#include "capture/capture_user.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* A decimal id, as sudo writes SUDO_UID.  @return : 0, or -1. */
static int parse_id(const char *s, unsigned long *v)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno || *end || *v > 0xfffffffeul ? -1 : 0;
}

static void fill(struct mt_capture_user *u, const struct passwd *pw, gid_t gid)
{
	u->change = 1;
	u->uid = pw->pw_uid;
	u->gid = gid;
	snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
	snprintf(u->home, sizeof(u->home), "%s", pw->pw_dir ? pw->pw_dir : "/");
}

int mt_capture_user_choose(const char *name, int as_root, struct mt_capture_user *u,
			   struct mt_capture_err *err)
{
	memset(u, 0, sizeof(*u));
	if (name) {
		if (geteuid() != 0)
			return mt_capture_err_set(err, MT_CAPTURE_EUSER, EPERM, name, NULL);
		struct passwd *pw = getpwnam(name);
		unsigned long id;
		if (!pw && parse_id(name, &id) == 0)
			pw = getpwuid((uid_t)id);
		if (!pw)
			return mt_capture_err_set(err, MT_CAPTURE_EUSER, 0, name, "no such user");
		fill(u, pw, pw->pw_gid);
		return 0;
	}
	if (as_root || geteuid() != 0)
		return 0;
	const char *suid = getenv("SUDO_UID");
	unsigned long uid, gid;
	if (!suid)
		return 0;
	if (parse_id(suid, &uid) != 0)
		return mt_capture_err_set(err, MT_CAPTURE_EUSER, 0, suid, "not a user id (SUDO_UID)");
	if (uid == 0)
		return 0;	/* sudo from root */
	struct passwd *pw = getpwuid((uid_t)uid);
	if (!pw)
		return mt_capture_err_set(err, MT_CAPTURE_EUSER, 0, suid, "no such user (SUDO_UID)");
	fill(u, pw, parse_id(getenv("SUDO_GID"), &gid) == 0 ? (gid_t)gid : pw->pw_gid);
	return 0;
}

int mt_capture_user_become(const struct mt_capture_user *u)
{
	if (initgroups(u->name, u->gid) != 0 || setgid(u->gid) != 0 || setuid(u->uid) != 0)
		return -1;
	/* A changed uid is lost for good, or it was not changed. */
	if (setuid(0) == 0 || getuid() != u->uid || geteuid() != u->uid) {
		errno = EPERM;
		return -1;
	}
	/* Changing credentials cleared it; the command's own exec sets it as
	 * for any program of u's (needed by the sample ring: ring_holder). */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	if (setenv("HOME", u->home, 1) || setenv("USER", u->name, 1) ||
	    setenv("LOGNAME", u->name, 1))
		return -1;
	return 0;
}

pid_t mt_capture_user_hold(const struct mt_capture_user *u, int fd, int *release)
{
	int hold[2], ready[2];
	if (pipe2(hold, O_CLOEXEC) != 0)
		return -1;
	if (pipe2(ready, O_CLOEXEC) != 0) {
		close(hold[0]);
		close(hold[1]);
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(hold[1]);
		close(ready[0]);
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {	/* hold none of mt-capture's pipes open */
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
		}
		int e = mt_capture_user_become(u) ? errno : 0;
		if (write(ready[1], &e, sizeof(e)) != sizeof(e) || e)
			_exit(1);
		close(ready[1]);
		char c;
		while (read(hold[0], &c, 1) < 0 && errno == EINTR)
			;
		(void)fd;	/* held until now */
		_exit(0);
	}
	int e = errno;
	close(hold[0]);
	close(ready[1]);
	if (pid > 0) {
		ssize_t n;
		while ((n = read(ready[0], &e, sizeof(e))) < 0 && errno == EINTR)
			;
		if (n != sizeof(e))
			e = ECHILD;
		if (e) {
			mt_capture_user_release(pid, hold[1]);
			pid = -1;
		}
	} else {
		close(hold[1]);
	}
	close(ready[0]);
	if (pid < 0) {
		errno = e;
		return -1;
	}
	*release = hold[1];
	return pid;
}

void mt_capture_user_release(pid_t pid, int release)
{
	close(release);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}
