/* Symbol file offsets for uprobes, with libelf. */
#ifndef MT_CAPTURE_ELF_H
#define MT_CAPTURE_ELF_H

#include "capture/capture_err.h"

#include <stdint.h>

/* File offset of the function symbol name in the ELF file path (what the
 * uprobe PMU's config2 wants) into *offset: its address mapped through the
 * PT_LOAD segment that holds it.  Looks in .symtab, then .dynsym; the file
 * is opened and closed here.  err may be NULL.
 * @return : 0 with *offset set, 1 when the file defines no such function,
 * or MT_CAPTURE_EOPEN, ENOTELF, ENOPHDR, ENOSEGMENT (err filled). */
int mt_capture_elf_func_offset(const char *path, const char *name, uint64_t *offset,
			       struct mt_capture_err *err);

#endif
