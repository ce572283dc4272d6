/* ELF module cache: open files once, check build-ids, find debug info. */
#include "symbolize/module.h"
#include "symbolize/scopes.h"
#include "symbolize/arch.h"
#include "symbolize/cu.h"
#include "symbolize/debug_cache.h"
#include "symbolize/rules_file.h"
#include "common/cache_dir.h"
#include "common/self.h"

#include <elfutils/libdwelf.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

struct mt_unwind_modules {
	struct mt_unwind_module *list;
	char **alt_dirs;			/* where missing files may be found */
	size_t nr_alt_dirs;
	char *kept_dir;				/* copies by build-id: capture_keep.h */
	char *symfs;				/* --symfs: a build-id tree first */
	struct mt_unwind_hashmap by_key;	/* key hash -> module (first one) */
	char *debuginfo_path;			/* what Dwfl_Callbacks points at */
	Dwfl_Callbacks callbacks;
	int prefetch, prefetch_dwarf;
	char *debug_cache;			/* directory, or NULL: no cache */
	struct mt_unwind_debug_cache_stats cache_stats;
	struct mt_unwind_symtab_stats symtab_stats;	/* atomic */
	struct mt_unwind_rules_stats rules_stats;	/* the unwinder's */
	int loaders;				/* started and not yet joined */
	int running;				/* loader threads not yet done (atomic) */
};

/* Unjoined loader threads at most (each holds a stack until joined). */
#define MAX_LOADERS 16

void mt_unwind_modules_prefetch(struct mt_unwind_modules *ms, int dwarf)
{
	ms->prefetch = 1;
	ms->prefetch_dwarf = dwarf;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

static uint64_t key_hash(const char *path, const uint8_t *id, unsigned id_len)
{
	uint64_t h = fnv1a(0xcbf29ce484222325ULL, path, strlen(path) + 1);
	h = fnv1a(h, id, id_len);
	return h == MT_UNWIND_HASH_EMPTY ? 0 : h;
}

static int alt_dir_add(struct mt_unwind_modules *ms, const char *dir, size_t len)
{
	char **v = realloc(ms->alt_dirs, (ms->nr_alt_dirs + 1) * sizeof(*v));
	if (!v)
		return -1;
	ms->alt_dirs = v;
	if (!(v[ms->nr_alt_dirs] = strndup(dir, len)))
		return -1;
	ms->nr_alt_dirs++;
	return 0;
}

/* A file mapped at recording time may be gone (mt-capture's private copies
 * of libmt-sampler.so and, in trace mode, of libc are deleted when it ends).
 * Same-named files in the --debuginfo-path directories, in mt's own library
 * directories (beside this program: ../lib/mt, .., .) and in the system's
 * library directories stand in for it when their build-id is the recorded
 * one. */
static int alt_dirs_init(struct mt_unwind_modules *ms, const char *user)
{
	for (const char *p = user; p && *p;) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n && alt_dir_add(ms, p, n) != 0)
			return -1;
		p = e ? e + 1 : p + n;
	}
	char exe[4096];
	if (mt_self_dir(exe, sizeof(exe)))
		return 0;
	static const char *const rel[] = { "/../lib/mt", "/..", "" };
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char d[4200];
		int k = snprintf(d, sizeof(d), "%s%s", exe, rel[i]);
		if (alt_dir_add(ms, d, (size_t)k) != 0)
			return -1;
	}
	for (const char *const *d = mt_unwind_arch_lib_dirs(); *d; d++)
		if (alt_dir_add(ms, *d, strlen(*d)) != 0)
			return -1;
	return 0;
}

/* The kind of file of mode, for "not a regular file (...)". */
static const char *file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO: return "fifo";
	case S_IFDIR: return "directory";
	case S_IFCHR: return "character device";
	case S_IFBLK: return "block device";
	case S_IFSOCK: return "socket";
	default: return "special file";
	}
}

/* Filesystems whose "regular" files are no ELF files but views of the
 * kernel's state, where reading may block or have effects (/proc/PID/mem,
 * /sys, /sys/kernel/debug, /sys/kernel/tracing).  Files reached through
 * /proc that live elsewhere (/proc/PID/root/..., /proc/PID/map_files/...,
 * /proc/self/fd/N) are on their own filesystems and pass. */
static const char *pseudo_fs(long type)
{
	switch ((unsigned long)type) {
	case 0x9fa0: return "a file of /proc";			/* PROC_SUPER_MAGIC */
	case 0x62656572: return "a file of /sys";		/* SYSFS_MAGIC */
	case 0x64626720: return "a file of debugfs";		/* DEBUGFS_MAGIC */
	case 0x74726163: return "a file of tracefs";		/* TRACEFS_MAGIC */
	case 0x73636673: return "a file of securityfs";		/* SECURITYFS_MAGIC */
	case 0x62656570: return "a file of configfs";		/* CONFIGFS_MAGIC */
	case 0x27e0eb: case 0x63677270: return "a file of cgroupfs";
	case 0xcafe4a11: return "a file of bpffs";		/* BPF_FS_MAGIC */
	default: return NULL;
	}
}

