/* ELF modules: files that mappings point at, opened once and shared by every
 * address space that maps them.
 *
 * Each module owns a small offline Dwfl (one module in it, placed at its ELF
 * virtual addresses, so module addresses are the addresses objdump shows).
 * libdwfl finds separate debug info (/usr/lib/debug/.build-id, debuglink,
 * --debuginfo-path, debuginfod when DEBUGINFOD_URLS is set) on first need.
 * The per-PC caches (unwind rules, frame text) hang off the module.
 */
#ifndef MT_UNWIND_MODULE_H
#define MT_UNWIND_MODULE_H

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>

#include "symbolize/error.h"
#include "symbolize/debug_cache.h"
#include "symbolize/hashmap.h"
#include "symbolize/rule_ranges.h"
#include "symbolize/scopes.h"
#include "symbolize/symtab.h"

enum mt_unwind_module_state {
	MT_UNWIND_MOD_OK,
	MT_UNWIND_MOD_MISSING,		/* cannot open (errno in open_errno) */
	MT_UNWIND_MOD_NOT_REGULAR,	/* a device, fifo, directory, a file of
					 * /proc or /sys: never opened (the
					 * kind in not_regular) */
	MT_UNWIND_MOD_BAD_ELF,		/* not a readable ELF file */
	MT_UNWIND_MOD_MISMATCH,		/* build-id differs from the recorded one */
};

struct mt_unwind_load {			/* a PT_LOAD segment */
	uint64_t offset, filesz, vaddr;
	int exec;			/* PF_X */
};

struct mt_unwind_module {
	char *path;			/* as mapped */
	const char *name;		/* basename of path */
	enum mt_unwind_module_state state;
	int open_errno;
	const char *not_regular;	/* "fifo", "directory", ...: a literal */
	dev_t dev;			/* the file opened (OK): what the */
	ino_t ino;			/* loader must open again */
	uint8_t want_id[20];		/* build-id the recording gave, if any */
	unsigned want_id_len;
	uint8_t file_id[20];		/* build-id of the file found */
	unsigned file_id_len;

	Dwfl *dwfl;
	Dwfl_Module *mod;		/* CFI (the unwinder's, main thread) */
	char *opened;			/* the path actually opened (a stand-in?) */

	/* Symbols and DWARF come from a second libdwfl session on the same
	 * file, which a loader thread may fill while the unwinder goes on
	 * (mt_unwind_modules_prefetch); sym_mod is mod when there is none.
	 * .debug_frame comes from it too, unless the unwinder needs it while
	 * the loader is still at work: then from mod (load_dwarf_cfi). */
	Dwfl *sym_dwfl;
	Dwfl_Module *sym_mod;
	pthread_t loader;
	int loader_running;		/* started and not yet joined */
	int loader_done;		/* it has finished (atomic) */
	struct mt_unwind_load *loads;
	size_t nr_loads;

	/* Loaded on first use: CFI (eh_frame, then debug_frame), DWARF. */
	int cfi_loaded, dw_cfi_loaded;
	Dwarf_CFI *eh_cfi, *dw_cfi;
	Dwarf_Addr eh_bias, dw_bias;
	int dwarf_loaded;
	Dwarf *dwarf;
	Dwarf_Addr dwarf_bias;

	int symtab_loaded;
	struct mt_unwind_symtab symtab;	/* sorted functions, on first use */

	/* vaddr -> const struct mt_unwind_rule *, which many pcs may share:
	 * the rules are owned by rules_file (its rows'), rules_owned (those
	 * compiled in this run) or are static (no CFI). */
	struct mt_unwind_hashmap rules;
	struct mt_unwind_rule **rules_owned;
	size_t nr_rules_owned, cap_rules_owned;
	/* The debug cache's rows of .eh_frame compiled in runs before
	 * (rules_file.h), mapped on the first miss of rules, and the rows
	 * compiled in this run (rule_ranges.h), saved at its end.  The
	 * unwinder's. */
	int rules_file_tried;
	struct mt_unwind_rules_file *rules_file;
	uint64_t rules_source;
	struct mt_unwind_rule_ranges rules_new;
	uint64_t rules_hits;		/* pcs whose rule came from the file */
	uint64_t rules_asked;		/* pcs asked of libdw */
	uint64_t rules_reused;		/* pcs in a row of rules_new */
	struct mt_unwind_hashmap frames;/* vaddr -> struct mt_unwind_sym * */
	/* The entries for vaddr MT_UNWIND_HASH_EMPTY, which the maps cannot
	 * hold (a made-up pc of a damaged or hostile recording). */
	const struct mt_unwind_rule *rule_no_key;
	struct mt_unwind_sym *frame_no_key;
	struct mt_unwind_scopes *scopes;/* per-CU scope ranges, see scopes.h */
	struct mt_unwind_cus *cus;	/* units by address when .debug_aranges
					 * cannot tell, see cu.h */
	void *owner;			/* the mt_unwind_modules it belongs to */
	/* Held around symbolising (mt_unwind_sym_get) and compiling CFI rules
	 * (mt_unwind_rule_get's misses), which may run on two threads: without
	 * a loader, both use the module's one libdwfl session.  Once the loader
	 * has been joined and sym_mod is a session of its own, apart is set
	 * (atomic): rules from .eh_frame, in mod, are then compiled without the
	 * lock, so the unwinder does not wait while a writer holds it to index
	 * a large compile unit (a long stretch on python3 with its DWARF). */
	pthread_mutex_t lock;
	int apart;
	uint32_t out_id;		/* --pprof-info: its "# module N" (0: none
					 * yet); set by the one thread that writes */
	struct mt_unwind_module *next;	/* in the cache's list */
};

