/* The files a capture needs besides its events: the command, the sampler
 * library, private copies of the files it probes, and what a running
 * process maps.  Errors as in capture_err.h. */
#ifndef MT_CAPTURE_FILES_H
#define MT_CAPTURE_FILES_H

#include "capture/capture_err.h"

#include <stddef.h>
#include <sys/types.h>

/* Can cmd be run, as execvp(3) would find it (a path when it holds a '/',
 * else a name searched in $PATH)?  Checked before anything is set up; the
 * exec itself may still fail (mt_capture_run reports it the same way).
 * @return : 0; MT_CAPTURE_ENOTFOUND when there is no such file (errno
 * ENOENT for a path; detail "command not found" for a name); or
 * MT_CAPTURE_ECANTRUN when there is one that cannot be run (not
 * executable: EACCES; a directory: EISDIR) (err filled). */
int mt_capture_command_check(const char *cmd, struct mt_capture_err *err);

/* The sampler, libmt-sampler.so, into out (PATH_MAX bytes, its real path):
 * $MT_SAMPLER when it is set, else the first of DIR/../lib/mt, DIR/.. and
 * DIR that holds it, DIR holding this program (the installed layout, the
 * build tree).  Its real file's name must begin with libmt-sampler.so:
 * mt-unwind tells the sampler's frames and processes by the name mapped.
 * @return : 0, MT_CAPTURE_ENOSAMPLER (none found) or MT_CAPTURE_ESAMPLERNAME
 * (subject: the file found) (err filled). */
int mt_capture_find_sampler(char *out, struct mt_capture_err *err);

/* The directory private copies are made in: $TMPDIR when no other user
 * can change it or a directory above it (see common/trust.h), else /tmp.
 * why (len bytes) says why $TMPDIR was passed over, "" when it was not:
 * another user could otherwise swap the copies the command maps. */
const char *mt_capture_copy_base(char *why, size_t len);

/* A private copy of file, mode 0755, in a new directory (mode 0755) under
 * base, which must be trusted (see mt_capture_copy_base): uprobes on it
 * fire only in the processes that map it (see capture_run.c).  dir and
 * copy get the directory and the copy's path (PATH_MAX bytes each); the
 * caller removes both when done (the mappings of a removed copy stay
 * valid).
 * @return : 0, or MT_CAPTURE_ECOPY (subject file, and the errno or the
 * reason base is not trusted; nothing is left behind, dir is "") (err
 * filled). */
int mt_capture_private_copy(const char *file, const char *base, char *dir, char *copy,
			    struct mt_capture_err *err);

/* The first file that process pid (0: this one) maps whose name (past its
 * last '/') begins with prefix, e.g. the libc or the sampler a running
 * process uses, into out (len bytes).
 * @return : 0, or 1 when there is none, or pid's maps cannot be read. */
int mt_capture_find_mapped(pid_t pid, const char *prefix, char *out, size_t len);

/* "LD_PRELOAD=..." for the command: this process's $LD_PRELOAD with every
 * entry that is the file real (a real path) replaced by copy, since a
 * library preloaded by its path would bypass the copy that LD_LIBRARY_PATH
 * puts first.
 * @return : the string (malloc'd: the caller frees it), or NULL when no
 * entry was replaced or memory ran out (a capture that then sees no call
 * says why). */
char *mt_capture_preload_the_copy(const char *real, const char *copy);

#endif
