/* The stand-in's graph memory: an allocation node's bytes, malloc'd when the node is made (the
 * address is fixed from then on) and kept by the node and its copies; they count as device memory
 * (the "graph_memory" live count) only from a launch's allocation to their free. */
#include "fake.h"

#include <pthread.h>
#include <stdlib.h>

struct fake_graph_memory {
  void *bytes;
  size_t size;
  unsigned int holds; /* the node and its copies */
  bool live;          /* allocated by a launch, not yet freed */
  fake_graph_memory *next;
};

static fake_graph_memory *all;
static pthread_mutex_t memory_lock = PTHREAD_MUTEX_INITIALIZER;

fake_graph_memory *fake_graph_memory_new(size_t bytes) {
  fake_graph_memory *m = calloc(1, sizeof *m);
  if (m && !(m->bytes = malloc(bytes))) return free(m), NULL;
  if (!m) return NULL;
  m->size = bytes;
  m->holds = 1;
  pthread_mutex_lock(&memory_lock);
  m->next = all;
  all = m;
  pthread_mutex_unlock(&memory_lock);
  return m;
}

/* Forgets m where nothing holds it and it is not allocated; under memory_lock. */
static void forget(fake_graph_memory *m) {
  if (m->holds || m->live) return;
  for (fake_graph_memory **at = &all; *at; at = &(*at)->next)
    if (*at == m) {
      *at = m->next;
      break;
    }
  free(m->bytes);
  free(m);
}

void fake_graph_memory_hold(fake_graph_memory *m) {
  pthread_mutex_lock(&memory_lock);
  m->holds++;
  pthread_mutex_unlock(&memory_lock);
}

void fake_graph_memory_drop(fake_graph_memory *m) {
  pthread_mutex_lock(&memory_lock);
  m->holds--;
  forget(m);
  pthread_mutex_unlock(&memory_lock);
}

CUdeviceptr fake_graph_memory_address(const fake_graph_memory *m) {
  return (CUdeviceptr)(uintptr_t)m->bytes;
}
size_t fake_graph_memory_size(const fake_graph_memory *m) { return m->size; }

bool fake_graph_memory_live(const fake_graph_memory *m) { return m->live; }

CUresult fake_graph_memory_alloc(fake_graph_memory *m) {
  pthread_mutex_lock(&memory_lock);
  CUresult result =
      m->live ? CUDA_ERROR_INVALID_VALUE : obj_add((uintptr_t)m->bytes, OBJ_GRAPH_MEMORY, m->size);
  if (result == CUDA_SUCCESS) m->live = true;
  pthread_mutex_unlock(&memory_lock);
  return result;
}

static fake_graph_memory *find(CUdeviceptr ptr) {
  fake_graph_memory *m = all;
  while (m && fake_graph_memory_address(m) != ptr) m = m->next;
  return m;
}

CUresult fake_graph_memory_free(CUdeviceptr ptr) {
  pthread_mutex_lock(&memory_lock);
  fake_graph_memory *m = find(ptr);
  bool freed = m && m->live && obj_remove((uintptr_t)ptr, OBJ_GRAPH_MEMORY);
  if (freed) {
    m->live = false;
    forget(m);
  }
  pthread_mutex_unlock(&memory_lock);
  return freed ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

bool fake_graph_memory_holds(CUdeviceptr ptr, size_t bytes) {
  pthread_mutex_lock(&memory_lock);
  fake_graph_memory *m = all;
  while (m &&
         !(ptr >= fake_graph_memory_address(m) && ptr - fake_graph_memory_address(m) < m->size &&
           bytes <= m->size - (ptr - fake_graph_memory_address(m))))
    m = m->next;
  pthread_mutex_unlock(&memory_lock);
  return m != NULL;
}

bool fake_graph_memory_at(CUdeviceptr ptr) {
  pthread_mutex_lock(&memory_lock);
  bool found = find(ptr) != NULL;
  pthread_mutex_unlock(&memory_lock);
  return found;
}