/* Open path for reading, if it is a regular file, without opening it
 * otherwise: a fifo's writer blocked in open() would be released, a
 * device's open may have effects.  stat first; then open, O_NONBLOCK (a
 * fifo put in its place meanwhile does not block us); then fstat again:
 * the same file, still regular.  Symbolic links are resolved first
 * (realpath) and the file itself opened O_NOFOLLOW, so that no link put
 * in its place meanwhile is followed; but under /proc the links are the
 * ways into other file tables and mount namespaces (/proc/self/fd/N of a
 * memfd, /proc/PID/map_files/... of a deleted file, /proc/PID/root/...):
 * there only the kernel can follow them.  @return : an fd; or -1 with *why
 * the kind of file refused (a literal), or NULL and errno set. */
static int open_regular(const char *path, const char **why, struct stat *out)
{
	struct stat st, fst;
	struct statfs sf;
	*why = NULL;
	char *real = NULL;
	int follow = strncmp(path, "/proc/", 6) == 0;
	if (!follow) {
		if (!(real = realpath(path, NULL)))
			return -1;
		path = real;
	}
	int fd = -1, err = 0;
	if (stat(path, &st) != 0)
		err = errno;
	else if (!S_ISREG(st.st_mode))
		*why = file_kind(st.st_mode);
	else if (statfs(path, &sf) == 0 && (*why = pseudo_fs((long)sf.f_type)))
		;
	else if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
				  (follow ? 0 : O_NOFOLLOW))) < 0)
		err = errno;
	else if (fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode) || fst.st_dev != st.st_dev ||
		 fst.st_ino != st.st_ino) {
		close(fd);
		fd = -1;
		*why = "replaced while it was opened";
	} else if (out) {
		*out = fst;
	}
	free(real);
	errno = err;
	return fd;
}

/* libdwfl's own debuginfo_path when given none; user directories go before
 * it.  Only its absolute directories are searched by build-id. */
static const char default_debuginfo_path[] = ":.debug:/usr/lib/debug";

/* The separate debug file of build-id @id under the build-id tree of one
 * of the debug directories (those libdwfl searches: the user's, then
 * /usr/lib/debug), opened.  @return : an fd, or -1. */
static int path_by_build_id(const struct mt_unwind_modules *ms, const unsigned char *id, int n,
			    char *path, size_t size)
{
	const char *list = ms->debuginfo_path ? ms->debuginfo_path : default_debuginfo_path;
	char hex[2 * 64 + 1];
	if (n < 2 || n > 64)
		return -1;
	mt_build_id_hex(hex, id, (size_t)n);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ':');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const char *dir = p;
		while (len && (*dir == '+' || *dir == '-')) {	/* libdwfl's flags */
			dir++;
			len--;
		}
		p = e ? e + 1 : p + strlen(p);
		if (!len || *dir != '/')
			continue;	/* relative entries are not searched by build-id */
		if (snprintf(path, size, "%.*s/.build-id/%.2s/%s.debug", (int)len, dir, hex,
			     hex + 2) >= (int)size)
			continue;
		const char *why;
		int fd = open_regular(path, &why, NULL);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

static int open_by_build_id(const struct mt_unwind_modules *ms, const unsigned char *id, int n)
{
	char path[4096];
	return path_by_build_id(ms, id, n, path, sizeof(path));
}

/* With a debug cache: the inflated copy of the module's debug file (see
 * debug_cache.h), made on first need from the file in a build-id tree;
 * anything else goes to libdwfl's standard search.  (That search keeps the
 * file it finds open in the module, which then reads that one: the copy
 * must be given before it runs.) */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct mt_unwind_modules *ms = *userdata;
	const unsigned char *id;
	GElf_Addr idaddr;
	int n;
	if (ms && ms->debug_cache && (n = dwfl_module_build_id(mod, &id, &idaddr)) > 0) {
		char *path;
		int fd = open_by_build_id(ms, id, n);
		/* No debug file: libdwfl asks when the file's own DWARF could
		 * not be read, as libelf before elfutils 0.189 cannot read
		 * zstd-compressed sections.  An inflated copy of the file
		 * itself then serves (the cache makes one only when it has
		 * compressed sections). */
		const char *why;
		if (fd < 0 && file_name)
			fd = open_regular(file_name, &why, NULL);
		/* A copy serves only the file it was made from. */
		int c = mt_unwind_debug_cache_lookup(ms->debug_cache, id, (size_t)n, fd, &path,
						     &ms->cache_stats);
		if (c < 0 && fd >= 0)
			c = mt_unwind_debug_cache_add(ms->debug_cache, fd, id, (size_t)n, &path,
						      &ms->cache_stats);
		if (fd >= 0)
			close(fd);
		if (c >= 0) {
			*debuginfo_file_name = path;
			return c;
		}
	}
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
}

void mt_unwind_modules_set_kept_dir(struct mt_unwind_modules *ms, const char *dir)
{
	free(ms->kept_dir);
	ms->kept_dir = dir && *dir ? strdup(dir) : NULL;
}

