/* digest: the hashes of the compile cache (lib/compiler-cache.js). They are here rather than in
 * node:crypto because a cache hit in a new process has about 2 ms in all, and node:crypto takes
 * longer than that to load and set OpenSSL up. blake2b names an entry by what decides its
 * contents (a cryptographic hash: two requests must never share a name; BLAKE2b rather than
 * SHA-256 because in plain C it is three times as fast); xxh64 checks an entry's bytes against
 * damage (a truncated or altered file), at memory speed. */
#include <stdlib.h>
#include <string.h>

#include "cache.h"

/* ---- BLAKE2b (RFC 7693), unkeyed ---- */

typedef struct blake2b_state {
  uint64_t h[8];
  uint64_t t[2]; /* bytes compressed */
  uint8_t block[128];
  size_t filled; /* bytes in block */
  size_t outlen;
} blake2b_state;

static const uint64_t IV[8] = {0x6a09e667f3bcc908u, 0xbb67ae8584caa73bu, 0x3c6ef372fe94f82bu,
                               0xa54ff53a5f1d36f1u, 0x510e527fade682d1u, 0x9b05688c2b3e6c1fu,
                               0x1f83d9abfb41bd6bu, 0x5be0cd19137e2179u};

static const uint8_t SIGMA[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
};

static uint64_t ror64(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

/* Little-endian words, whatever the host's order. */
static uint64_t load64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  return v;
}

#define G(a, b, c, d, x, y)                                                                        \
  do {                                                                                             \
    a = a + b + (x);                                                                               \
    d = ror64(d ^ a, 32);                                                                          \
    c = c + d;                                                                                     \
    b = ror64(b ^ c, 24);                                                                          \
    a = a + b + (y);                                                                               \
    d = ror64(d ^ a, 16);                                                                          \
    c = c + d;                                                                                     \
    b = ror64(b ^ c, 63);                                                                          \
  } while (0)

static void blake2b_compress(blake2b_state *s, const uint8_t *block, bool last) {
  uint64_t m[16], v[16];
  for (int i = 0; i < 16; i++) m[i] = load64(block + 8 * i);
  for (int i = 0; i < 8; i++) v[i] = s->h[i], v[i + 8] = IV[i];
  v[12] ^= s->t[0];
  v[13] ^= s->t[1];
  if (last) v[14] = ~v[14];
  for (int r = 0; r < 12; r++) {
    const uint8_t *z = SIGMA[r];
    G(v[0], v[4], v[8], v[12], m[z[0]], m[z[1]]);
    G(v[1], v[5], v[9], v[13], m[z[2]], m[z[3]]);
    G(v[2], v[6], v[10], v[14], m[z[4]], m[z[5]]);
    G(v[3], v[7], v[11], v[15], m[z[6]], m[z[7]]);
    G(v[0], v[5], v[10], v[15], m[z[8]], m[z[9]]);
    G(v[1], v[6], v[11], v[12], m[z[10]], m[z[11]]);
    G(v[2], v[7], v[8], v[13], m[z[12]], m[z[13]]);
    G(v[3], v[4], v[9], v[14], m[z[14]], m[z[15]]);
  }
  for (int i = 0; i < 8; i++) s->h[i] ^= v[i] ^ v[i + 8];
}

static void blake2b_count(blake2b_state *s, size_t n) {
  s->t[0] += n;
  if (s->t[0] < n) s->t[1]++;
}

static void blake2b_init(blake2b_state *s, size_t outlen) {
  memcpy(s->h, IV, sizeof IV);
  s->h[0] ^= 0x01010000u ^ outlen;
  s->t[0] = s->t[1] = 0;
  s->filled = 0;
  s->outlen = outlen;
}

/* The last block is compressed by blake2b_final alone (flagged last): a full block waits here
 * until more input follows it. */
static void blake2b_update(blake2b_state *s, const uint8_t *p, size_t n) {
  while (n > 0) {
    if (s->filled == 128) {
      blake2b_count(s, 128);
      blake2b_compress(s, s->block, false);
      s->filled = 0;
    }
    if (s->filled == 0 && n > 128) { /* whole blocks straight from the input */
      blake2b_count(s, 128);
      blake2b_compress(s, p, false);
      p += 128, n -= 128;
      continue;
    }
    size_t take = n < 128 - s->filled ? n : 128 - s->filled;
    memcpy(s->block + s->filled, p, take);
    s->filled += take, p += take, n -= take;
  }
}

/* The digest as 2 * outlen lowercase hex digits and a NUL. */
static void blake2b_final(blake2b_state *s, char *hex) {
  blake2b_count(s, s->filled);
  memset(s->block + s->filled, 0, 128 - s->filled);
  blake2b_compress(s, s->block, true);
  for (size_t i = 0; i < s->outlen; i++) {
    uint8_t byte = (uint8_t)(s->h[i / 8] >> (8 * (i % 8)));
    hex[2 * i] = "0123456789abcdef"[byte >> 4];
    hex[2 * i + 1] = "0123456789abcdef"[byte & 15];
  }
  hex[2 * s->outlen] = '\0';
}

