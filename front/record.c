/* mt record: mt-capture into mt-encode, one compressed capture file.
 *
 * mt-capture writes its stream into a FIFO in a private directory (opened
 * by path, close-on-exec: the command and its children never hold it, and
 * the command keeps mt's stdout).  mt holds the FIFO open for reading and
 * writing, starts mt-encode on it once the first bytes arrive (a capture
 * that fails before writing anything leaves no file and no second error),
 * and closes its write end when mt-capture has ended: mt-encode then sees
 * the end of the stream. */
#include "front/run.h"
#include "front/sub.h"
#include "common/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SYNOPSIS "mt record [options] [-o FILE] -- COMMAND [ARGS...]"

void mt_help_record(FILE *f)
{
	fputs("usage: " SYNOPSIS "\n"
	      "       mt record [options] [-o FILE] -p PID\n"
	      "Capture a program's allocations (or any perf event) and compress them into one\n"
	      "file: mt-capture into mt-encode.  Then: mt report FILE, mt flame FILE.\n"
	      "\n"
	      "  -o, --output FILE  the capture (default: mt.COMM.PID.mtz in the current\n"
	      "                     directory: COMM the command's name, PID that of the\n"
	      "                     mt-capture process, or with -p the target's); '-' writes\n"
	      "                     to stdout, never to a terminal; created mode 0600\n"
	      "  -h, --help         this text\n"
	      "\n"
	      "Every mt-capture option is passed on (mt-capture --help says more):\n"
	      "  -p, --pid PID, --mode sample|trace|event, --rate BYTES, --seed N, --lib PATH,\n"
	      "  -e, --event NAME, -F, --freq HZ, -c, --count N, --stack-size N,\n"
	      "  --mmap-pages N, --no-ring, --no-wait, --strict, --user NAME, --as-root\n"
	      "\n"
	      "On a terminal a status line (elapsed, samples, bytes, lost) is redrawn at most\n"
	      "once a second; at the end the file, its size and the next commands.\n"
	      "\n"
	      "Exit status, as mt-capture's (env(1), timeout(1)):\n"
	      "  the command's   when the capture succeeded (128+N when signal N killed it;\n"
	      "                  with -p: 0)\n"
	      "  125             mt-capture or mt-encode failed (said), or a usage error\n"
	      "  126             the command was found but cannot be run\n"
	      "  127             the command was not found\n", f);
}

/* mt-capture's options (capture/capture_opts.c): passed on as they are. */
static const struct option capture_longs[] = {
	{ "output", required_argument, NULL, 'o' },	/* mt's own */
	{ "help", no_argument, NULL, 'h' },		/* mt's own */
	{ "pid", required_argument, NULL, 'p' },
	{ "mode", required_argument, NULL, 1 },
	{ "rate", required_argument, NULL, 1 },
	{ "seed", required_argument, NULL, 1 },
	{ "lib", required_argument, NULL, 1 },
	{ "event", required_argument, NULL, 'e' },
	{ "freq", required_argument, NULL, 'F' },
	{ "count", required_argument, NULL, 'c' },
	{ "stack-size", required_argument, NULL, 1 },
	{ "mmap-pages", required_argument, NULL, 1 },
	{ "no-ring", no_argument, NULL, 1 },
	{ "no-wait", no_argument, NULL, 1 },
	{ "strict", no_argument, NULL, 1 },
	{ "user", required_argument, NULL, 1 },
	{ "as-root", no_argument, NULL, 1 },
	{ 0 },
};

static volatile sig_atomic_t capture_pid;

/* SIGTERM or SIGHUP to mt: to mt-capture, which ends the capture cleanly. */
static void forward(int sig)
{
	if (capture_pid > 0)
		kill((pid_t)capture_pid, sig);
}

/* COMM for a file name: letters, digits and ._+- kept, the rest '_'. */
static void clean_comm(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("._+-", *s)))
			*s = '_';
}

static void target_comm(long pid, char *comm, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	FILE *f = fopen(path, "re");
	comm[0] = 0;
	if (f) {
		if (fgets(comm, (int)len, f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	if (!comm[0])
		snprintf(comm, len, "pid");
}

static void human(char *buf, size_t len, double b)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;
	while (b >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
}

/* Waits for mt-capture (pid) while watching the FIFO (fd) for its first
 * bytes.  @return : 1 when bytes came (mt-capture may still run), 0 when
 * mt-capture ended first (*status set). */
static int wait_first_bytes(pid_t pid, int fd, int *status)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int n = poll(&p, 1, 50);
		if (n > 0 && (p.revents & POLLIN))
			return 1;
		int st;
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid) {
			*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			/* bytes may have come just before it ended */
			p.revents = 0;
			return poll(&p, 1, 0) > 0 && (p.revents & POLLIN) ? 2 : 0;
		}
	}
}

