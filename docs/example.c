/* docs/example.c: a complete C host of a chitta field (docs/C_API.md).
 *
 * Opens the field at argv[1] (it must exist: cf_open creates nothing), replays
 * every record in merge order, decodes the id and text of each PutPayload (op 0),
 * also inside the atomic Batch records (op 64) Python's remember writes, with a
 * tiny msgpack reader, then
 * appends two records a Python process sees on Field.refresh(): a new memory
 * (PutPayload [id, text]) and the deletion of the first memory it read
 * (DeleteMemory [id, at_ms]). Finally it checks the field with cf_verify.
 *
 * Build against an installed chitta (run these from any directory but the
 * repository root, whose chitta/ source tree would shadow the installed package):
 *   INC=$(python -c 'import chitta; print(chitta.get_include())')
 *   LIB=$(python -c 'import chitta; print(chitta.get_lib_dir())')
 *   cc -std=c99 -Wall -o example docs/example.c -I"$INC" -L"$LIB" -lchitta_field -Wl,-rpath,"$LIB"
 *   ./example /path/to/field
 *
 * Output, one fact a line: "put <id>\t<text>", "records <n> puts <n>",
 * "appended put <id> seqno <n>", "appended delete <id> seqno <n>",
 * "verify segments <n> records <n> damages <n>".
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <chitta/chitta_field.h>

enum { OP_PUT_PAYLOAD = 0, OP_DELETE_MEMORY = 2, OP_BATCH = 64 }; /* byte codes: docs/OPS.md */

/* ---- a tiny msgpack reader: just what the first two PutPayload fields need --- */

typedef struct {
  const uint8_t* p;
  const uint8_t* end;
} reader;

static uint64_t read_be(reader* r, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v = (v << 8) | r->p[i];
  r->p += n;
  return v;
}

/* Array header: its element count, or -1 if the next value is not an array. */
static int64_t read_array(reader* r) {
  if (r->p >= r->end) return -1;
  uint8_t b = *r->p++;
  if ((b & 0xf0) == 0x90) return b & 0x0f;
  if (b == 0xdc && r->end - r->p >= 2) return (int64_t)read_be(r, 2);
  if (b == 0xdd && r->end - r->p >= 4) return (int64_t)read_be(r, 4);
  return -1;
}

/* An unsigned integer into *out; 0 on success, -1 otherwise. */
static int read_uint(reader* r, uint64_t* out) {
  if (r->p >= r->end) return -1;
  uint8_t b = *r->p++;
  int n = 0;
  if (b <= 0x7f) { *out = b; return 0; }
  if (b == 0xcc) n = 1;
  else if (b == 0xcd) n = 2;
  else if (b == 0xce) n = 4;
  else if (b == 0xcf) n = 8;
  else return -1;
  if (r->end - r->p < n) return -1;
  *out = read_be(r, n);
  return 0;
}

/* A string: pointer into the payload and its length; 0 on success. */
static int read_str(reader* r, const char** s, size_t* len) {
  if (r->p >= r->end) return -1;
  uint8_t b = *r->p++;
  size_t n;
  if ((b & 0xe0) == 0xa0) n = b & 0x1f;
  else if (b == 0xd9 && r->end - r->p >= 1) n = (size_t)read_be(r, 1);
  else if (b == 0xda && r->end - r->p >= 2) n = (size_t)read_be(r, 2);
  else if (b == 0xdb && r->end - r->p >= 4) n = (size_t)read_be(r, 4);
  else return -1;
  if ((size_t)(r->end - r->p) < n) return -1;
  *s = (const char*)r->p;
  *len = n;
  r->p += n;
  return 0;
}

/* Skips one value of any type (nested arrays and maps included); 0 on success. */
static int skip_value(reader* r, int depth) {
  if (r->p >= r->end || depth > 64) return -1;
  uint8_t b = *r->p++;
  uint64_t n = 0, items = 0;
  if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) return 0; /* fixint, nil, bool */
  if ((b & 0xe0) == 0xa0) n = b & 0x1f;                                        /* fixstr */
  else if ((b & 0xf0) == 0x90) items = b & 0x0f;                               /* fixarray */
  else if ((b & 0xf0) == 0x80) items = 2 * (uint64_t)(b & 0x0f);               /* fixmap */
  else {
    static const int8_t fixed[] = {/* 0xc4.. */ -1, -2, -4, -1, -2, -4, 4, 8, 1, 2, 4, 8,
                                   1, 2, 4, 8, 2, 3, 5, 9, 17, -1, -2, -4, -2, -4, -2, -4};
    if (b < 0xc4 || b > 0xdf) return -1;
    int k = fixed[b - 0xc4];
    if (b == 0xdc || b == 0xdd || b == 0xde || b == 0xdf) { /* array16/32, map16/32 */
      int w = (b == 0xdc || b == 0xde) ? 2 : 4;
      if (r->end - r->p < w) return -1;
      items = read_be(r, w) * ((b >= 0xde) ? 2 : 1);
    } else if (k < 0) { /* bin, ext, str with a length prefix of -k bytes */
      if (r->end - r->p < -k) return -1;
      n = read_be(r, -k) + ((b >= 0xc7 && b <= 0xc9) ? 1 : 0); /* ext: + its type byte */
    } else {
      n = (uint64_t)k;
    }
  }
  if ((uint64_t)(r->end - r->p) < n) return -1;
  r->p += n;
  for (uint64_t i = 0; i < items; i++) {
    if (skip_value(r, depth + 1) != 0) return -1;
  }
  return 0;
}

/* ---- msgpack writing: an array header, a u64, an i64, a short string ---------- */

