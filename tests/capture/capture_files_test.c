/* The files a capture needs (capture/capture_files.c): the command check
 * as execvp finds commands, private copies, the sampler's name, and
 * LD_PRELOAD with the probed library replaced by its copy. */
#include "capture/capture_files.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[256];

static void setup(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/mt-capture-files-test.XXXXXX");
	cr_assert(mkdtemp(tmp));
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	cr_expect_eq(system(cmd), 0);
}

static void make_file(const char *name, mode_t mode, char *path)
{
	snprintf(path, PATH_MAX, "%s/%s", tmp, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "#!/bin/sh\n", 10), 10);
	close(fd);
	chmod(path, mode);
}

Test(capture_files, the_command_check_tells_not_found_from_cannot_run, .init = setup,
     .fini = teardown)
{
	struct mt_capture_err err = { 0 };
	char msg[MT_CAPTURE_MSGLEN], path[PATH_MAX];
	cr_expect_eq(mt_capture_command_check("sh", &err), 0);
	cr_expect_eq(mt_capture_command_check("/bin/sh", &err), 0);
	cr_expect_eq(mt_capture_command_check("/nonexistent/x", &err), MT_CAPTURE_ENOTFOUND);
	cr_expect_str_eq(mt_capture_err_message(&err, msg, sizeof(msg)),
			 "cannot run '/nonexistent/x': No such file or directory");
	cr_expect_eq(mt_capture_command_check("mt-no-such-command-here", &err), MT_CAPTURE_ENOTFOUND);
	cr_expect_str_eq(mt_capture_err_message(&err, msg, sizeof(msg)),
			 "cannot run 'mt-no-such-command-here': command not found");
	cr_expect_eq(mt_capture_command_check(tmp, &err), MT_CAPTURE_ECANTRUN);
	cr_expect_eq(err.sys_errno, EISDIR);
	make_file("plain", 0644, path);
	if (geteuid() != 0 || access(path, X_OK) != 0) {	/* root may run anything with an x bit */
		cr_expect_eq(mt_capture_command_check(path, &err), MT_CAPTURE_ECANTRUN);
		cr_expect_eq(err.sys_errno, EACCES);
		/* In PATH: a file that is there and not executable is EACCES, as
		 * execvp says, not "command not found". */
		char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
		setenv("PATH", tmp, 1);
		cr_expect_eq(mt_capture_command_check("plain", &err), MT_CAPTURE_ECANTRUN);
		cr_expect_eq(err.sys_errno, EACCES);
		make_file("runs", 0755, path);
		cr_expect_eq(mt_capture_command_check("runs", &err), 0);
		if (old)
			setenv("PATH", old, 1);
		free(old);
	}
}

Test(capture_files, a_private_copy_is_a_copy_and_a_failed_one_leaves_nothing, .init = setup,
     .fini = teardown)
{
	struct mt_capture_err err = { 0 };
	char dir[PATH_MAX], copy[PATH_MAX], path[PATH_MAX];
	make_file("lib.so", 0644, path);
	setenv("TMPDIR", tmp, 1);
	cr_assert_eq(mt_capture_private_copy(path, tmp, dir, copy, &err), 0);
	cr_expect_eq(strncmp(dir, tmp, strlen(tmp)), 0, "%s", dir);
	cr_expect_eq(strncmp(copy, dir, strlen(dir)), 0);
	cr_expect_str_eq(strrchr(copy, '/'), "/lib.so");
	struct stat sb;
	cr_assert_eq(stat(copy, &sb), 0);
	cr_expect_eq(sb.st_size, 10);
	cr_expect_eq(sb.st_mode & 0777, 0755);
	snprintf(path, sizeof(path), "%s/missing.so", tmp);
	cr_expect_eq(mt_capture_private_copy(path, tmp, dir, copy, &err), MT_CAPTURE_ECOPY);
	cr_expect_eq(err.sys_errno, ENOENT);
	cr_expect_str_eq(dir, "");
	unsetenv("TMPDIR");
}

Test(capture_files, the_sampler_must_be_named_so, .init = setup, .fini = teardown)
{
	struct mt_capture_err err = { 0 };
	char out[PATH_MAX], path[PATH_MAX];
	make_file("other.so", 0755, path);
	setenv("MT_SAMPLER", path, 1);
	cr_expect_eq(mt_capture_find_sampler(out, &err), MT_CAPTURE_ESAMPLERNAME);
	make_file("libmt-sampler.so.1", 0755, path);
	setenv("MT_SAMPLER", path, 1);
	cr_expect_eq(mt_capture_find_sampler(out, &err), 0);
	setenv("MT_SAMPLER", "/nonexistent/libmt-sampler.so", 1);
	cr_expect_eq(mt_capture_find_sampler(out, &err), MT_CAPTURE_ENOSAMPLER);
	unsetenv("MT_SAMPLER");
}

Test(capture_files, ld_preload_gets_the_copy_in_place_of_the_library, .init = setup,
     .fini = teardown)
{
	char lib[PATH_MAX], real[PATH_MAX], want[3 * PATH_MAX];
	make_file("liba.so", 0755, lib);
	cr_assert(realpath(lib, real));
	setenv("LD_PRELOAD", "libx.so  ", 1);
	cr_expect_null(mt_capture_preload_the_copy(real, "/copy/liba.so"));
	snprintf(want, sizeof(want), "libx.so:%s libz.so", lib);
	setenv("LD_PRELOAD", want, 1);
	char *got = mt_capture_preload_the_copy(real, "/copy/liba.so");
	cr_expect_str_eq(got, "LD_PRELOAD=libx.so:/copy/liba.so:libz.so");
	free(got);
	unsetenv("LD_PRELOAD");
}