int mt_cmd_record(int argc, char **argv)
{
	char **pass = calloc((size_t)argc + 8, sizeof(*pass));	/* + mt-capture, -o FIFO, --, NULL */
	int np = 1, c;
	const char *out = NULL;
	long pid = 0;
	int have_pid = 0;	/* mt-capture checks the number */
	if (!pass)
		return mt_error("out of memory"), MT_EXIT_CAPTURE_FAILED;
	argv[0] = "mt";
	optind = 1;
	for (;;) {
		int before = optind;
		if ((c = getopt_long(argc, argv, "+o:p:e:F:c:h", capture_longs, NULL)) == -1)
			break;
		switch (c) {
		case 'o': out = optarg; continue;
		case 'h': mt_help_record(stdout); free(pass); return MT_EXIT_OK;
		case '?': mt_usage_hint(SYNOPSIS); free(pass); return MT_EXIT_CAPTURE_FAILED;
		case 'p': pid = strtol(optarg, NULL, 10); have_pid = 1; break;
		}
		/* as given ("--rate 4096", "--rate=4096", "-c5"): every short
		 * option but -h takes a value, so none comes in a cluster and
		 * each call consumed whole arguments */
		for (int i = before; i < optind; i++)
			pass[np++] = argv[i];
	}
	char **cmd = optind < argc ? argv + optind : NULL;
	if (!cmd && !have_pid) {
		mt_error("give a command (after --) or -p PID");
		mt_usage_hint(SYNOPSIS);
		free(pass);
		return MT_EXIT_CAPTURE_FAILED;
	}
	int to_stdout = out && !strcmp(out, "-");
	if (to_stdout && isatty(STDOUT_FILENO)) {
		mt_error("refusing to write binary data to a terminal (give -o FILE, or "
			 "redirect stdout)");
		free(pass);
		return MT_EXIT_CAPTURE_FAILED;
	}
	char *capture = mt_front_stage("mt-capture"), *encode = mt_front_stage("mt-encode");
	if (!capture || !encode) {
		free(capture);
		free(encode);
		free(pass);
		return MT_EXIT_CAPTURE_FAILED;
	}

	/* the FIFO, in a private directory */
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX], fifo[PATH_MAX + 16], *def = NULL;
	int rc = MT_EXIT_CAPTURE_FAILED, rfd = -1, wfd = -1;
	pid_t cpid = -1, epid = -1;
	snprintf(dir, sizeof(dir), "%s/mt.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		mt_error("cannot create a directory in '%s': %s", tmp && *tmp == '/' ? tmp : "/tmp",
			 strerror(errno));
		goto out_free;
	}
	snprintf(fifo, sizeof(fifo), "%s/stream", dir);
	if (mkfifo(fifo, 0600) != 0 ||
	    (rfd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0 ||
	    (wfd = open(fifo, O_WRONLY | O_CLOEXEC)) < 0 ||
	    fcntl(rfd, F_SETFL, 0) != 0) {
		mt_error("cannot create '%s': %s", fifo, strerror(errno));
		goto out;
	}
	pass[0] = capture;
	pass[np++] = "-o";
	pass[np++] = fifo;
	if (cmd) {
		pass[np++] = "--";
		for (char **a = cmd; *a; a++)
			pass[np++] = *a;
	}
	pass[np] = NULL;

	/* Ctrl-C reaches mt-capture from the terminal: it ends the capture,
	 * mt-encode and mt see it through */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGTERM, forward);
	signal(SIGHUP, forward);
	cpid = mt_front_spawn(pass, -1, -1, NULL, 0, NULL, 0);
	if (cpid < 0)
		goto out;
	capture_pid = cpid;

	if (!out) {
		char comm[64];
		if (cmd) {
			const char *b = strrchr(cmd[0], '/');
			snprintf(comm, sizeof(comm), "%s", b ? b + 1 : cmd[0]);
		} else {
			target_comm(pid, comm, sizeof(comm));
		}
		clean_comm(comm);
		if (asprintf(&def, "mt.%s.%ld.mtz", comm, cmd ? (long)cpid : pid) < 0) {
			mt_error("out of memory");
			goto out;
		}
		out = def;
	}

	int cstatus = 0, got = wait_first_bytes(cpid, rfd, &cstatus);
	if (got == 0) {	/* ended without a byte: it said why */
		cpid = -1;
		rc = cstatus ? cstatus : MT_EXIT_CAPTURE_FAILED;
		if (!cstatus)
			mt_error("mt-capture wrote nothing");
		goto out;
	}
	if (got == 2)
		cpid = -1;
	char *enc[] = { encode, "-q", "--status", "-o", to_stdout ? "-" : (char *)out, "-", NULL };
	epid = mt_front_spawn(enc, rfd, -1, NULL, 0, NULL, MT_SPAWN_NO_INT);
	mt_front_close(&rfd);
	if (cpid > 0)
		cstatus = mt_front_wait(cpid, "mt-capture", 0);
	cpid = -1;
	capture_pid = 0;
	mt_front_close(&wfd);	/* the end of the stream */
	int estatus = epid > 0 ? mt_front_wait(epid, "mt-encode", 0) : MT_EXIT_ENV;
	epid = -1;
	rc = cstatus;
	if (estatus) {
		mt_error("mt-encode failed (exit %d): %s", estatus,
			 to_stdout ? "the capture on stdout is incomplete"
				   : "the capture file is incomplete or missing");
		rc = MT_EXIT_CAPTURE_FAILED;
	}
	struct stat st;
	if (!estatus && !to_stdout && stat(out, &st) == 0) {
		char size[32];
		human(size, sizeof(size), (double)st.st_size);
		mt_info("capture: %s (%s)", out, size);
		mt_info("next: mt report %s   (or: mt flame %s)", out, out);
	}
out:
	if (cpid > 0)
		mt_front_wait(cpid, "mt-capture", 0);
	mt_front_close(&rfd);
	mt_front_close(&wfd);
	if (epid > 0)
		mt_front_wait(epid, "mt-encode", 0);
	unlink(fifo);
	rmdir(dir);
out_free:
	free(pass);
	free(def);
	free(capture);
	free(encode);
	return rc;
}