static uint8_t* put_be(uint8_t* o, uint64_t v, int n) {
  for (int i = n - 1; i >= 0; i--) *o++ = (uint8_t)(v >> (8 * i));
  return o;
}
static uint8_t* put_u64(uint8_t* o, uint64_t v) { *o++ = 0xcf; return put_be(o, v, 8); }
static uint8_t* put_i64(uint8_t* o, int64_t v) { *o++ = 0xd3; return put_be(o, (uint64_t)v, 8); }
static uint8_t* put_str(uint8_t* o, const char* s) { /* at most 255 bytes */
  size_t n = strlen(s);
  *o++ = 0xd9;
  *o++ = (uint8_t)n;
  memcpy(o, s, n);
  return o + n;
}

/* ---- replay ----------------------------------------------------------------- */

typedef struct {
  uint64_t records, puts, first_put_id;
  int bad; /* a PutPayload that did not decode */
} tally;

/* One PutPayload value at r (its first two fields: id, text); advances past it. */
static int on_put(tally* t, reader* r) {
  int64_t fields = read_array(r);
  uint64_t id;
  const char* text;
  size_t text_len;
  if (fields < 2 || read_uint(r, &id) != 0 || read_str(r, &text, &text_len) != 0) return -1;
  for (int64_t i = 2; i < fields; i++) {
    if (skip_value(r, 0) != 0) return -1;
  }
  if (t->puts++ == 0) t->first_put_id = id;
  printf("put %llu\t%.*s\n", (unsigned long long)id, (int)text_len, text);
  return 0;
}

/* A Batch is [[[op_type, op], ...]]: each op inline, decoded like a record of its type. */
static int on_batch(tally* t, reader* r) {
  int64_t n;
  if (read_array(r) < 1 || (n = read_array(r)) < 0) return -1;
  for (int64_t i = 0; i < n; i++) {
    uint64_t code;
    if (read_array(r) != 2 || read_uint(r, &code) != 0) return -1;
    if (code == OP_PUT_PAYLOAD ? on_put(t, r) != 0 : skip_value(r, 0) != 0) return -1;
  }
  return 0;
}

/* cf_record_fn: payload is valid only during this call, so copy what you keep. */
static int on_record(void* user, uint64_t seqno, uint32_t instance, uint8_t op_type,
                     const uint8_t* payload, size_t len) {
  tally* t = (tally*)user;
  (void)seqno;
  (void)instance;
  t->records++;
  reader r = {payload, payload + len};
  int bad = 0;
  if (op_type == OP_PUT_PAYLOAD) bad = on_put(t, &r) != 0;
  if (op_type == OP_BATCH) bad = on_batch(t, &r) != 0;
  if (bad) {
    t->bad = 1;
    return 1; /* stop the replay */
  }
  return 0;
}

static int fail(const char* what, cf_status st) {
  fprintf(stderr, "%s: %s: %s\n", what, cf_status_name(st), cf_last_error());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FIELD_PATH\n", argv[0]);
    return 2;
  }
  cf_field_t* field = NULL; /* ours once cf_open succeeds; released by cf_close */
  cf_status st = cf_open(argv[1], &field);
  if (st != CF_OK) return fail("cf_open", st);

  tally t = {0, 0, 0, 0};
  st = cf_replay(field, on_record, &t);
  if (st != CF_OK || t.bad) {
    cf_close(field);
    return st != CF_OK ? fail("cf_replay", st) : (fprintf(stderr, "undecodable record\n"), 1);
  }
  printf("records %llu puts %llu\n", (unsigned long long)t.records, (unsigned long long)t.puts);

  /* Memory ids are (instance id << 32) | a counter local to the instance. */
  uint32_t instance = 0;
  if ((st = cf_instance_id(field, &instance)) != CF_OK) {
    cf_close(field);
    return fail("cf_instance_id", st);
  }
  const uint64_t new_id = ((uint64_t)instance << 32) | 1u;
  uint8_t buf[512], *o = buf;
  *o++ = 0x92; /* PutPayload [id, text]: the fields after text keep their defaults */
  o = put_u64(o, new_id);
  o = put_str(o, "written from C");
  uint64_t seqno = 0;
  if ((st = cf_append(field, OP_PUT_PAYLOAD, buf, (size_t)(o - buf), &seqno)) != CF_OK) {
    cf_close(field);
    return fail("cf_append", st);
  }
  printf("appended put %llu seqno %llu\n", (unsigned long long)new_id, (unsigned long long)seqno);

  if (t.puts > 0) {
    o = buf;
    *o++ = 0x92; /* DeleteMemory [id, at_ms] */
    o = put_u64(o, t.first_put_id);
    o = put_i64(o, (int64_t)time(NULL) * 1000);
    if ((st = cf_append(field, OP_DELETE_MEMORY, buf, (size_t)(o - buf), &seqno)) != CF_OK) {
      cf_close(field);
      return fail("cf_append", st);
    }
    printf("appended delete %llu seqno %llu\n", (unsigned long long)t.first_put_id,
           (unsigned long long)seqno);
  }
  st = cf_close_checked(field); /* the handle is freed whatever st is */
  if (st != CF_OK) return fail("cf_close_checked", st);

  cf_verify_report report; /* ours; filled in by cf_verify (also when it finds damage) */
  st = cf_verify(argv[1], &report);
  if (st != CF_OK && st != CF_ECRC && st != CF_ECORRUPT) return fail("cf_verify", st);
  printf("verify segments %llu records %llu damages %llu\n", (unsigned long long)report.segments,
         (unsigned long long)report.records, (unsigned long long)report.damages);
  return st == CF_OK ? 0 : fail("cf_verify", st);
}
