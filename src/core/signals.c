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
 * A library cudadrv loads has its imports of signal() and sigaction() bound (imports.c) to
 * functions that report the disposition in force and change nothing (signals_keep). */
#include <signal.h>

#include "core.h"

static sighandler_t kept_signal(int sig, sighandler_t handler) {
  (void)handler;
  struct sigaction now;
  return sigaction(sig, NULL, &now) == 0 ? now.sa_handler : SIG_ERR;
}

static int kept_sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  (void)act;
  return sigaction(sig, NULL, old);
}

static const import_binding KEPT[] = {
    {"signal", (void *)kept_signal},        {"sigaction", (void *)kept_sigaction},
    {"bsd_signal", (void *)kept_signal},    {"sysv_signal", (void *)kept_signal},
    {"__sysv_signal", (void *)kept_signal},
};

void signals_keep(void *handle) { imports_rebind(handle, KEPT, sizeof KEPT / sizeof KEPT[0]); }
