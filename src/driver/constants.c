/* constants: every constant group with the values of the header built against. The member
 * names come from cuda_constants.h, which scripts/gen-constants.js writes at build time from the
 * same header; the values are the compiler's. */
#include <string.h>

#include "driver.h"

typedef struct constant {
  const char *group;
  const char *name;
  long long value;
} constant;

static const constant CONSTANTS[] = {
#define CONSTANT(group, name, c_name) {#group, #name, (long long)(c_name)},
#include "cuda_constants.h"
#undef CONSTANT
};

/* constants(): { Group: { NAME: value } } for every generated member. */
static napi_value constants(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result, group = NULL;
  const char *group_name = "";
  NAPI_CALL(env, napi_create_object(env, &result));
  for (size_t i = 0; i < sizeof CONSTANTS / sizeof CONSTANTS[0]; i++) {
    const constant *c = &CONSTANTS[i];
    if (!group || strcmp(group_name, c->group) != 0) {
      NAPI_CALL(env, napi_create_object(env, &group));
      NAPI_CALL(env, napi_set_named_property(env, result, c->group, group));
      group_name = c->group;
    }
    NAPI_CALL(env, napi_set_named_property(env, group, c->name, make_int(env, c->value)));
  }
  return result;
}

bool constants_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {{"constants", constants}};
  return EXPORTS(env, exports, fns);
}
