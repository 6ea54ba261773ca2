// docs/example_host.cc: a C++ host using chitta's memory-level C API.
//
// It talks to the `chitta serve` of a field (started on demand when asked),
// remembers, recalls with scores and lanes, links, reads stats through the
// generic cf_call, forgets, and shows how an error reads. Build and run
// (docs/C_API.md, "Memories"):
//
//   INC=$(python -c "import chitta; print(chitta.get_include())")
//   LIB=$(python -c "import chitta; print(chitta.get_lib_dir())")
//   c++ -std=c++17 -O2 docs/example_host.cc -I"$INC" -L"$LIB" -lchitta_field -Wl,-rpath,"$LIB" -o example_host
//   ./example_host ./field --start           # starts `chitta serve` if none runs
//
// Usage: example_host FIELD [--start] [--serve-command PATH] [--socket PATH]
#include <chitta/chitta_field.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

// Owns a client and frees it on scope exit.
struct ClientDeleter {
  void operator()(cf_client_t* c) const { cf_disconnect(c); }
};
using Client = std::unique_ptr<cf_client_t, ClientDeleter>;

struct HitsDeleter {
  void operator()(cf_hits_t* h) const { cf_hits_free(h); }
};
using Hits = std::unique_ptr<cf_hits_t, HitsDeleter>;

// A string the library returned, freed with cf_string_free.
struct Text {
  char* p = nullptr;
  ~Text() { cf_string_free(p); }
};

int Die(const char* what, cf_status st) {
  std::fprintf(stderr, "example_host: %s failed: %s: %s\n", what, cf_status_name(st),
               cf_last_error());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FIELD [--start] [--serve-command PATH] [--socket PATH]\n",
                 argv[0]);
    return 2;
  }
  cf_connect_options options;
  cf_connect_options_init(&options);
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--start") == 0) {
      options.start = 1;
    } else if (std::strcmp(argv[i], "--serve-command") == 0 && i + 1 < argc) {
      options.serve_command = argv[++i];
    } else if (std::strcmp(argv[i], "--socket") == 0 && i + 1 < argc) {
      options.socket_path = argv[++i];
    } else {
      std::fprintf(stderr, "example_host: unknown argument %s\n", argv[i]);
      return 2;
    }
  }

  cf_client_t* raw = nullptr;
  if (cf_status st = cf_connect(argv[1], &options, &raw); st != CF_OK) return Die("cf_connect", st);
  Client client(raw);

  const std::vector<std::pair<const char*, const char*>> notes = {
      {"Ana decided that the billing service stores invoices in Postgres",
       R"({"kind": "decision", "tags": ["billing", "db"]})"},
      {"The billing service runs on two replicas behind the internal load balancer", nullptr},
      {"Invoices older than seven years are archived to cold storage every January", nullptr},
  };
  std::vector<uint64_t> ids;
  for (const auto& [text, opts] : notes) {
    uint64_t id = 0;
    if (cf_status st = cf_remember(client.get(), text, opts, &id); st != CF_OK)
      return Die("cf_remember", st);
    ids.push_back(id);
    std::printf("remembered %llu\n", static_cast<unsigned long long>(id));
  }

  if (cf_status st = cf_link(client.get(), ids[2], ids[0], "DerivedFrom", 1.0); st != CF_OK)
    return Die("cf_link", st);
  std::printf("linked %llu -> %llu\n", static_cast<unsigned long long>(ids[2]),
              static_cast<unsigned long long>(ids[0]));

  cf_hits_t* raw_hits = nullptr;
  if (cf_status st = cf_recall(client.get(), "where are invoices stored?", 3, nullptr, &raw_hits);
      st != CF_OK)
    return Die("cf_recall", st);
  Hits hits(raw_hits);
  for (size_t i = 0; i < cf_hits_count(hits.get()); ++i) {
    const cf_hit* h = cf_hits_at(hits.get(), i);
    std::printf("hit %zu id %llu score %.4f kind %s lanes", i + 1,
                static_cast<unsigned long long>(h->id), h->score, h->kind);
    for (size_t j = 0; j < h->n_lanes; ++j) std::printf(" %s:%u", h->lanes[j].name, h->lanes[j].rank);
    if (!std::isnan(h->relevance)) std::printf(" relevance %.3f", h->relevance);
    std::printf(" text %s\n", h->text);
  }

  Text text, memory;
  if (cf_status st = cf_get(client.get(), ids[0], &text.p, &memory.p); st != CF_OK)
    return Die("cf_get", st);
  std::printf("get %s\n", text.p);
  std::printf("memory %s\n", memory.p);

  Text stats;
  if (cf_status st = cf_call(client.get(), "stats", nullptr, &stats.p); st != CF_OK)
    return Die("cf_call stats", st);
  std::printf("stats %s\n", stats.p);

  if (cf_status st = cf_forget(client.get(), ids[1]); st != CF_OK) return Die("cf_forget", st);
  std::printf("forgot %llu\n", static_cast<unsigned long long>(ids[1]));

  // An error is a status plus a text naming the daemon's error class.
  Text missing;
  const cf_status st = cf_get(client.get(), ids[1], &missing.p, nullptr);
  std::printf("get forgotten: %s (%s)\n", cf_status_name(st), cf_last_error());
  return st == CF_ENOTFOUND ? 0 : 1;
}
