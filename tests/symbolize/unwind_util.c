#include "tests/symbolize/unwind_util.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *ut_fixture(const char *name)
{
	static char buf[4096];
	const char *dir = getenv("MT_FIXTURES");
	snprintf(buf, sizeof(buf), "%s/%s", dir && *dir ? dir : "build/fixtures", name);
	return buf;
}

uint64_t ut_symbol(struct mt_unwind_module *m, const char *name)
{
	mt_unwind_module_symbols_ready(m);
	if (!m->symtab_loaded) {
		m->symtab_loaded = 1;
		if (mt_unwind_symtab_load(&m->symtab, m->sym_mod) != 0)
			return 0;
	}
	for (size_t i = 0; i < m->symtab.n; i++)
		if (strcmp(mt_unwind_symtab_name(&m->symtab, &m->symtab.v[i]), name) == 0)
			return m->symtab.v[i].addr;
	return 0;
}

uint64_t ut_section(const char *path, const char *name, uint64_t *size)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstrndx;
	uint64_t addr = 0;
	if (e && elf_getshdrstrndx(e, &shstrndx) == 0) {
		for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
			GElf_Shdr sh;
			if (!gelf_getshdr(s, &sh))
				continue;
			const char *n = elf_strptr(e, shstrndx, sh.sh_name);
			if (n && strcmp(n, name) == 0) {
				addr = sh.sh_addr;
				*size = sh.sh_size;
				break;
			}
		}
	}
	elf_end(e);
	close(fd);
	return addr;
}