int mt_unwind_modules_set_symfs(struct mt_unwind_modules *ms, const char *dir)
{
	if (!dir || !*dir)
		return 0;
	const char *rest = ms->debuginfo_path ? ms->debuginfo_path : default_debuginfo_path;
	size_t n = strlen(dir) + strlen(rest) + 2;
	char *sym = strdup(dir), *path = malloc(n);
	if (!sym || !path) {
		free(sym);
		free(path);
		return MT_UNWIND_ENOMEM;
	}
	/* rest starts with ':' when it is the default */
	snprintf(path, n, "%s%s%s", dir, rest[0] == ':' ? "" : ":", rest);
	free(ms->symfs);
	ms->symfs = sym;
	free(ms->debuginfo_path);
	ms->debuginfo_path = path;
	ms->callbacks.debuginfo_path = &ms->debuginfo_path;
	return 0;
}

void mt_unwind_modules_set_debug_cache(struct mt_unwind_modules *ms, const char *dir)
{
	free(ms->debug_cache);
	ms->debug_cache = dir && *dir ? strdup(dir) : NULL;
}

struct mt_unwind_debug_cache_stats
mt_unwind_modules_debug_cache_stats(struct mt_unwind_modules *ms)
{
	struct mt_unwind_debug_cache_stats st;
	__atomic_load(&ms->cache_stats.hits, &st.hits, __ATOMIC_RELAXED);
	__atomic_load(&ms->cache_stats.written, &st.written, __ATOMIC_RELAXED);
	__atomic_load(&ms->cache_stats.bad, &st.bad, __ATOMIC_RELAXED);
	__atomic_load(&ms->cache_stats.failed, &st.failed, __ATOMIC_RELAXED);
	__atomic_load(&ms->cache_stats.untrusted, &st.untrusted, __ATOMIC_RELAXED);
	return st;
}

/* The scope indexes of m's DWARF, kept in the debug cache (scopes_file.h). */
static void attach_scopes(struct mt_unwind_modules *ms, struct mt_unwind_module *m)
{
	if (ms->debug_cache && m->dwarf)
		mt_unwind_scopes_attach(&m->scopes, m->dwarf, ms->debug_cache, m->file_id,
					m->file_id_len);
}

struct mt_unwind_scopes_stats mt_unwind_modules_save_scopes(struct mt_unwind_modules *ms)
{
	struct mt_unwind_scopes_stats sum = { 0 };
	for (struct mt_unwind_module *m = ms->list; m; m = m->next) {
		mt_unwind_scopes_save(m->scopes);	/* a failure is counted in its stats */
		struct mt_unwind_scopes_stats st = mt_unwind_scopes_stats(m->scopes);
		sum.loaded += st.loaded;
		sum.built += st.built;
		sum.saved += st.saved;
		sum.unsound += st.unsound;
		sum.failed += st.failed;
	}
	return sum;
}

