/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * policy-fn-interp: the interpreter the kernel loads, with no system call the supervisor sees,
 * for an exec deny_path's gate checks (policy-fn-path.c): a script's "#!" line
 * (fs/binfmt_script.c) and an ELF file's first PT_INTERP (fs/binfmt_elf.c). The file is read
 * here, through the walk's descriptor, the way the kernel reads it: the first 256 bytes for a
 * script, the program headers for an ELF. What the kernel would refuse to load (a truncated
 * "#!" line, an ELF of a shape it rejects) names no interpreter: the exec then fails in the
 * kernel, and nothing is run.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "policy-fn-internal.h"

#define BINPRM_BUF 256	/* what the kernel reads of the file before choosing a format */
#define PHDRS_MAX 65536 /* the program header table load_elf_phdrs accepts at most */

/* The interpreter of a "#!" line in @buf (BINPRM_BUF bytes, zero-padded), as binfmt_script
 * finds it: 1 with its name in @name, 0 when the kernel would load none. */
static int script_interp(const char *buf, char *name, size_t size)
{
	const char *end = memchr(buf, '\n', BINPRM_BUF);
	const char *p = buf + 2;

	if (!end) {
		/* No newline: the name must end before the buffer does, or it is cut short. */
		end = buf + BINPRM_BUF - 1;
		const char *q = p + strspn(p, " \t");
		size_t n = q < end ? (size_t)(end - q) : 0;
		if (!n || (!memchr(q, ' ', n) && !memchr(q, '\t', n) && !memchr(q, '\0', n)))
			return 0;
	}
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	size_t len = 0;
	while (p + len < end && p[len] != ' ' && p[len] != '\t' && p[len] != '\0')
		len++;
	if (len == 0)
		return 0;
	if (len >= size)
		return -ENAMETOOLONG;
	memcpy(name, p, len);
	name[len] = '\0';
	return 1;
}

/* The first PT_INTERP of an ELF file of class @class, as load_elf_binary reads it: 1 with its
 * name in @name, 0 none (or a file the kernel refuses), -errno. */
static int elf_interp(int fd, const unsigned char *ident, char *name, size_t size)
{
	int is64 = ident[EI_CLASS] == ELFCLASS64;
	Elf64_Ehdr eh64;
	Elf32_Ehdr eh32;
	uint64_t phoff;
	size_t entsize = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr), phnum;
	uint16_t type, phentsize;

	if (ident[EI_CLASS] != ELFCLASS64 && ident[EI_CLASS] != ELFCLASS32)
		return 0;
	int r = is64 ? pread(fd, &eh64, sizeof(eh64), 0) : pread(fd, &eh32, sizeof(eh32), 0);
	if (r < (int)(is64 ? sizeof(eh64) : sizeof(eh32)))
		return r < 0 ? negative_errno() : 0;
	type = is64 ? eh64.e_type : eh32.e_type;
	phentsize = is64 ? eh64.e_phentsize : eh32.e_phentsize;
	phnum = is64 ? eh64.e_phnum : eh32.e_phnum;
	phoff = is64 ? eh64.e_phoff : eh32.e_phoff;
	if ((type != ET_EXEC && type != ET_DYN) || phentsize != entsize || phnum == 0 ||
	    phnum * entsize > PHDRS_MAX)
		return 0;
	_cleanup_free_ unsigned char *ph = malloc(phnum * entsize);
	if (!ph)
		return -ENOMEM;
	ssize_t k = pread(fd, ph, phnum * entsize, (off_t)phoff);
	if (k != (ssize_t)(phnum * entsize))
		return k < 0 ? negative_errno() : 0;
	for (size_t i = 0; i < phnum; i++) {
		const Elf64_Phdr *p64 = (const Elf64_Phdr *)(ph + i * entsize);
		const Elf32_Phdr *p32 = (const Elf32_Phdr *)(ph + i * entsize);
		if ((is64 ? p64->p_type : p32->p_type) != PT_INTERP)
			continue;
		uint64_t len = is64 ? p64->p_filesz : p32->p_filesz;
		uint64_t off = is64 ? p64->p_offset : p32->p_offset;
		if (len < 2 || len > size)
			return len < 2 ? 0 : -ENAMETOOLONG;
		if (pread(fd, name, len, (off_t)off) != (ssize_t)len || name[len - 1] != '\0')
			return 0; /* the kernel refuses the file */
		return 1;
	}
	return 0;
}

int pfn_exec_interp(int fd, char *name, size_t size)
{
	char self[64], buf[BINPRM_BUF] = "";
	struct stat st;

	/* Only a regular file is executed; the kernel refuses the rest. */
	if (fstat(fd, &st) < 0)
		return negative_errno();
	if (!S_ISREG(st.st_mode))
		return 0;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	_cleanup_close_ int file = open(self, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (file < 0)
		return negative_errno(); /* cannot tell what it loads: the caller fails closed */
	ssize_t k = pread(file, buf, sizeof(buf), 0);
	if (k < 0)
		return negative_errno();
	if (k >= 2 && buf[0] == '#' && buf[1] == '!') {
		int r = script_interp(buf, name, size);
		return r == 1 ? PFN_INTERP_SCRIPT : r;
	}
	if (k >= EI_NIDENT && memcmp(buf, ELFMAG, SELFMAG) == 0) {
		int r = elf_interp(file, (const unsigned char *)buf, name, size);
		return r == 1 ? PFN_INTERP_ELF : r;
	}
	return 0;
}
