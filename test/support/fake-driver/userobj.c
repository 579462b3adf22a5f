/* The stand-in's user objects: a pointer and its destructor, counted. Graphs own references
 * (cuGraphRetainUserObject); their copies (GraphExecs, child graph nodes, updates) take the same
 * ones, given back when the copy goes. The last reference's release runs the destructor there and
 * then, on whichever thread let it go, as the driver may. */
#include "fake.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

struct CUuserObject_st {
  void *ptr;
  CUhostFn destroy;
  unsigned int refs;
};

static pthread_mutex_t refs_lock = PTHREAD_MUTEX_INITIALIZER;

EXPORT CUresult cuUserObjectCreate(CUuserObject *out, void *ptr, CUhostFn destroy,
                                   unsigned int count, unsigned int flags) {
  ENTER();
  if (!out || !destroy || !count || count > INT_MAX || flags != CU_USER_OBJECT_NO_DESTRUCTOR_SYNC)
    return CUDA_ERROR_INVALID_VALUE;
  CUuserObject object = malloc(sizeof *object);
  if (!object) return CUDA_ERROR_OUT_OF_MEMORY;
  *object = (struct CUuserObject_st){ptr, destroy, count};
  CUresult result = obj_add((uintptr_t)object, OBJ_USER_OBJECT, 0);
  if (result != CUDA_SUCCESS) return free(object), result;
  *out = object;
  return CUDA_SUCCESS;
}

bool fake_user_object_take(CUuserObject object, unsigned int count) {
  if (!obj_live((uintptr_t)object, OBJ_USER_OBJECT)) return false;
  pthread_mutex_lock(&refs_lock);
  object->refs += count;
  pthread_mutex_unlock(&refs_lock);
  return true;
}

void fake_user_object_drop(CUuserObject object, unsigned int count) {
  pthread_mutex_lock(&refs_lock);
  bool last = (object->refs -= count) == 0;
  pthread_mutex_unlock(&refs_lock);
  if (!last) return;
  obj_remove((uintptr_t)object, OBJ_USER_OBJECT);
  log_line("user object destroyed");
  object->destroy(object->ptr);
  free(object);
}

EXPORT CUresult cuUserObjectRetain(CUuserObject object, unsigned int count) {
  ENTER();
  if (!count || count > INT_MAX) return CUDA_ERROR_INVALID_VALUE;
  return fake_user_object_take(object, count) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuUserObjectRelease(CUuserObject object, unsigned int count) {
  ENTER();
  if (!count || !obj_live((uintptr_t)object, OBJ_USER_OBJECT)) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&refs_lock);
  bool held = count <= object->refs;
  pthread_mutex_unlock(&refs_lock);
  if (!held) return CUDA_ERROR_INVALID_VALUE;
  fake_user_object_drop(object, count);
  return CUDA_SUCCESS;
}
