/* fault-report: preloaded into the fuzzer's children by `npm run fuzz -- --backtrace` (run.js
 * builds it with cc). A child killed by a fault signal prints the native stack first, so that a
 * driver-mode death names the driver call it died in (SIGSEGV in cuGraphExecDestroy, called from
 * cudadrv's handle_release), and the faulting instruction as a library and an offset
 * ("libcuda.so.1+0x1d29f8": cut-trace.js compares replays by it), then dies of the signal as
 * before. Node installs its own SIGSEGV and SIGBUS handler at start (WebAssembly's traps, which the
 * fuzzer never sets off) over this one, which would then never run: those installs are ignored. On
 * x86-64 the registers follow the stack, with the words at each that holds a readable address:
 * under GLIBC_TUNABLES=glibc.malloc.perturb=165, a word of 0x5a bytes was read from heap memory
 * allocated and never written, one of 0xa5 bytes from memory freed (seed 1530714724's driver
 * crash read 0x5a5a5a5a5a5a5a5a: memory it never wrote, not freed memory). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static sigaction_fn real_sigaction(void) { return (sigaction_fn)dlsym(RTLD_NEXT, "sigaction"); }

static const char *signal_name(int sig) {
  switch (sig) {
  case SIGSEGV: return "SIGSEGV";
  case SIGBUS: return "SIGBUS";
  case SIGILL: return "SIGILL";
  case SIGFPE: return "SIGFPE";
  default: return "SIGABRT";
  }
}

static void say(const char *text, int n) {
  if (n > 0) (void)!write(STDERR_FILENO, text, (size_t)n);
}

#if defined(__x86_64__)
/* The general registers at the fault, four to a line, then the four words at each register that
 * holds a readable address (read with process_vm_readv, which fails instead of faulting). */
static void registers(const ucontext_t *context) {
  static const struct {
    const char *name;
    int at;
  } regs[] = {{"rip", REG_RIP}, {"rsp", REG_RSP}, {"rbp", REG_RBP}, {"rax", REG_RAX},
              {"rbx", REG_RBX}, {"rcx", REG_RCX}, {"rdx", REG_RDX}, {"rsi", REG_RSI},
              {"rdi", REG_RDI}, {"r8", REG_R8},   {"r9", REG_R9},   {"r10", REG_R10},
              {"r11", REG_R11}, {"r12", REG_R12}, {"r13", REG_R13}, {"r14", REG_R14},
              {"r15", REG_R15}};
  enum { COUNT = sizeof regs / sizeof *regs };
  char line[256];
  for (int i = 0; i < COUNT; i += 4) {
    int n = 0;
    for (int j = i; j < i + 4 && j < COUNT; j++)
      n += snprintf(line + n, sizeof line - (size_t)n, "%s%-3s %016" PRIx64, j > i ? "  " : "",
                    regs[j].name, (uint64_t)context->uc_mcontext.gregs[regs[j].at]);
    say(line, n + snprintf(line + n, sizeof line - (size_t)n, "\n"));
  }
  for (int i = 1; i < COUNT; i++) { /* not rip: its words are code */
    uint64_t at = (uint64_t)context->uc_mcontext.gregs[regs[i].at], words[4];
    struct iovec local = {words, sizeof words}, remote = {(void *)(uintptr_t)at, sizeof words};
    if (at < 4096 || process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != sizeof words) continue;
    say(line, snprintf(line, sizeof line,
                       "  at %s: %016" PRIx64 " %016" PRIx64 " %016" PRIx64 " %016" PRIx64 "\n",
                       regs[i].name, words[0], words[1], words[2], words[3]));
  }
}
#endif

/* "*** fault-report: the instruction at libcuda.so.1+0x1d29f8": the library holding the program
 * counter at the fault, and the offset in it */
static void instruction(const ucontext_t *context) {
  void *pc = NULL;
#if defined(__x86_64__)
  pc = (void *)context->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  pc = (void *)context->uc_mcontext.pc;
#endif
  Dl_info at;
  if (!pc || !dladdr(pc, &at) || !at.dli_fname) return;
  const char *file = strrchr(at.dli_fname, '/');
  char line[256];
  say(line, snprintf(line, sizeof line, "*** fault-report: the instruction at %s+0x%" PRIxPTR "\n",
                     file ? file + 1 : at.dli_fname, (uintptr_t)pc - (uintptr_t)at.dli_fbase));
}

static void on_fault(int sig, siginfo_t *info, void *context) {
  char line[256];
  int n = snprintf(line, sizeof line,
                   "\n*** fault-report: %s at address %p in pid %d; native stack (a frame "
                   "module(+0xOFFSET): addr2line -f -e module 0xOFFSET names it):\n",
                   signal_name(sig), info->si_addr, (int)getpid());
  say(line, n);
  instruction(context);
  void *frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
#if defined(__x86_64__)
  registers(context);
#else
  (void)context;
#endif
  struct sigaction fallback = {.sa_handler = SIG_DFL};
  real_sigaction()(sig, &fallback, NULL);
  raise(sig);
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  if ((sig == SIGSEGV || sig == SIGBUS) && act) return real_sigaction()(sig, NULL, old);
  return real_sigaction()(sig, act, old);
}

__attribute__((constructor)) static void install(void) {
  void *warm[1];
  backtrace(warm, 1); /* loads libgcc's unwinder now, not in the handler */
  struct sigaction report = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_NODEFER};
  static const int signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
  for (size_t i = 0; i < sizeof signals / sizeof *signals; i++)
    real_sigaction()(signals[i], &report, NULL);
}