/* ---- XXH64 (the xxHash specification, seed 0) ---- */

static const uint64_t P1 = 0x9E3779B185EBCA87u, P2 = 0xC2B2AE3D27D4EB4Fu, P3 = 0x165667B19E3779F9u,
                      P4 = 0x85EBCA77C2B2AE63u, P5 = 0x27D4EB2F165667C5u;

static uint64_t rol64(uint64_t x, int n) { return (x << n) | (x >> (64 - n)); }

static uint64_t xxh_round(uint64_t acc, uint64_t input) { return rol64(acc + input * P2, 31) * P1; }

static uint64_t xxh_merge(uint64_t acc, uint64_t v) { return (acc ^ xxh_round(0, v)) * P1 + P4; }

static uint64_t xxh64(const uint8_t *p, size_t n) {
  const uint8_t *end = p + n;
  uint64_t h;
  if (n >= 32) {
    uint64_t v1 = P1 + P2, v2 = P2, v3 = 0, v4 = 0 - P1;
    for (; end - p >= 32; p += 32) {
      v1 = xxh_round(v1, load64(p));
      v2 = xxh_round(v2, load64(p + 8));
      v3 = xxh_round(v3, load64(p + 16));
      v4 = xxh_round(v4, load64(p + 24));
    }
    h = rol64(v1, 1) + rol64(v2, 7) + rol64(v3, 12) + rol64(v4, 18);
    h = xxh_merge(xxh_merge(xxh_merge(xxh_merge(h, v1), v2), v3), v4);
  } else {
    h = P5;
  }
  h += n;
  for (; end - p >= 8; p += 8) h = rol64(h ^ xxh_round(0, load64(p)), 27) * P1 + P4;
  if (end - p >= 4) {
    h ^= (uint64_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24) * P1;
    h = rol64(h, 23) * P2 + P3;
    p += 4;
  }
  for (; p < end; p++) h = rol64(h ^ *p * P5, 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  return h ^ (h >> 32);
}

/* ---- exports ---- */

/* blake2b(parts, bytes): the BLAKE2b digest, bytes (1 to 64) long, of the parts one after the
 * other (strings as UTF-8, typed arrays and DataViews as their bytes), in hex. */
static napi_value digest_blake2b(napi_env env, napi_callback_info info) {
  static const char *const usage =
      "blake2b takes an array of strings and typed arrays, and a digest length of 1 to 64 bytes";
  size_t argc = 2;
  napi_value argv[2];
  bool is_array = false;
  uint32_t count, outlen = 0;
  NAPI_CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 2 || napi_is_array(env, argv[0], &is_array) != napi_ok || !is_array ||
      napi_get_value_uint32(env, argv[1], &outlen) != napi_ok || outlen < 1 || outlen > 64)
    return throw_type(env, usage);
  NAPI_CALL(env, napi_get_array_length(env, argv[0], &count));
  blake2b_state state;
  blake2b_init(&state, outlen);
  char *text = NULL;
  size_t room = 0;
  for (uint32_t i = 0; i < count; i++) {
    napi_value part;
    napi_valuetype type;
    const uint8_t *data;
    size_t length;
    napi_status status = napi_get_element(env, argv[0], i, &part);
    if (status == napi_ok) status = napi_typeof(env, part, &type);
    if (status == napi_ok && type == napi_string) {
      status = napi_get_value_string_utf8(env, part, NULL, 0, &length);
      if (status == napi_ok && length + 1 > room) {
        free(text);
        room = length + 1;
        if (!(text = malloc(room))) return throw_oom(env);
      }
      if (status == napi_ok) status = napi_get_value_string_utf8(env, part, text, room, &length);
    }
    if (status != napi_ok) {
      free(text);
      return napi_fail(env, status);
    }
    if (type == napi_string) {
      blake2b_update(&state, (const uint8_t *)text, length);
    } else if (arg_host(env, part, "a part", (void **)&data, &length)) {
      blake2b_update(&state, data, length);
    } else {
      free(text);
      return NULL;
    }
  }
  free(text);
  char hex[129];
  blake2b_final(&state, hex);
  napi_value result;
  NAPI_CALL(env, napi_create_string_latin1(env, hex, 2 * outlen, &result));
  return result;
}

/* xxh64(bytes): the XXH64 (seed 0) of a typed array's bytes, as a bigint. */
static napi_value digest_xxh64(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg;
  const uint8_t *data;
  size_t length;
  NAPI_CALL(env, napi_get_cb_info(env, info, &argc, &arg, NULL, NULL));
  if (argc < 1) return throw_type(env, "xxh64 takes a typed array");
  if (!arg_host(env, arg, "xxh64's argument", (void **)&data, &length)) return NULL;
  napi_value result;
  NAPI_CALL(env, napi_create_bigint_uint64(env, xxh64(data, length), &result));
  return result;
}

bool digest_init(napi_env env, napi_value exports) {
  static const export_fn fns[] = {
      {"blake2b", digest_blake2b},
      {"xxh64", digest_xxh64},
  };
  return EXPORTS(env, exports, fns);
}
