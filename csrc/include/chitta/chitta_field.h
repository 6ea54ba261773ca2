/* chitta_field.h: the stable C ABI of a chitta field and its native indexes.
 *
 * Every call that can fail returns a cf_status; CF_OK == 0. On error,
 * cf_last_error() holds a text for this thread until the next cf_* call on
 * this thread. No C++ exception ever crosses this boundary.
 *
 * Ownership, unless a function says otherwise:
 *   - pointers passed in (paths, payloads, arrays, options) stay the caller's
 *     and are only read during the call; nothing keeps them afterwards;
 *   - handles returned through an out parameter (cf_field_t**, cf_posting_t**,
 *     ...) belong to the caller, who releases each exactly once with its
 *     matching cf_*_free / cf_close;
 *   - a pointer handed to a callback is valid only while the callback runs.
 * A NULL handle or pointer where one is required, or an unusable value, gives
 * CF_EINVAL and changes nothing. Out parameters are written only on CF_OK.
 *
 * Reference: docs/C_API.md. Record format: docs/FORMAT.md. Op payloads: docs/OPS.md.
 * Link with -lchitta_field; chitta.get_include() and chitta.get_lib_dir() give
 * the directories inside an installed wheel.
 */
#ifndef CHITTA_FIELD_H_
#define CHITTA_FIELD_H_

#include <stddef.h>
#include <stdint.h>

#if defined(CF_BUILDING_LIBRARY)
#define CF_API __attribute__((visibility("default")))
#else
#define CF_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when an existing signature, struct or default changes; additions keep it.
 * 2: cf_open and cf_options_init no longer create a field (options.create = 1 does). */
#define CF_ABI_VERSION 2

typedef enum cf_status {
  CF_OK = 0,
  CF_ENOTFOUND = 1,     /* no such field, id or file */
  CF_ECORRUPT = 2,      /* damaged bytes on disk (bad magic, header, length, order) */
  CF_ECRC = 3,          /* a complete record whose CRC-32C fails */
  CF_EINVAL = 4,        /* a NULL or unusable argument; nothing changed */
  CF_EIO = 5,           /* the operating system refused */
  CF_EUNSUPPORTED = 6,  /* e.g. a segment of a newer major format version */
  CF_ELOCKED = 7,       /* the named instance is held by a live process */
  CF_ECLOSED = 8,       /* the handle's log is already closed */
  CF_ENOMEM = 9,        /* out of memory */
  CF_EINTERNAL = 10,    /* a bug: an unexpected failure inside the library */
  CF_EUNAVAILABLE = 11  /* no chitta serve answers for the field (and none could be started) */
} cf_status;

/* Durability of cf_append (docs/FORMAT.md, DESIGN.md). */
typedef enum cf_durability {
  CF_DURABILITY_FLUSH = 0,    /* in the OS when cf_append returns (survives a process crash) */
  CF_DURABILITY_FSYNC = 1,    /* on disk when cf_append returns (group commit) */
  CF_DURABILITY_BUFFERED = 2  /* gathered in memory; written on cf_flush and close */
} cf_durability;

/* ---- version and errors -------------------------------------------------- */

/* CF_ABI_VERSION of the loaded library. */
CF_API int cf_abi_version(void);

/* Static text naming a status ("CF_ECRC"); never NULL, never to be freed. */
CF_API const char* cf_status_name(cf_status status);

/* Detail of the last failed call on this thread, "" after a successful one.
 * The text is owned by the library (thread-local) and valid until the next
 * cf_* call on this thread; copy it to keep it. Never NULL. */
CF_API const char* cf_last_error(void);

/* ---- a field: the segment log of <path> ----------------------------------- */

typedef struct cf_field cf_field_t; /* opaque */