/* The module's userdata points at its cache, for find_debuginfo. */
static void module_own(Dwfl_Module *mod, struct mt_unwind_modules *ms)
{
	void **ud;
	if (dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
		*ud = ms;
}

int mt_unwind_modules_new(struct mt_unwind_modules **out, const char *debuginfo_path)
{
	struct mt_unwind_modules *ms = calloc(1, sizeof(*ms));
	if (!ms)
		return MT_UNWIND_ENOMEM;
	if (debuginfo_path && *debuginfo_path) {
		size_t n = strlen(debuginfo_path) + strlen(default_debuginfo_path) + 2;
		ms->debuginfo_path = malloc(n);
		if (!ms->debuginfo_path) {
			free(ms);
			return MT_UNWIND_ENOMEM;
		}
		snprintf(ms->debuginfo_path, n, "%s%s", debuginfo_path, default_debuginfo_path);
	}
	if (alt_dirs_init(ms, debuginfo_path) != 0) {
		free(ms->debuginfo_path);
		free(ms);
		return MT_UNWIND_ENOMEM;
	}
	ms->callbacks.find_elf = dwfl_build_id_find_elf;
	ms->callbacks.find_debuginfo = find_debuginfo;
	ms->callbacks.section_address = dwfl_offline_section_address;
	ms->callbacks.debuginfo_path = ms->debuginfo_path ? &ms->debuginfo_path : NULL;
	*out = ms;
	return 0;
}

static void module_free(struct mt_unwind_module *m)
{
	mt_unwind_module_symbols_ready(m);
	if (m->sym_dwfl)
		dwfl_end(m->sym_dwfl);
	free(m->opened);
	if (m->dwfl)
		dwfl_end(m->dwfl);
	/* m->rules' values are shared: their owners free them. */
	for (size_t i = 0; i < m->nr_rules_owned; i++)
		free(m->rules_owned[i]);
	free(m->rules_owned);
	for (size_t i = 0; i < m->frames.cap; i++)
		if (m->frames.keys[i] != MT_UNWIND_HASH_EMPTY)
			free((void *)(uintptr_t)m->frames.vals[i]);
	free(m->frame_no_key);
	mt_unwind_scopes_free(m->scopes);
	mt_unwind_cus_free(m->cus);
	mt_unwind_symtab_release(&m->symtab);
	if (m->rules_file)
		mt_unwind_rules_file_release(m->rules_file);
	free(m->rules_file);
	mt_unwind_rule_ranges_release(&m->rules_new);
	mt_unwind_hashmap_release(&m->rules);
	mt_unwind_hashmap_release(&m->frames);
	pthread_mutex_destroy(&m->lock);
	free(m->loads);
	free(m->path);
	free(m);
}

void mt_unwind_modules_free(struct mt_unwind_modules *ms)
{
	if (!ms)
		return;
	while (ms->list) {
		struct mt_unwind_module *m = ms->list;
		ms->list = m->next;
		module_free(m);
	}
	mt_unwind_hashmap_release(&ms->by_key);
	for (size_t i = 0; i < ms->nr_alt_dirs; i++)
		free(ms->alt_dirs[i]);
	free(ms->alt_dirs);
	free(ms->kept_dir);
	free(ms->symfs);
	free(ms->debuginfo_path);
	free(ms->debug_cache);
	free(ms);
}

void mt_unwind_modules_each(struct mt_unwind_modules *ms,
			    void (*fn)(struct mt_unwind_module *m, void *arg), void *arg)
{
	for (struct mt_unwind_module *m = ms->list; m; m = m->next)
		fn(m, arg);
}

/* The vdso as a file: copy this process's image into a memfd. */
static int vdso_fd(void)
{
	const unsigned char *img = (const void *)getauxval(AT_SYSINFO_EHDR);
	if (!img)
		return -1;
	const Elf64_Ehdr *eh = (const void *)img;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
		return -1;
	size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (size < sizeof(*eh) || size > (16u << 20))
		return -1;
	int fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t done = 0;
	while (done < size) {
		ssize_t n = write(fd, img + done, size - done);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static int read_loads(struct mt_unwind_module *m, Elf *elf)
{
	size_t n;
	if (elf_getphdrnum(elf, &n) != 0)
		return -1;
	m->loads = calloc(n ? n : 1, sizeof(*m->loads));
	if (!m->loads)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m->loads[m->nr_loads++] = (struct mt_unwind_load){
			.offset = ph.p_offset, .filesz = ph.p_filesz, .vaddr = ph.p_vaddr,
			.exec = (ph.p_flags & PF_X) != 0 };
	}
	return 0;
}

static void module_open_path(struct mt_unwind_modules *ms, struct mt_unwind_module *m,
			     const char *path);

/* Forget what module_open_path made of an earlier candidate. */
static void module_reset(struct mt_unwind_module *m)
{
	if (m->dwfl) {
		dwfl_end(m->dwfl);
		m->dwfl = NULL;
	}
	m->mod = NULL;
	free(m->loads);
	m->loads = NULL;
	m->nr_loads = 0;
	m->file_id_len = 0;
}

/* Open m's file (with --symfs, the archive's copy first); when it is gone or has another build-id than the one
 * recorded, a stand-in with the recorded build-id: the copy mt-capture
 * kept of its sampler (capture_keep.h), else a same-named file in the
 * alternative directories (alt_dirs_init). */
static void module_open(struct mt_unwind_modules *ms, struct mt_unwind_module *m)
{
	char cand[4400], hex[2 * sizeof(m->want_id) + 1];
	mt_build_id_hex(hex, m->want_id, m->want_id_len);
	/* --symfs: the archive's copy (mt archive), by the recorded build-id,
	 * before the file at the mapped path. */
	if (ms->symfs && m->want_id_len >= 2 && m->path[0] == '/') {
		snprintf(cand, sizeof(cand), "%s/.build-id/%.2s/%s", ms->symfs, hex, hex + 2);
		module_open_path(ms, m, cand);
		if (m->state == MT_UNWIND_MOD_OK)
			return;
		module_reset(m);
	}
	module_open_path(ms, m, m->path);
	int state = m->state;
	if ((state != MT_UNWIND_MOD_MISSING && state != MT_UNWIND_MOD_MISMATCH) ||
	    !m->want_id_len || m->path[0] != '/')
		return;
	int err = m->open_errno;
	for (size_t i = ms->kept_dir ? 0 : 1; i <= ms->nr_alt_dirs; i++) {
		if (i == 0)
			snprintf(cand, sizeof(cand), "%s/%s/%s", ms->kept_dir, hex, m->name);
		else
			snprintf(cand, sizeof(cand), "%s/%s", ms->alt_dirs[i - 1], m->name);
		module_reset(m);
		module_open_path(ms, m, cand);
		if (m->state == MT_UNWIND_MOD_OK)
			return;
	}
	module_reset(m);
	if (state == MT_UNWIND_MOD_MISMATCH) {
		module_open_path(ms, m, m->path);	/* as it was: its build-id for the report */
		return;
	}
	m->state = MT_UNWIND_MOD_MISSING;
	m->open_errno = err;
	m->not_regular = NULL;
}

static void module_open_path(struct mt_unwind_modules *ms, struct mt_unwind_module *m,
			     const char *path)
{
	int fd;
	m->not_regular = NULL;
	m->open_errno = 0;
	if (strcmp(path, "[vdso]") == 0) {
		fd = vdso_fd();
		if (fd < 0) {
			m->state = MT_UNWIND_MOD_MISSING;
			m->open_errno = ENOENT;
			return;
		}
		m->dev = 0;
		m->ino = 0;
	} else {
		const char *why;
		struct stat st;
		fd = open_regular(path, &why, &st);
		if (fd < 0 && why) {
			m->state = MT_UNWIND_MOD_NOT_REGULAR;
			m->not_regular = why;
			return;
		}
		if (fd < 0) {
			m->state = MT_UNWIND_MOD_MISSING;
			m->open_errno = errno;
			return;
		}
		m->dev = st.st_dev;
		m->ino = st.st_ino;
	}
	m->dwfl = dwfl_begin(&ms->callbacks);
	if (!m->dwfl) {
		close(fd);
		m->state = MT_UNWIND_MOD_BAD_ELF;
		return;
	}
	dwfl_report_begin(m->dwfl);
	/* base 0 relative to p_vaddr: module addresses are ELF vaddrs. */
	m->mod = dwfl_report_elf(m->dwfl, m->name, path, fd, 0, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod) {
		close(fd);	/* not consumed on failure */
		m->state = MT_UNWIND_MOD_BAD_ELF;
		return;
	}
	module_own(m->mod, ms);
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	if (!elf || read_loads(m, elf) != 0) {
		m->state = MT_UNWIND_MOD_BAD_ELF;
		return;
	}
	const unsigned char *bits;
	GElf_Addr idaddr;
	int n = dwfl_module_build_id(m->mod, &bits, &idaddr);
	if (n > 0) {
		m->file_id_len = (unsigned)(n > 20 ? 20 : n);
		memcpy(m->file_id, bits, m->file_id_len);
	}
	if (m->want_id_len &&
	    (m->file_id_len != m->want_id_len ||
	     memcmp(m->file_id, m->want_id, m->want_id_len) != 0)) {
		m->state = MT_UNWIND_MOD_MISMATCH;
		return;
	}
	m->state = MT_UNWIND_MOD_OK;
	free(m->opened);
	m->opened = strdup(path);
}

/* m's sorted symbols from mod, through the debug cache when there is one
 * and the file has a build-id. */
static int symtab_load(struct mt_unwind_modules *ms, struct mt_unwind_module *m,
		       Dwfl_Module *mod)
{
	return mt_unwind_symtab_load_cached(&m->symtab, mod, ms->debug_cache, m->file_id,
					    m->file_id_len, &ms->symtab_stats);
}

int mt_unwind_module_load_symtab(struct mt_unwind_module *m)
{
	if (m->symtab_loaded)
		return 0;
	m->symtab_loaded = 1;
	return symtab_load(m->owner, m, m->sym_mod);
}

struct mt_unwind_symtab_stats mt_unwind_modules_symtab_stats(struct mt_unwind_modules *ms)
{
	struct mt_unwind_symtab_stats st;
	__atomic_load(&ms->symtab_stats.read, &st.read, __ATOMIC_RELAXED);
	__atomic_load(&ms->symtab_stats.built, &st.built, __ATOMIC_RELAXED);
	__atomic_load(&ms->symtab_stats.saved, &st.saved, __ATOMIC_RELAXED);
	__atomic_load(&ms->symtab_stats.unsound, &st.unsound, __ATOMIC_RELAXED);
	__atomic_load(&ms->symtab_stats.failed, &st.failed, __ATOMIC_RELAXED);
	return st;
}

const struct mt_unwind_rule *mt_unwind_module_cached_rule(struct mt_unwind_module *m,
							  uint64_t vaddr)
{
	struct mt_unwind_modules *ms = m->owner;
	if (!m->rules_file_tried) {
		m->rules_file_tried = 1;
		if (!ms->debug_cache || m->state != MT_UNWIND_MOD_OK || !m->file_id_len ||
		    !m->opened || strcmp(m->opened, "[vdso]") == 0 ||
		    !(m->rules_source = mt_unwind_rules_source(m->opened)))
			return NULL;
		struct mt_unwind_rules_file *f = malloc(sizeof(*f));
		if (!f)
			return NULL;
		int rc = mt_unwind_rules_file_read(ms->debug_cache, m->file_id, m->file_id_len,
						   m->rules_source, f);
		if (rc > 0) {
			m->rules_file = f;
			ms->rules_stats.read++;
		} else {
			free(f);
			if (rc < 0)
				ms->rules_stats.unsound++;
		}
	}
	if (!m->rules_file)
		return NULL;
	const struct mt_unwind_rules_row *row = mt_unwind_rules_file_find(m->rules_file, vaddr);
	const struct mt_unwind_rule *rule = row ? mt_unwind_rules_file_rule(m->rules_file, row)
					  : NULL;
	if (rule)
		m->rules_hits++;
	return rule;
}

const struct mt_unwind_rule *mt_unwind_module_kept_rule(struct mt_unwind_module *m,
							uint64_t vaddr)
{
	const struct mt_unwind_rule *rule = mt_unwind_rule_ranges_find(&m->rules_new, vaddr);
	if (rule)
		m->rules_reused++;
	return rule;
}

void mt_unwind_module_keep_rule(struct mt_unwind_module *m, uint64_t lo, uint64_t hi,
				const struct mt_unwind_rule *rule)
{
	/* Out of memory: not reused, nor saved (compiled again next run). */
	(void)mt_unwind_rule_ranges_add(&m->rules_new, lo, hi, rule);
}

int mt_unwind_module_own_rule(struct mt_unwind_module *m, struct mt_unwind_rule *rule)
{
	if (m->nr_rules_owned == m->cap_rules_owned) {
		size_t cap = m->cap_rules_owned ? 2 * m->cap_rules_owned : 64;
		struct mt_unwind_rule **v = realloc(m->rules_owned, cap * sizeof(*v));
		if (!v) {
			free(rule);
			return MT_UNWIND_ENOMEM;
		}
		m->rules_owned = v;
		m->cap_rules_owned = cap;
	}
	m->rules_owned[m->nr_rules_owned++] = rule;
	return 0;
}

void mt_unwind_modules_save_rules(struct mt_unwind_modules *ms, struct mt_unwind_rules_stats *st)
{
	for (struct mt_unwind_module *m = ms->list; m; m = m->next) {
		ms->rules_stats.hits += m->rules_hits;
		ms->rules_stats.made += m->rules_file ? m->rules_file->nr_made : 0;
		ms->rules_stats.asked += m->rules_asked;
		ms->rules_stats.reused += m->rules_reused;
		if (!m->rules_source || !m->rules_new.n)	/* no cache, or nothing new */
			continue;
		ms->rules_stats.compiled += m->rules_new.n;
		mt_unwind_rule_ranges_sort(&m->rules_new);
		int rc = mt_unwind_rules_file_write(ms->debug_cache, m->file_id, m->file_id_len,
						    m->rules_source, m->rules_file, m->rules_new.v,
						    m->rules_new.n);
		if (rc == 0)
			ms->rules_stats.saved++;
		else
			ms->rules_stats.failed++;
		mt_unwind_rule_ranges_clear(&m->rules_new);
	}
	*st = ms->rules_stats;
}

/* The loader thread: its own session on the file, so the unwinder's
 * session (CFI) is never touched from two threads. */
static void *loader_main(void *arg)
{
	struct mt_unwind_module *m = arg;
	struct mt_unwind_modules *ms = m->owner;
	const char *why;
	struct stat st;
	int fd = open_regular(m->opened, &why, &st);
	if (fd < 0)
		return NULL;
	if (st.st_dev != m->dev || st.st_ino != m->ino) {	/* not the file opened */
		close(fd);
		return NULL;
	}
	Dwfl *d = dwfl_begin(&ms->callbacks);
	if (!d) {
		close(fd);
		return NULL;
	}
	dwfl_report_begin(d);
	Dwfl_Module *mod = dwfl_report_elf(d, m->name, m->opened, fd, 0, true);
	dwfl_report_end(d, NULL, NULL);
	if (!mod) {
		close(fd);
		dwfl_end(d);
		return NULL;
	}
	module_own(mod, ms);
	/* The same file (same build-id) or nothing. */
	const unsigned char *bits;
	GElf_Addr idaddr;
	GElf_Addr bias;
	dwfl_module_getelf(mod, &bias);
	int n = dwfl_module_build_id(mod, &bits, &idaddr);
	if ((unsigned)(n > 0 ? n : 0) != m->file_id_len ||
	    (n > 0 && memcmp(bits, m->file_id, (size_t)n) != 0)) {
		dwfl_end(d);
		return NULL;
	}
	m->sym_dwfl = d;
	m->sym_mod = mod;
	m->symtab_loaded = 1;
	if (symtab_load(ms, m, mod) != 0)
		m->symtab_loaded = 0;
	if (ms->prefetch_dwarf) {
		m->dwarf_loaded = 1;
		m->dwarf = dwfl_module_getdwarf(mod, &m->dwarf_bias);
		attach_scopes(ms, m);
	}
	return NULL;
}

static void *loader_thread(void *arg)
{
	struct mt_unwind_module *m = arg;
	struct mt_unwind_modules *ms = m->owner;
	loader_main(arg);
	__atomic_store_n(&m->loader_done, 1, __ATOMIC_RELEASE);
	__atomic_sub_fetch(&ms->running, 1, __ATOMIC_RELEASE);
	return NULL;
}

int mt_unwind_modules_loading(struct mt_unwind_modules *ms)
{
	return __atomic_load_n(&ms->running, __ATOMIC_ACQUIRE) > 0;
}

static void loader_start(struct mt_unwind_modules *ms, struct mt_unwind_module *m)
{
	if (__atomic_load_n(&ms->loaders, __ATOMIC_RELAXED) >= MAX_LOADERS)
		return;		/* this one loads when first needed */
	__atomic_add_fetch(&ms->running, 1, __ATOMIC_RELAXED);
	if (pthread_create(&m->loader, NULL, loader_thread, m) == 0) {
		m->loader_running = 1;
		__atomic_add_fetch(&ms->loaders, 1, __ATOMIC_RELAXED);
	} else {
		__atomic_sub_fetch(&ms->running, 1, __ATOMIC_RELAXED);
	}
}

void mt_unwind_module_symbols_ready(struct mt_unwind_module *m)
{
	if (m->loader_running) {
		pthread_join(m->loader, NULL);
		m->loader_running = 0;
		__atomic_sub_fetch(&((struct mt_unwind_modules *)m->owner)->loaders, 1,
				   __ATOMIC_RELAXED);
	}
	if (!m->sym_mod)
		m->sym_mod = m->mod;	/* no loader, or it failed: same session */
	else if (m->sym_mod != m->mod)
		__atomic_store_n(&m->apart, 1, __ATOMIC_RELEASE);
}

struct mt_unwind_module *mt_unwind_modules_get(struct mt_unwind_modules *ms, const char *path,
					       const uint8_t *id, unsigned id_len)
{
	if (id_len > 20)
		id_len = 20;
	uint64_t h = key_hash(path, id, id_len), v;
	if (mt_unwind_hashmap_get(&ms->by_key, h, &v)) {
		struct mt_unwind_module *m = (void *)(uintptr_t)v;
		if (strcmp(m->path, path) == 0 && m->want_id_len == id_len &&
		    memcmp(m->want_id, id, id_len) == 0)
			return m;
		for (m = ms->list; m; m = m->next)	/* hash collision: rare */
			if (strcmp(m->path, path) == 0 && m->want_id_len == id_len &&
			    memcmp(m->want_id, id, id_len) == 0)
				return m;
	}
	struct mt_unwind_module *m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(path))) {
		free(m);
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	const char *slash = strrchr(m->path, '/');
	m->name = slash ? slash + 1 : m->path;
	if (id_len)
		memcpy(m->want_id, id, id_len);
	m->want_id_len = id_len;
	m->owner = ms;
	module_open(ms, m);
	if (m->state == MT_UNWIND_MOD_OK && ms->prefetch && m->opened &&
	    strcmp(m->opened, "[vdso]") != 0)
		loader_start(ms, m);
	if (mt_unwind_hashmap_put(&ms->by_key, h, (uintptr_t)m) != 0) {
		module_free(m);
		return NULL;
	}
	m->next = ms->list;
	ms->list = m;
	return m;
}

int mt_unwind_module_vaddr_delta(const struct mt_unwind_module *m, uint64_t offset,
				 int64_t *delta)
{
	/* Mappings start on the page boundary below p_offset, and two
	 * segments may cover that page: lld starts the executable segment
	 * right after the read-only one, in the same page of the file (its
	 * vaddr a page further on).  The mapping is executable (maps.h), so
	 * an executable segment wins, then one that starts on that page. */
	const struct mt_unwind_load *best = NULL;
	int best_rank = -1;
	for (size_t i = 0; i < m->nr_loads; i++) {
		const struct mt_unwind_load *l = &m->loads[i];
		uint64_t lo = l->offset & ~(uint64_t)0xfff;
		if (offset < lo || offset >= l->offset + l->filesz)
			continue;
		int rank = l->exec * 2 + (lo == offset);
		if (rank > best_rank) {
			best = l;
			best_rank = rank;
		}
	}
	if (!best)
		return MT_UNWIND_ERANGE;
	*delta = (int64_t)(best->vaddr - best->offset);
	return 0;
}

void mt_unwind_module_load_cfi(struct mt_unwind_module *m)
{
	if (m->cfi_loaded)
		return;
	m->cfi_loaded = 1;
	if (m->state != MT_UNWIND_MOD_OK)
		return;
	m->eh_cfi = dwfl_module_eh_cfi(m->mod, &m->eh_bias);
}

void mt_unwind_module_load_dwarf_cfi(struct mt_unwind_module *m)
{
	if (m->dw_cfi_loaded)
		return;
	m->dw_cfi_loaded = 1;
	if (m->state != MT_UNWIND_MOD_OK)
		return;
	/* .debug_frame lives with the DWARF: in the symbol session, which may
	 * have loaded it already.  But while its loader is still at work (a
	 * large symbol table, such as cc1's 29,000 dynamic symbols), the
	 * unwinder's own session finds it sooner: unwinding waited that long
	 * for each module whose first sample was taken in _init, which has
	 * no .eh_frame (the page fault of its first instruction). */
	if (m->loader_running && !__atomic_load_n(&m->loader_done, __ATOMIC_ACQUIRE)) {
		m->dw_cfi = dwfl_module_dwarf_cfi(m->mod, &m->dw_bias);
		return;
	}
	mt_unwind_module_symbols_ready(m);
	m->dw_cfi = dwfl_module_dwarf_cfi(m->sym_mod, &m->dw_bias);
}

void mt_unwind_module_load_dwarf(struct mt_unwind_module *m)
{
	mt_unwind_module_symbols_ready(m);	/* first: the loader writes these */
	if (m->dwarf_loaded)
		return;
	m->dwarf_loaded = 1;
	if (m->state != MT_UNWIND_MOD_OK)
		return;
	m->dwarf = dwfl_module_getdwarf(m->sym_mod, &m->dwarf_bias);
	attach_scopes(m->owner, m);
}


int mt_unwind_module_usable(const struct mt_unwind_module *m)
{
	return m->state == MT_UNWIND_MOD_OK;
}

const char *mt_unwind_module_path(const struct mt_unwind_module *m)
{
	return m->path;
}

int mt_unwind_module_unusable_reason(const struct mt_unwind_module *m, char *buf, size_t n)
{
	/* Anonymous code (a JIT's) and the kernel's pseudo-mappings name
	 * no file to be opened. */
	if (m->path[0] != '/' ? strcmp(m->path, "[vdso]") != 0 : strncmp(m->path, "//anon", 6) == 0)
		return 0;
	switch (m->state) {
	case MT_UNWIND_MOD_MISSING:
		snprintf(buf, n, "%s", strerror(m->open_errno ? m->open_errno : ENOENT));
		return 1;
	case MT_UNWIND_MOD_NOT_REGULAR:
		if (strcmp(m->not_regular, "replaced while it was opened") == 0)
			snprintf(buf, n, "%s", m->not_regular);
		else
			snprintf(buf, n, "not a regular file (%s)", m->not_regular);
		return 1;
	case MT_UNWIND_MOD_BAD_ELF:
		snprintf(buf, n, "not an ELF file");
		return 1;
	default:
		return 0;
	}
}

enum mt_unwind_module_state mt_unwind_module_state(const struct mt_unwind_module *m)
{
	return m->state;
}

void mt_unwind_module_build_id_hex(const struct mt_unwind_module *m, int recorded, char out[41])
{
	if (recorded)
		mt_build_id_hex(out, m->want_id, m->want_id_len);
	else
		mt_build_id_hex(out, m->file_id, m->file_id_len);
}

void mt_unwind_module_cache_counts(const struct mt_unwind_module *m, uint64_t *hits,
				   uint64_t *misses)
{
	*hits = m->rules.hits + m->frames.hits;
	*misses = m->rules.misses + m->frames.misses;
}

const char *mt_unwind_module_opened(const struct mt_unwind_module *m, dev_t *dev, ino_t *ino)
{
	if (m->state != MT_UNWIND_MOD_OK)
		return NULL;
	*dev = m->dev;
	*ino = m->ino;
	return m->opened;
}

/* Is path in directory dir? */
static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(path, dir, n) == 0 && path[n] == '/';
}

