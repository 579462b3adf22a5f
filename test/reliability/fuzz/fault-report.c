/* fault-report: preloaded into the fuzzer's children by `npm run fuzz -- --backtrace` (run.js
 * builds it with cc). A child killed by a fault signal prints the native stack first, so that a
 * driver-mode death names the driver call it died in (SIGSEGV in cuGraphExecDestroy, called from
 * cudadrv's handle_release), then dies of the signal as before. Node installs its own SIGSEGV and
 * SIGBUS handler at start (WebAssembly's traps, which the fuzzer never sets off) over this one,
 * which would then never run: those installs are ignored. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
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

static void on_fault(int sig, siginfo_t *info, void *context) {
  (void)context;
  char line[256];
  int n = snprintf(line, sizeof line,
                   "\n*** fault-report: %s at address %p in pid %d; native stack (a frame "
                   "module(+0xOFFSET): addr2line -f -e module 0xOFFSET names it):\n",
                   signal_name(sig), info->si_addr, (int)getpid());
  if (n > 0) (void)!write(STDERR_FILENO, line, (size_t)n);
  void *frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
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