typedef struct cf_options {
  uint32_t instance_id;   /* 0: a fresh random instance; else continue this one (locked) */
  int32_t durability;     /* a cf_durability */
  uint64_t segment_bytes; /* segment rotation size; 0: the default (256 MiB) */
  int32_t create;         /* non-zero: create <path>/segments when missing */
  int32_t read_only;      /* non-zero: no writer, no lock; cf_append gives CF_EINVAL */
  int32_t salvage;        /* non-zero: skip damaged records instead of failing */
} cf_options;

/* Fills *options with the defaults of cf_open: fresh instance, FLUSH,
 * default segment size, no create, writable, strict. NULL is ignored. */
CF_API void cf_options_init(cf_options* options);

/* Opens the existing field at path as a writer with a fresh instance id (a
 * path without a field gives CF_ENOTFOUND: create one with cf_open_ex and
 * options.create = 1). On CF_OK, *out is a new handle owned by the caller (release
 * with cf_close). Opening reads no records: damage in other instances'
 * segments is reported by the first cf_replay / cf_refresh (CF_ECRC or
 * CF_ECORRUPT, the text naming segment and offset) or by cf_verify. A path
 * that is a file gives CF_EINVAL; a named instance held by a live process,
 * CF_ELOCKED. */
CF_API cf_status cf_open(const char* path, cf_field_t** out);

/* cf_open with options (NULL: the defaults). Same ownership as cf_open. */
CF_API cf_status cf_open_ex(const char* path, const cf_options* options, cf_field_t** out);

/* Flushes, closes and frees the handle. NULL is ignored. The handle must not
 * be used afterwards, nor be in use by another thread. Errors of the final
 * flush are dropped: use cf_close_checked to see them. */
CF_API void cf_close(cf_field_t* f);

/* As cf_close, but returns the status of the final flush and close. The handle
 * is freed whatever the status. NULL gives CF_EINVAL. */
CF_API cf_status cf_close_checked(cf_field_t* f);

/* This handle's instance id (0 for a read-only handle). */
CF_API cf_status cf_instance_id(const cf_field_t* f, uint32_t* out);

/* The handle's Lamport clock: the highest seqno it has seen or written. */
CF_API cf_status cf_clock(const cf_field_t* f, uint64_t* out);

/* Appends one record: op_type (the byte code of docs/OPS.md) and payload
 * bytes (len <= 64 MiB; payload may be NULL only when len is 0). The payload
 * is copied; it stays the caller's. On CF_OK, *seqno (if seqno is not NULL)
 * holds the record's seqno. The library does not check that the payload
 * decodes as the op: a Python reader refuses a record it cannot decode. */
CF_API cf_status cf_append(cf_field_t* f, uint8_t op_type, const uint8_t* payload, size_t len,
                           uint64_t* seqno);

/* Buffered records -> the OS (matters for CF_DURABILITY_BUFFERED). */
CF_API cf_status cf_flush(cf_field_t* f);

/* Everything this handle wrote -> disk (fdatasync). */
CF_API cf_status cf_sync(cf_field_t* f);

/* Called once per record. payload points into library memory valid only
 * during the call (len may be 0). Return 0 to go on, non-zero to stop. */
typedef int (*cf_record_fn)(void* user, uint64_t seqno, uint32_t instance_id, uint8_t op_type,
                            const uint8_t* payload, size_t len);

/* Every complete record of every instance, this handle's own included, in
 * merge order (seqno, then instance id). Flushes this handle first, then reads
 * the segments as they are now. A non-zero return from fn ends the replay
 * early with CF_OK. user is passed through untouched. Does not move the
 * position cf_refresh reads from. */
CF_API cf_status cf_replay(cf_field_t* f, cf_record_fn fn, void* user);

/* The records not seen by this handle before: other instances' records
 * appended since the last cf_refresh (the first call also gives everything
 * written before the open), in merge order. Never this handle's own appends.
 * If fn returns non-zero the read position is left where it was: the next
 * cf_refresh delivers the same records again (CF_OK is still returned). */
