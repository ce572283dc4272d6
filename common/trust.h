/* Which files and directories mt may trust, and how it writes its own.
 *
 * mt often runs as root beside other users' programs and files.  A file
 * it reads back (a cache entry) or a directory it writes in (private
 * copies, the cache) must be one that no other user can change: owned by
 * the effective user or root, and not writable by group or others (a
 * directory may be, when it is sticky, as /tmp: others cannot then rename
 * or remove what is ours).  A directory is trusted only when every
 * directory above it is too.  docs/SECURITY.md gives the model.
 */
#ifndef MT_TRUST_H
#define MT_TRUST_H

#include <stddef.h>
#include <sys/stat.h>

/* Is directory dir, and every directory above it (of its real path),
 * changeable by no other user?
 * @return : 1 if so; 0 if not, with why (len bytes) saying which and why
 *           ("'/home/u' is owned by uid 1000"); -1 when dir cannot be
 *           resolved or examined (errno set; why says which). */
int mt_dir_trusted(const char *dir, char *why, size_t len);

/* mkdir -p dir, new directories mode 0700, each checked as it is reached:
 * a directory that exists must be trusted (see mt_dir_trusted), symbolic
 * links are not followed past the first trusted one.
 * @return : 1 when dir exists and is trusted; 0 when it is not (why);
 *           -1 on an error (errno; why). */
int mt_mkdirs_trusted(const char *dir, char *why, size_t len);

/* path made absolute against the current directory (not resolved: no
 * link is followed), for the functions here, which take absolute paths.
 * @return : 0 with out set (cap bytes), or -1 (errno: getcwd's, or
 * ENAMETOOLONG). */
int mt_path_absolute(const char *path, char *out, size_t cap);

/* Is the file open on fd, with status *st (fstat of fd), a regular file
 * owned by the effective user or root and writable by neither group nor
 * others?  @return : 1 or 0 (why). */
int mt_file_trusted(const struct stat *st, char *why, size_t len);

/* Create or truncate the output file path for writing, mode 0600 when it
 * is created (outputs hold stack memory).  An existing symbolic link in a
 * sticky directory others can write (/tmp) is refused: another user may
 * have planted it (errno ELOOP).
 * @return : the fd (O_CLOEXEC), or -1 (errno). */
int mt_open_output(const char *path);

/* The message for an mt_open_output error: strerror(errno), or for ELOOP
 * "a symbolic link in a directory others can write". */
const char *mt_open_output_strerror(int err);

#endif
