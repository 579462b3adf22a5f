/* allocations: the environment's table of live allocations. Every allocation is tracked in one
 * list, for reclaiming what garbage collection found dead and for V8's count of external memory;
 * device allocations also hold a slot, whose id is how lib/ names them. */
#include <stdlib.h>

#include "memory.h"

/* A slot of the table of live device allocations; lib/ names an allocation by its id: the slot
 * plus SLOT_COUNT times the slot's generation, a double (exact below 2^53). */
#define SLOT_BITS 24
#define SLOT_COUNT ((uint32_t)1 << SLOT_BITS)
#define GENERATIONS ((uint32_t)1 << (53 - SLOT_BITS))
#define NO_SLOT UINT32_MAX
typedef struct slot {
  tracked *node;        /* NULL while vacant */
  uint32_t generation;  /* counts the slot's uses, so that a stale id finds nothing */
  uint32_t next_vacant; /* while vacant: the next vacant slot, or NO_SLOT */
} slot;

struct memory_state {
  tracked head; /* sentinel of a circular list */
  bool tearing_down;
  int refs; /* the environment's, plus one per tracked allocation (main thread only) */
  slot *slots;
  uint32_t used, capacity; /* slots ever used, and allocated */
  uint32_t vacant;         /* the first vacant slot below used, or NO_SLOT */
  int64_t external;        /* tracked bytes not yet reported to V8 (negative: released) */
};

static void state_release(memory_state *state) {
  if (--state->refs > 0) return;
  free(state->slots);
  free(state);
}

void release_later(const tracked *node, release_op op, uint64_t address, ctx_rec *ctx) {
  if (op != RELEASE_ALIGNED_FREE && (!ctx || ctx_rec_gone(ctx)))
    return; /* the memory went with its context */
  if (node->state && !node->state->tearing_down && reaper_enqueue(op, address, ctx)) return;
  stats_cleanup(release_now(op, address, ctx));
}

/* V8 is told of the bytes tracked in steps of EXTERNAL_STEP at least: it only needs the count to
 * collect in time, and each telling is a call. What it has been told is never below zero: after
 * each telling it is the exact count. */
#define EXTERNAL_STEP ((int64_t)8 << 20)

static void count_external(napi_env env, memory_state *state, int64_t change) {
  state->external += change;
  if (state->external >= EXTERNAL_STEP || state->external <= -EXTERNAL_STEP) {
    int64_t total;
    NAPI_UNTHROWN(napi_adjust_external_memory(env, state->external, &total));
    state->external = 0;
  }
}

void memory_link(napi_env env, memory_state *state, tracked *node, napi_ref owner, size_t bytes,
                 reclaim_fn reclaim) {
  node->owner = owner;
  node->state = state;
  node->reclaim = reclaim;
  node->context_gone = NULL; /* the owner sets it where its memory goes with its context */
  node->bytes = bytes;
  node->prev = &state->head;
  node->next = state->head.next;
  state->head.next->prev = node;
  state->head.next = node;
  state->refs++;
  count_external(env, state, (int64_t)bytes);
}

void memory_unlink(napi_env env, tracked *node) {
  memory_state *state = node->state;
  node->prev->next = node->next;
  node->next->prev = node->prev;
  node->state = NULL;
  count_external(env, state, -(int64_t)node->bytes);
  state_release(state);
}

bool memory_track(napi_env env, tracked *node, napi_value owner, size_t bytes, reclaim_fn reclaim) {
  napi_ref ref;
  NAPI_CALL_BOOL(env, napi_create_reference(env, owner, 0, &ref));
  memory_link(env, state_of(env)->memory, node, ref, bytes, reclaim);
  return true;
}

void memory_untrack(napi_env env, tracked *node) {
  if (!node->state) return;
  NAPI_UNTHROWN(napi_delete_reference(env, node->owner));
  memory_unlink(env, node);
}

size_t memory_reclaim(napi_env env) {
  memory_state *state = state_of(env)->memory;
  size_t bytes = 0;
  for (tracked *node = state->head.next, *next; node != &state->head; node = next) {
    next = node->next;
    napi_value owner = NULL;
    if (napi_get_reference_value(env, node->owner, &owner) == napi_ok && !owner) {
      bytes += node->bytes;
      node->reclaim(env, node);
    }
  }
  reaper_drain();
  return bytes;
}

tracked *memory_find(napi_env env, bool (*match)(const tracked *node, const void *arg),
                     const void *arg) {
  memory_state *state = state_of(env)->memory;
  if (!state) return NULL;
  for (tracked *node = state->head.next; node != &state->head; node = node->next)
    if (match(node, arg)) return node;
  return NULL;
}

void memory_context_detached(napi_env env, ctx_rec *ctx) {
  memory_state *state = state_of(env)->memory;
  if (!state) return; /* the environment is going, and every ArrayBuffer with it */
  for (tracked *node = state->head.next, *next; node != &state->head; node = next) {
    next = node->next;
    if (node->context_gone) node->context_gone(env, node, ctx);
  }
}

/* Runs before Node finalizes the environment's objects: their finalizers see no state here. */
static void memory_teardown(void *data) {
  addon_state *addon = data;
  memory_state *state = addon->memory;
  addon->memory = NULL;
  state->tearing_down = true; /* finalizers from now on release at once */
  reaper_drain();
  state_release(state);
}

bool memory_slot_take(memory_state *state, tracked *node, uint32_t *index) {
  uint32_t i = state->vacant;
  if (i != NO_SLOT) {
    state->vacant = state->slots[i].next_vacant;
  } else {
    if (state->used == state->capacity) {
      uint32_t capacity = state->capacity ? 2 * state->capacity : 64;
      slot *grown = capacity <= SLOT_COUNT ? realloc(state->slots, capacity * sizeof *grown) : NULL;
      if (!grown) return false;
      state->slots = grown;
      state->capacity = capacity;
    }
    i = state->used++;
    state->slots[i].generation = 0;
  }
  state->slots[i].node = node;
  *index = i;
  return true;
}

void memory_slot_drop(memory_state *state, uint32_t index) {
  slot *s = &state->slots[index];
  s->node = NULL;
  s->generation = (s->generation + 1) % GENERATIONS;
  s->next_vacant = state->vacant;
  state->vacant = index;
}

double memory_slot_id(const memory_state *state, uint32_t index) {
  return (double)index + (double)SLOT_COUNT * state->slots[index].generation;
}

tracked *memory_slot_find(napi_env env, double id) {
  const memory_state *state = state_of(env)->memory;
  if (!(id >= 0 && id < (double)SLOT_COUNT * GENERATIONS) || id != (double)(uint64_t)id)
    return NULL;
  uint64_t n = (uint64_t)id;
  uint32_t i = (uint32_t)(n % SLOT_COUNT);
  if (i >= state->used || state->slots[i].generation != n / SLOT_COUNT) return NULL;
  return state->slots[i].node;
}

/* Exports nothing: makes the table, which the other memory families use, and has detaching a
 * context make its host memory unreachable. */
bool allocations_init(napi_env env, napi_value exports) {
  (void)exports;
  memory_state *state = calloc(1, sizeof *state);
  if (!state) {
    throw_oom(env);
    return false;
  }
  state->head.prev = state->head.next = &state->head;
  state->refs = 1;
  state->vacant = NO_SLOT;
  state_of(env)->memory = state;
  context_on_detach(env, memory_context_detached);
  NAPI_CALL_BOOL(env, napi_add_env_cleanup_hook(env, memory_teardown, state_of(env)));
  return true;
}