CF_API cf_status cf_refresh(cf_field_t* f, cf_record_fn fn, void* user);

/* ---- verify: check every record without opening ------------------------- */

typedef struct cf_verify_report {
  uint64_t segments;       /* segment files checked */
  uint64_t records;        /* valid records */
  uint64_t bytes;          /* bytes of all segments */
  uint64_t damages;        /* damaged spans (torn tails not counted) */
  uint64_t torn_tails;     /* unfinished writes at segment ends (not damage) */
  /* The first damage (or torn tail when there is no damage); empty when none. */
  char first_segment[64];  /* file name inside segments/, NUL-terminated */
  uint64_t first_offset;   /* byte offset in that segment */
  int32_t first_status;    /* CF_ECRC or CF_ECORRUPT for damage, CF_OK for a torn tail */
} cf_verify_report;

/* Reads every segment of the field at path, taking no lock and changing
 * nothing, and fills *report (owned by the caller). Returns CF_OK when no
 * damage is found (torn tails are not damage), CF_ECRC or CF_ECORRUPT when
 * some is (the report is filled in then too), CF_ENOTFOUND when path is not a
 * field. */
CF_API cf_status cf_verify(const char* path, cf_verify_report* report);

/* ---- posting index: sparse codes, top-k by shared features ---------------- */

typedef struct cf_posting cf_posting_t; /* opaque; thread-safe */

/* n_features (0: 16384) and active features per memory (0: 64, at most 255).
 * On CF_OK *out is owned by the caller: release with cf_posting_free. */
CF_API cf_status cf_posting_new(uint32_t n_features, uint32_t active, cf_posting_t** out);
CF_API void cf_posting_free(cf_posting_t* p); /* NULL is ignored */

/* Adds n memories: features is n x active distinct ids < n_features (row-major);
 * activations is n x active finite floats or NULL (all 1.0). All or nothing. */
CF_API cf_status cf_posting_add(cf_posting_t* p, const uint64_t* ids, size_t n,
                                const uint32_t* features, const float* activations);

/* Removes n ids (CF_ENOTFOUND if one is absent; nothing removed then). */
CF_API cf_status cf_posting_remove(cf_posting_t* p, const uint64_t* ids, size_t n);

/* Top-k of n_queries queries of width distinct feature ids each. Writes
 * n_queries x k ids and overlap counts into caller-owned buffers; short rows
 * are padded with id UINT64_MAX and count 0. allowed (n_allowed ids) restricts
 * the results; NULL means no restriction. num_threads 0: automatic. */
CF_API cf_status cf_posting_search(const cf_posting_t* p, const uint32_t* queries,
                                   size_t n_queries, size_t width, size_t k,
                                   const uint64_t* allowed, size_t n_allowed, unsigned num_threads,
                                   uint64_t* out_ids, uint32_t* out_counts);

CF_API cf_status cf_posting_size(const cf_posting_t* p, size_t* out);

/* ---- Hamming index: binary codes, exact top-k by Hamming distance --------- */

typedef struct cf_hamming cf_hamming_t; /* opaque; thread-safe */

/* bits: a positive multiple of 64 (at most 65536). Release with cf_hamming_free. */
CF_API cf_status cf_hamming_new(size_t bits, cf_hamming_t** out);
CF_API void cf_hamming_free(cf_hamming_t* h); /* NULL is ignored */

/* codes: n x (bits / 64) u64 words, bit i in word i / 64 at position i % 64. */
CF_API cf_status cf_hamming_add(cf_hamming_t* h, const uint64_t* ids, const uint64_t* codes,
                                size_t n);
CF_API cf_status cf_hamming_remove(cf_hamming_t* h, const uint64_t* ids, size_t n);

/* nq queries -> nq x k ids and distances (caller-owned), nearest first, ties
 * by insertion order; short rows padded with UINT64_MAX and bits + 1. */
