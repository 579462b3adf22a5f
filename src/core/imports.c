/* imports: a library cudadrv dlopens has imports of named functions bound to replacements of
 * cudadrv's (imports_rebind): the GOT slot of each import is rewritten after dlopen and before any
 * call into the library, as the dynamic linker itself writes it. signals.c keeps NVIDIA's
 * libraries from changing signal dispositions; compiler/reads.c guards and records what NVRTC
 * reads. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core.h"

#if defined(__x86_64__)
#define SLOT_RELOCATION(type) ((type) == R_X86_64_JUMP_SLOT || (type) == R_X86_64_GLOB_DAT)
#elif defined(__aarch64__)
#define SLOT_RELOCATION(type) ((type) == R_AARCH64_JUMP_SLOT || (type) == R_AARCH64_GLOB_DAT)
#else
#error "imports.c knows the GOT relocations of x86-64 and arm64 only"
#endif

/* The dynamic section's addresses: glibc relocates them in place on most targets, not on all. */
static uintptr_t dyn_address(const struct link_map *map, ElfW(Addr) value) {
  return value < map->l_addr ? map->l_addr + value : value;
}

typedef struct relro_find {
  uintptr_t base, start, end;
} relro_find;

static int find_relro(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  relro_find *find = data;
  if (info->dlpi_addr != find->base) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    if (info->dlpi_phdr[i].p_type != PT_GNU_RELRO) continue;
    find->start = find->base + info->dlpi_phdr[i].p_vaddr;
    find->end = find->start + info->dlpi_phdr[i].p_memsz;
  }
  return 1;
}

/* Writes value into the GOT slot at address, lifting RELRO's write protection for the store. */
static void write_slot(uintptr_t address, void *value, const relro_find *relro) {
  bool protected = address >= relro->start && address < relro->end;
  long page_size = sysconf(_SC_PAGESIZE);
  void *page = (void *)(address & ~(uintptr_t)(page_size - 1));
  if (protected && mprotect(page, (size_t)page_size, PROT_READ | PROT_WRITE) != 0) return;
  __atomic_store_n((void **)address, value, __ATOMIC_RELEASE);
  if (protected) mprotect(page, (size_t)page_size, PROT_READ);
}

static void rebind(const struct link_map *map, const ElfW(Rela) * relocations, size_t bytes,
                   const ElfW(Sym) * symbols, const char *strings, const relro_find *relro,
                   const import_binding *bindings, size_t count) {
  for (size_t i = 0; i < bytes / sizeof *relocations; i++) {
    if (!SLOT_RELOCATION(ELF64_R_TYPE(relocations[i].r_info))) continue;
    const char *name = strings + symbols[ELF64_R_SYM(relocations[i].r_info)].st_name;
    for (size_t k = 0; k < count; k++)
      if (strcmp(name, bindings[k].name) == 0)
        write_slot(map->l_addr + relocations[i].r_offset, bindings[k].replacement, relro);
  }
}

void imports_rebind(void *handle, const import_binding *bindings, size_t count) {
  struct link_map *map = NULL;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map) return;
  const ElfW(Sym) *symbols = NULL;
  const char *strings = NULL;
  const ElfW(Rela) *plt = NULL, *rela = NULL;
  size_t plt_bytes = 0, rela_bytes = 0;
  for (const ElfW(Dyn) *d = map->l_ld; d->d_tag != DT_NULL; d++) {
    switch (d->d_tag) {
    case DT_SYMTAB: symbols = (const void *)dyn_address(map, d->d_un.d_ptr); break;
    case DT_STRTAB: strings = (const void *)dyn_address(map, d->d_un.d_ptr); break;
    case DT_JMPREL: plt = (const void *)dyn_address(map, d->d_un.d_ptr); break;
    case DT_PLTRELSZ: plt_bytes = d->d_un.d_val; break;
    case DT_RELA: rela = (const void *)dyn_address(map, d->d_un.d_ptr); break;
    case DT_RELASZ: rela_bytes = d->d_un.d_val; break;
    }
  }
  if (!symbols || !strings) return;
  relro_find relro = {.base = map->l_addr};
  dl_iterate_phdr(find_relro, &relro);
  if (plt) rebind(map, plt, plt_bytes, symbols, strings, &relro, bindings, count);
  if (rela) rebind(map, rela, rela_bytes, symbols, strings, &relro, bindings, count);
}