/* For the rooms outside the unwinder (the text writer, the summary), which
 * read a module through these rather than its fields. */

/* Can m's frames be symbolised (opened, an ELF file, the build-id the
 * recording gave)? */
int mt_unwind_module_usable(const struct mt_unwind_module *m);

/* The module's path as mapped, and its state.  Valid while m lives. */
const char *mt_unwind_module_path(const struct mt_unwind_module *m);
enum mt_unwind_module_state mt_unwind_module_state(const struct mt_unwind_module *m);

/* Why m cannot be used, for a warning, into buf (n bytes): "not a regular
 * file (fifo)", "not a regular file (a file of /proc)", "not an ELF file",
 * open's strerror ("No such file or directory").  @return : 1, or 0 when
 * it can be used, when its build-id differs (reported with both ids), or
 * when its path names no file (an anonymous mapping's, "//anon"). */
int mt_unwind_module_unusable_reason(const struct mt_unwind_module *m, char *buf, size_t n);

/* The build-id the recording gave (recorded) or the file has (else), as
 * lowercase hex into out (41 bytes): "" when there is none. */
void mt_unwind_module_build_id_hex(const struct mt_unwind_module *m, int recorded, char out[41]);

/* The file opened for m, with its device and inode: NULL when m is not
 * usable.  "[vdso]" for the vdso. */
const char *mt_unwind_module_opened(const struct mt_unwind_module *m, dev_t *dev, ino_t *ino);

/* The separate debug file m's symbols and DWARF come from, into debug
 * (size bytes; "" when none: the file has its own or has none), loading
 * m's DWARF first if it was not yet; with a debug cache, the file its
 * inflated copy was made from.  The dwz common file its DWARF refers to
 * (.gnu_debugaltlink), into alt (its build-id as hex into alt_id; alt ""
 * when it was not found in a build-id tree).  Main thread, after the
 * unwinding.  @return : 0, or -1 when a path does not fit. */
int mt_unwind_module_debug_files(struct mt_unwind_module *m, char *debug, size_t size,
				 char *alt, size_t alt_size, char alt_id[129]);

/* Lookups of m's rule and symbol caches so far: found, and not found. */
void mt_unwind_module_cache_counts(const struct mt_unwind_module *m, uint64_t *hits,
				   uint64_t *misses);

struct mt_unwind_modules;

/* A module cache.  debuginfo_path: extra directories (colon-separated) to
 * search for separate debug info before the default ones; may be NULL.
 * @return : 0, or MT_UNWIND_ENOMEM. */
int mt_unwind_modules_new(struct mt_unwind_modules **out, const char *debuginfo_path);

/* Where mt-capture keeps copies by build-id (capture_keep.h): DIR/HEX/NAME
 * is tried before the alternative directories.  NULL or "": none. */
void mt_unwind_modules_set_kept_dir(struct mt_unwind_modules *ms, const char *dir);

/* --symfs: look for each module with a recorded build-id first in dir's
 * build-id tree, as dir/.build-id/XX/REST (the copy `mt archive` made),
 * and for separate debug files first in dir (dir/.build-id/XX/REST.debug),
 * before the user's --debuginfo-path.  Call before any module is opened.
 * @return : 0, or MT_UNWIND_ENOMEM. */
int mt_unwind_modules_set_symfs(struct mt_unwind_modules *ms, const char *dir);

/* Use inflated copies of compressed debug files kept in @dir (see
 * debug_cache.h); NULL or "" turns the cache off (the default). */
void mt_unwind_modules_set_debug_cache(struct mt_unwind_modules *ms, const char *dir);

/* Save the modules' scope indexes in the debug cache (see scopes_file.h),
 * where they have new ones.  @return : what the scope index cache did. */