CF_API cf_status cf_hamming_search(const cf_hamming_t* h, const uint64_t* queries, size_t nq,
                                   size_t k, uint64_t* out_ids, uint32_t* out_dist);

CF_API cf_status cf_hamming_size(const cf_hamming_t* h, size_t* out);

/* ---- HNSW: approximate nearest neighbours (tiered: base + delta graph) --- */

typedef struct cf_hnsw cf_hnsw_t; /* opaque; thread-safe (searches run beside each other) */

typedef enum cf_metric {
  CF_METRIC_COSINE = 0,        /* distance 1 - cos; vectors normalised on add */
  CF_METRIC_INNER_PRODUCT = 1  /* distance 1 - dot */
} cf_metric;

/* dim in [1, 65536]; M (0: 16) and ef_construction (0: 200); seed fixes the
 * level draws. Release with cf_hnsw_free. */
CF_API cf_status cf_hnsw_new(uint32_t dim, int32_t metric, uint32_t M, uint32_t ef_construction,
                             uint64_t seed, cf_hnsw_t** out);
CF_API void cf_hnsw_free(cf_hnsw_t* h); /* NULL is ignored */

/* vectors: n x dim finite floats (non-zero for cosine). All or nothing.
 * num_threads 0: all cores; 1: the calling thread only. */
CF_API cf_status cf_hnsw_add(cf_hnsw_t* h, const uint64_t* ids, const float* vectors, size_t n,
                             int num_threads);
CF_API cf_status cf_hnsw_remove(cf_hnsw_t* h, const uint64_t* ids, size_t n);

/* nq queries (nq x dim) -> nq x k ids and distances (caller-owned), nearest
 * first, padded with UINT64_MAX and +inf. ef (raised to k when smaller; 0:
 * max(k, 64)) trades speed for recall. allowed (n_allowed ids) restricts the
 * results; NULL means no restriction. */
CF_API cf_status cf_hnsw_search(const cf_hnsw_t* h, const float* queries, size_t nq, size_t k,
                                size_t ef, const uint64_t* allowed, size_t n_allowed,
                                int num_threads, uint64_t* out_ids, float* out_dist);

CF_API cf_status cf_hnsw_size(const cf_hnsw_t* h, size_t* out);

/* ---- memories: through the field's daemon (`chitta serve`) ------------------
 *
 * The memory-level calls keep meaning (embedding, scoring, organs) in Python,
 * as the design says: a cf_client_t is a connection to the daemon serving a
 * field, speaking its JSON dialect (docs/DAEMON.md). Every operation of the
 * method table is reachable with cf_call; cf_remember, cf_recall, cf_get,
 * cf_forget and cf_link are typed shortcuts. A daemon's error comes back as a
 * status (NotFound: CF_ENOTFOUND, InvalidArgument: CF_EINVAL, ...) with its
 * class and message in cf_last_error(). Ids are uint64_t here and decimal
 * strings in JSON (D-038). A client may be shared by threads (calls on one
 * client run one at a time). Reference: docs/C_API.md, "Memories". */

typedef struct cf_client cf_client_t; /* opaque */

typedef struct cf_connect_options {
  const char* socket_path;   /* NULL: the field's default socket (docs/DAEMON.md) */
  int32_t start;             /* non-zero: start `chitta serve` when no daemon answers */
  const char* serve_command; /* the program started (NULL: "chitta", looked up in PATH);
                                run as: <cmd> --path <field> serve --socket <socket> */
  uint32_t start_timeout_ms; /* how long to wait for a started daemon; 0: 60000 */
  uint32_t call_timeout_ms;  /* how long one call may wait for its reply; 0: 120000 */
} cf_connect_options;

/* Fills *options with the defaults: default socket, no start, "chitta",
 * 60 s to start, 120 s per call. NULL is ignored. */
CF_API void cf_connect_options_init(cf_connect_options* options);

