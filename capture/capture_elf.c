/* Symbol file offsets for uprobes, with libelf. */
#include "capture/capture_elf.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

static int find_in(Elf *elf, Elf_Scn *scn, const char *name, GElf_Addr *addr)
{
	GElf_Shdr sh;
	Elf_Data *data;
	if (!gelf_getshdr(scn, &sh) || !(data = elf_getdata(scn, NULL)) || !sh.sh_entsize)
		return 0;
	size_t n = sh.sh_size / sh.sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		const char *s = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (s && !strcmp(s, name)) {
			*addr = sym.st_value;
			return 1;
		}
	}
	return 0;
}

int mt_capture_elf_func_offset(const char *path, const char *name, uint64_t *offset,
			       struct mt_capture_err *err)
{
	int rc;
	Elf *elf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return mt_capture_err_set(err, MT_CAPTURE_EOPEN, errno, path, NULL);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		rc = mt_capture_err_set(err, MT_CAPTURE_ENOTELF, 0, path, NULL);
		goto out;
	}
	GElf_Addr addr = 0;
	int found = 0;
	for (int pass = 0; pass < 2 && !found; pass++) {
		Elf_Scn *scn = NULL;
		while (!found && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (gelf_getshdr(scn, &sh) &&
			    sh.sh_type == (pass ? SHT_DYNSYM : SHT_SYMTAB))
				found = find_in(elf, scn, name, &addr);
		}
	}
	if (!found) {
		rc = 1;
		goto out;
	}
	size_t nph;
	if (elf_getphdrnum(elf, &nph)) {
		rc = mt_capture_err_set(err, MT_CAPTURE_ENOPHDR, 0, path, NULL);
		goto out;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    addr >= ph.p_vaddr && addr < ph.p_vaddr + ph.p_filesz) {
			*offset = addr - ph.p_vaddr + ph.p_offset;
			rc = 0;
			goto out;
		}
	}
	rc = mt_capture_err_set(err, MT_CAPTURE_ENOSEGMENT, 0, path, name);
out:
	elf_end(elf);
	close(fd);
	return rc;
}