struct mt_unwind_scopes_stats mt_unwind_modules_save_scopes(struct mt_unwind_modules *ms);

/* m's sorted symbol table (m->symtab), loaded on first call, through the
 * debug cache's DIR/<build-id>.syms (symtab.h).  Call after
 * mt_unwind_module_symbols_ready.  @return : 0, or MT_UNWIND_ENOMEM. */
int mt_unwind_module_load_symtab(struct mt_unwind_module *m);

struct mt_unwind_rule;

/* The rule for vaddr from the CFI row cache of m (rules_file.h), the
 * same for every pc of a saved row (owned by m), or NULL when no saved
 * row holds vaddr (or out of memory). */
const struct mt_unwind_rule *mt_unwind_module_cached_rule(struct mt_unwind_module *m,
							  uint64_t vaddr);

/* The rule of a row kept in this run (mt_unwind_module_keep_rule) that
 * holds vaddr, or NULL. */
const struct mt_unwind_rule *mt_unwind_module_kept_rule(struct mt_unwind_module *m,
							uint64_t vaddr);

/* Keep rule, compiled from the .eh_frame row [lo, hi) and owned by m, for
 * the pcs of that row met later in the run and to be saved at its end. */
void mt_unwind_module_keep_rule(struct mt_unwind_module *m, uint64_t lo, uint64_t hi,
				const struct mt_unwind_rule *rule);

/* Make m the owner of rule (a heap block), freed with m.  @return : 0, or
 * MT_UNWIND_ENOMEM (then rule was freed). */
int mt_unwind_module_own_rule(struct mt_unwind_module *m, struct mt_unwind_rule *rule);

struct mt_unwind_rules_stats;

/* Save the modules' new CFI rows in the debug cache, and say what the
 * CFI row cache did in the run (*st).  Main thread, after the unwinding. */
void mt_unwind_modules_save_rules(struct mt_unwind_modules *ms, struct mt_unwind_rules_stats *st);

/* What the symbol table cache did so far. */
struct mt_unwind_symtab_stats mt_unwind_modules_symtab_stats(struct mt_unwind_modules *ms);

/* What the debug cache did so far. */
struct mt_unwind_debug_cache_stats
mt_unwind_modules_debug_cache_stats(struct mt_unwind_modules *ms);

/* From now on, each module opened starts a thread that loads its symbol
 * table and, when dwarf is set, its DWARF (separate debug info included),
 * the slow parts of symbolisation, in a libdwfl session of its own.
 * mt_unwind_module_symbols_ready waits for it. */
void mt_unwind_modules_prefetch(struct mt_unwind_modules *ms, int dwarf);

/* @return : 1 while a loader thread is still at work (its module's
 * symbols would make the caller wait), else 0. */
int mt_unwind_modules_loading(struct mt_unwind_modules *ms);

/* Make m->sym_mod usable on this thread (joins m's loader; without one,
 * sym_mod is mod).  Then symtab and DWARF load on demand as before. */
void mt_unwind_module_symbols_ready(struct mt_unwind_module *m);

/* Frees every module and its caches.  Accepts NULL. */
void mt_unwind_modules_free(struct mt_unwind_modules *ms);

/* The module for path as recorded with build-id id (len 0 when the
 * recording had none).  Opens the file on first request; failures are
 * cached too, so the result is never NULL except out of memory: check
 * ->state.  "[vdso]" is served from this process's own vdso image, which
 * is the recording's when both ran on the same kernel (the build-id check
 * catches the other case).  Returned modules live as long as ms. */
struct mt_unwind_module *mt_unwind_modules_get(struct mt_unwind_modules *ms, const char *path,
					       const uint8_t *id, unsigned id_len);

/* Call fn on every module (for the summary). */
void mt_unwind_modules_each(struct mt_unwind_modules *ms,
			    void (*fn)(struct mt_unwind_module *m, void *arg), void *arg);

/* Translate the file offset at which an executable mapping starts to an
 * ELF virtual address, with the PT_LOAD that holds it: *delta = vaddr -
 * offset.  @return : 0, or MT_UNWIND_ERANGE when no segment covers offset. */
int mt_unwind_module_vaddr_delta(const struct mt_unwind_module *m, uint64_t offset,
				 int64_t *delta);

/* Load CFI and DWARF on demand.  Safe to call repeatedly.  .debug_frame
 * may need the separate debug file, so it loads only when .eh_frame lacks
 * a pc (load_dwarf_cfi). */
void mt_unwind_module_load_cfi(struct mt_unwind_module *m);
void mt_unwind_module_load_dwarf_cfi(struct mt_unwind_module *m);
void mt_unwind_module_load_dwarf(struct mt_unwind_module *m);

#endif