/* Connects to the daemon serving the field at field_path (options NULL: the
 * defaults). The socket and its directory must be this user's (0700
 * directory, SO_PEERCRED), as for chitta.connect(). No daemon:
 * CF_EUNAVAILABLE, unless options->start, which starts one (its output goes
 * to <socket>.log) and waits for it. On CF_OK *out belongs to the caller:
 * release with cf_disconnect. */
CF_API cf_status cf_connect(const char* field_path, const cf_connect_options* options,
                            cf_client_t** out);

/* Closes the connection and frees the client (the daemon keeps running). NULL is ignored. */
CF_API void cf_disconnect(cf_client_t* c);

/* Runs the operation op_name (any name `chitta operations` lists, e.g. "stats",
 * "kg_query") with json_args, a JSON object (NULL or "": no arguments). On
 * CF_OK *json_result is the reply's result as JSON text (NUL-terminated,
 * UTF-8), owned by the caller: release with cf_string_free. json_args that
 * is not a JSON object, or names unknown arguments: CF_EINVAL, nothing sent
 * or changed. */
CF_API cf_status cf_call(cf_client_t* c, const char* op_name, const char* json_args,
                         char** json_result);

/* Frees a string a cf_* call returned. NULL is ignored. */
CF_API void cf_string_free(char* s);

/* Remembers text (UTF-8). options_json: NULL or a JSON object of remember's
 * other arguments ({"kind": "decision", "tags": ["db"], "session": "s1", ...}).
 * On CF_OK *id (if not NULL) is the new memory's id. */
CF_API cf_status cf_remember(cf_client_t* c, const char* text, const char* options_json,
                             uint64_t* id);

typedef struct cf_lane {
  const char* name; /* "dense", "bm25", ... */
  uint32_t rank;    /* 1-based rank of the memory in that lane */
} cf_lane;

typedef struct cf_hit {
  uint64_t id;
  double score;      /* the final, rank-relative score */
  double relevance;  /* the query's cosine with the memory; NaN when there is none */
  const char* text;  /* the memory's text (UTF-8) */
  const char* kind;  /* "observation", "decision", ... */
  const cf_lane* lanes;
  size_t n_lanes;
} cf_hit;

typedef struct cf_hits cf_hits_t; /* opaque: the results of one cf_recall */

/* The k best memories for query (k 0: the daemon's default). options_json:
 * NULL or a JSON object of recall's other arguments ({"tags": ["db"],
 * "min_score": 0.2, ...}). On CF_OK *out belongs to the caller: release
 * with cf_hits_free; every pointer inside lives as long as *out. */
CF_API cf_status cf_recall(cf_client_t* c, const char* query, uint32_t k,
                           const char* options_json, cf_hits_t** out);

CF_API size_t cf_hits_count(const cf_hits_t* hits); /* 0 for NULL */
/* The i-th hit, best first; NULL when i >= cf_hits_count. */
CF_API const cf_hit* cf_hits_at(const cf_hits_t* hits, size_t i);
CF_API void cf_hits_free(cf_hits_t* hits); /* NULL is ignored */

/* One memory. text_out (if not NULL): its text; json_out (if not NULL): the
 * whole memory as a JSON object (id, text, kind, realm, tags, confidence,
 * created_at, meta, ...). Both owned by the caller (cf_string_free). An
 * unknown id: CF_ENOTFOUND. */
CF_API cf_status cf_get(cf_client_t* c, uint64_t id, char** text_out, char** json_out);

/* Forgets a memory (recall no longer returns it). An unknown id: CF_ENOTFOUND. */
CF_API cf_status cf_forget(cf_client_t* c, uint64_t id);

/* An edge src -> dst (edge NULL: "RelatedTo"; weight finite, in (0, 1e6], 1 is usual). */
CF_API cf_status cf_link(cf_client_t* c, uint64_t src, uint64_t dst, const char* edge,
                         double weight);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CHITTA_FIELD_H_ */