int mt_unwind_module_debug_files(struct mt_unwind_module *m, char *debug, size_t size,
				 char *alt, size_t alt_size, char alt_id[129])
{
	debug[0] = alt[0] = alt_id[0] = '\0';
	if (m->state != MT_UNWIND_MOD_OK || !m->opened || strcmp(m->opened, "[vdso]") == 0)
		return 0;
	mt_unwind_module_load_dwarf(m);		/* finds the debug file if any */
	const char *mainfile = NULL, *dbg = NULL;
	dwfl_module_info(m->sym_mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &dbg);
	struct mt_unwind_modules *ms = m->owner;
	if (dbg && ms->debug_cache && under(dbg, ms->debug_cache)) {
		/* an inflated copy: of the debug file in a build-id tree, or
		 * of the module's own file (then none) */
		const unsigned char *id;
		GElf_Addr idaddr;
		int n = dwfl_module_build_id(m->sym_mod, &id, &idaddr), fd;
		dbg = NULL;
		if (n > 0 && (fd = path_by_build_id(ms, id, n, debug, size)) >= 0) {
			close(fd);
			dbg = debug;
		}
	}
	if (dbg && mainfile && strcmp(dbg, mainfile) == 0)
		dbg = NULL;
	if (dbg && dbg != debug && snprintf(debug, size, "%s", dbg) >= (int)size)
		return -1;
	if (!dbg)
		debug[0] = '\0';
	/* A dwz-made common file (.gnu_debugaltlink), by its build-id. */
	const char *name;
	const void *aid;
	ssize_t an;
	if (m->dwarf && (an = dwelf_dwarf_gnu_debugaltlink(m->dwarf, &name, &aid)) > 0 &&
	    an <= 64) {
		mt_build_id_hex(alt_id, aid, (size_t)an);
		int fd = path_by_build_id(ms, aid, (int)an, alt, alt_size);
		if (fd >= 0)
			close(fd);
		else
			alt[0] = '\0';
	}
	return 0;
}
