/* mt: finding the stage programs and running them (see run.h). */
#include "front/run.h"
#include "common/cli.h"
#include "common/self.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int executable(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

char *mt_front_stage(const char *name)
{
	static const char *const near[] = { "%s/%s", "%s/../bin/%s" };
	static const char *const scripts[] = { "%s/../../scripts/%s", "%s/../../../scripts/%s" };
	char dir[PATH_MAX];
	if (mt_self_dir(dir, sizeof(dir))) {
		mt_error("cannot find %s: /proc/self/exe cannot be read: %s", name, strerror(errno));
		return NULL;
	}
	char path[PATH_MAX + 64];
	for (int pass = 0; pass < 2; pass++) {
		const char *const *fmt = pass ? scripts : near;
		if (pass && strcmp(name, "mt-flamegraph") != 0 && strcmp(name, "mt-html") != 0)
			break;
		for (int i = 0; i < 2; i++) {
			snprintf(path, sizeof(path), fmt[i], dir, name);
			if (executable(path))
				return strdup(path);
		}
	}
	mt_error("cannot find %s beside mt in '%s' (nor in '%s/../bin'): "
		 "is mt installed with the other mt programs?", name, dir, dir);
	return NULL;
}

int mt_front_pipe(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC) == 0)
		return 0;
	return mt_error("cannot make a pipe: %s", strerror(errno));
}

void mt_front_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

pid_t mt_front_spawn(char *const argv[], int in, int out, const int *keep, int nkeep,
		     const char *dir, int flags)
{
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		mt_error("cannot run %s: %s", argv[0], strerror(errno));
		return -1;
	}
	if (pid > 0)
		return pid;
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, flags & MT_SPAWN_NO_INT ? SIG_IGN : SIG_DFL);
	signal(SIGQUIT, flags & MT_SPAWN_NO_INT ? SIG_IGN : SIG_DFL);
	if ((in >= 0 && dup2(in, STDIN_FILENO) < 0) || (out >= 0 && dup2(out, STDOUT_FILENO) < 0))
		_exit(MT_EXIT_ENV);
	for (int i = 0; i < nkeep; i++) {
		int fl = fcntl(keep[i], F_GETFD);
		if (fl < 0 || fcntl(keep[i], F_SETFD, fl & ~FD_CLOEXEC) < 0)
			_exit(MT_EXIT_ENV);
	}
	if (dir && chdir(dir) != 0) {
		mt_error("cannot enter '%s': %s", dir, strerror(errno));
		_exit(MT_EXIT_ENV);
	}
	execv(argv[0], argv);
	mt_error("cannot run '%s': %s", argv[0], strerror(errno));
	_exit(MT_EXIT_ENV);
}

int mt_front_wait(pid_t pid, const char *name, int quiet)
{
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			mt_error("cannot wait for %s: %s", name, strerror(errno));
			return MT_EXIT_ENV;
		}
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	int sig = WTERMSIG(st);
	if (!((quiet >= 1 && sig == SIGPIPE) || (quiet >= 2 && (sig == SIGTERM || sig == SIGKILL))))
		mt_error("%s was killed by signal %d (%s)", name, sig, strsignal(sig));
	return 128 + sig;
}
