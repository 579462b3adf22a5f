/* live_handles: the set of handle structs wrapped on this thread and not yet finalized.
 *
 * napi_unwrap gives back whatever pointer any addon wrapped in an object; this set says whether
 * it is one of ours before anything reads it. It replaces a check of the object's type tag, which
 * costs a second private-property lookup in V8 (napi_unwrap is the first): looking the pointer up
 * here costs a few nanoseconds where the tag cost 45 (stream.isDone() on the stand-in driver:
 * 139 -> 91 ns a call).
 *
 * Each Node environment (the main thread, each worker) wraps, looks up and finalizes its handles
 * on its own thread, so the set is the thread's own and takes no lock. Open addressing with linear
 * probing; its table is freed when the last handle goes, so an ended worker leaves nothing. */
#include <stdint.h>
#include <stdlib.h>

#include "driver.h"

static _Thread_local struct {
  uintptr_t *slots; /* 0: empty */
  size_t mask;      /* capacity - 1, a power of two less one */
  size_t count;
} live;

static size_t home(uintptr_t p, size_t mask) {
  uint64_t h = (uint64_t)p * 0x9E3779B97F4A7C15ull;
  return (size_t)(h ^ (h >> 32)) & mask;
}

static void place(uintptr_t *slots, size_t mask, uintptr_t p) {
  size_t i = home(p, mask);
  while (slots[i]) i = (i + 1) & mask;
  slots[i] = p;
}

bool live_handle_add(const handle_base *base) {
  size_t capacity = live.slots ? live.mask + 1 : 0;
  if (2 * (live.count + 1) > capacity) { /* at most half full */
    size_t grown = capacity ? 2 * capacity : 64;
    uintptr_t *slots = calloc(grown, sizeof *slots);
    if (!slots) return false;
    for (size_t i = 0; i < capacity; i++)
      if (live.slots[i]) place(slots, grown - 1, live.slots[i]);
    free(live.slots);
    live.slots = slots;
    live.mask = grown - 1;
  }
  place(live.slots, live.mask, (uintptr_t)base);
  live.count++;
  return true;
}

/* Where p sits, or -1. */
static ptrdiff_t find(uintptr_t p) {
  if (!live.slots || !p) return -1;
  for (size_t i = home(p, live.mask);; i = (i + 1) & live.mask) {
    if (live.slots[i] == p) return (ptrdiff_t)i;
    if (!live.slots[i]) return -1;
  }
}

bool live_handle_has(const void *p) { return find((uintptr_t)p) >= 0; }

size_t live_handle_count(void) { return live.count; }

void live_handle_remove(const handle_base *base) {
  ptrdiff_t found = find((uintptr_t)base);
  if (found < 0) return;
  size_t hole = (size_t)found;
  live.slots[hole] = 0;
  /* Moves back each later entry of the run that could no longer be reached past the hole. */
  for (size_t j = (hole + 1) & live.mask; live.slots[j]; j = (j + 1) & live.mask) {
    size_t want = home(live.slots[j], live.mask);
    bool reachable = hole <= j ? hole < want && want <= j : hole < want || want <= j;
    if (!reachable) {
      live.slots[hole] = live.slots[j];
      live.slots[j] = 0;
      hole = j;
    }
  }
  if (--live.count == 0) {
    free(live.slots);
    live.slots = NULL;
    live.mask = 0;
  }
}
