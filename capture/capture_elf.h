/* Symbol file offsets for uprobes, with libelf. */
#ifndef MT_CAPTURE_ELF_H
#define MT_CAPTURE_ELF_H

#include "capture/capture_err.h"

#include <stdint.h>

/* File offset of the function symbol name in the ELF file path (what the
 * uprobe PMU's config2 wants): its address mapped through the PT_LOAD
 * segment that holds it.  Looks in .symtab, then .dynsym.
 * @return : 0, 1 when the file has no such function, -1 on error (err). */
int mt_capture_elf_func_offset(const char *path, const char *name, uint64_t *offset,
			       char *err);

#endif
