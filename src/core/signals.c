/* signals: the process's signal dispositions stay the user's and Node's while NVIDIA's libraries
 * run.
 *
 * NVRTC's front end installs a handler of its own for SIGINT and SIGTERM with signal() while it
 * parses, and puts the old one back with signal() again. That handler calls exit() from whichever
 * thread the signal lands on, and the put-back drops the flags of Node's handler (SA_RESETHAND):
 * Node's handler re-raises its signal to end the process, and without SA_RESETHAND it catches the
 * re-raised signal itself, for ever. So after one compile SIGINT and SIGTERM spin the process at
 * full CPU instead of ending it, and during one they call exit() mid-compile.
 *
 * A library cudadrv loads has its imports of signal() and sigaction() bound to functions that
 * report the disposition in force and change nothing (signals_keep). The GOT slot of each import
 * is rewritten after dlopen and before any call into the library, as the dynamic linker itself
 * writes it. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cudadrv.h"

static sighandler_t kept_signal(int sig, sighandler_t handler) {
  (void)handler;
  struct sigaction now;
  return sigaction(sig, NULL, &now) == 0 ? now.sa_handler : SIG_ERR;
}

static int kept_sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  (void)act;
  return sigaction(sig, NULL, old);
}

static const struct {
  const char *name;
  void *replacement;
} KEPT[] = {
    {"signal", (void *)kept_signal},        {"sigaction", (void *)kept_sigaction},
    {"bsd_signal", (void *)kept_signal},    {"sysv_signal", (void *)kept_signal},
    {"__sysv_signal", (void *)kept_signal},
};

#if defined(__x86_64__)
#define SLOT_RELOCATION(type) ((type) == R_X86_64_JUMP_SLOT || (type) == R_X86_64_GLOB_DAT)
#elif defined(__aarch64__)
#define SLOT_RELOCATION(type) ((type) == R_AARCH64_JUMP_SLOT || (type) == R_AARCH64_GLOB_DAT)
#else
#error "signals.c knows the GOT relocations of x86-64 and arm64 only"
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
                   const ElfW(Sym) * symbols, const char *strings, const relro_find *relro) {
  for (size_t i = 0; i < bytes / sizeof *relocations; i++) {
    if (!SLOT_RELOCATION(ELF64_R_TYPE(relocations[i].r_info))) continue;
    const char *name = strings + symbols[ELF64_R_SYM(relocations[i].r_info)].st_name;
    for (size_t k = 0; k < sizeof KEPT / sizeof KEPT[0]; k++)
      if (strcmp(name, KEPT[k].name) == 0)
        write_slot(map->l_addr + relocations[i].r_offset, KEPT[k].replacement, relro);
  }
}

void signals_keep(void *handle) {
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
  if (plt) rebind(map, plt, plt_bytes, symbols, strings, &relro);
  if (rela) rebind(map, rela, rela_bytes, symbols, strings, &relro);
}
