// csrc/wal/log_test.cc
// Writer/reader round trips and one test per kind of damage.
#include "wal/log.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "util/coding.h"
#include "util/crc32c.h"
#include "util/file.h"
#include "wal/segment_format.h"

namespace chitta::wal {
namespace {

std::string TempRoot() {
  char tmpl[] = "/tmp/chitta_log_test_XXXXXX";
  char* d = mkdtemp(tmpl);
  return d ? d : "";
}

std::unique_ptr<Log> OpenLog(const std::string& root, LogOptions o = {}) {
  std::unique_ptr<Log> log;
  Status st = Log::Open(root, o, &log);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return log;
}

uint64_t Put(Log* log, uint8_t op, const std::string& payload) {
  uint64_t seq = 0;
  Status st = log->Append(op, reinterpret_cast<const uint8_t*>(payload.data()), payload.size(), &seq);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return seq;
}

std::vector<std::string> Payloads(const ReadBatch& b) {
  std::vector<std::string> out;
  for (const auto& r : b.records) {
    out.emplace_back(reinterpret_cast<const char*>(r.payload), r.len);
  }
  return out;
}

std::string OnlySegment(const std::string& root) {
  std::vector<std::string> names;
  EXPECT_TRUE(file::ListDir(root + "/segments", &names).ok());
  EXPECT_EQ(names.size(), 1u);
  return root + "/segments/" + names[0];
}

void FlipByte(const std::string& path, uint64_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c;
  f.read(&c, 1);
  c ^= 0x40;
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

void Truncate(const std::string& path, uint64_t size) { ASSERT_EQ(0, ::truncate(path.c_str(), static_cast<off_t>(size))); }

uint64_t Size(const std::string& path) {
  uint64_t s = 0;
  EXPECT_TRUE(file::FileSize(path, &s).ok());
  return s;
}

TEST(SegmentName, FormatAndParse) {
  EXPECT_EQ("0000abcd_000000000042.seg", SegmentName(0xabcd, 42));
  uint32_t inst;
  uint64_t first;
  ASSERT_TRUE(ParseSegmentName("0000abcd_000000000042.seg", &inst, &first));
  EXPECT_EQ(0xabcdu, inst);
  EXPECT_EQ(42u, first);
  EXPECT_FALSE(ParseSegmentName("0000ABCD_000000000042.seg", &inst, &first));
  EXPECT_FALSE(ParseSegmentName("0000abcd_42.seg", &inst, &first));
  EXPECT_FALSE(ParseSegmentName("0000abcd_000000000042.seg.tmp", &inst, &first));
}

TEST(Log, RoundTripInOrder) {
  auto root = TempRoot();
  {
    auto log = OpenLog(root);
    for (int i = 0; i < 100; ++i) Put(log.get(), static_cast<uint8_t>(i % 7), "payload-" + std::to_string(i));
  }
  auto reader = OpenLog(root, LogOptions{0, Durability::kFlush, 256ull << 20, false, true, false});
  ReadBatch b;
  ASSERT_TRUE(reader->ReadNew(&b).ok());
  ASSERT_EQ(100u, b.records.size());
  auto p = Payloads(b);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ("payload-" + std::to_string(i), p[i]);
    EXPECT_EQ(i % 7, b.records[i].op_type);
    if (i > 0) EXPECT_LT(b.records[i - 1].seqno, b.records[i].seqno);
  }
}

TEST(Log, RotatesAtConfiguredSize) {
  auto root = TempRoot();
  LogOptions o;
  o.segment_bytes = 2048;
  {
    auto log = OpenLog(root, o);
    for (int i = 0; i < 200; ++i) Put(log.get(), 1, std::string(50, 'x'));
  }
  std::vector<std::string> names;
  ASSERT_TRUE(file::ListDir(root + "/segments", &names).ok());
  EXPECT_GE(names.size(), 5u);
  for (auto& n : names) EXPECT_LE(Size(root + "/segments/" + n), 2048u);
  o.read_only = true;
  auto reader = OpenLog(root, o);
  ReadBatch b;
  ASSERT_TRUE(reader->ReadNew(&b).ok());
  EXPECT_EQ(200u, b.records.size());
}

// Append's RecordPlace names the segment and payload offset where the bytes
// are once Append returns (kFlush, kFsync), across rotations; the reader's
// payload_at of the same record agrees.
TEST(Log, AppendSaysWhereThePayloadLies) {
  for (Durability d : {Durability::kFlush, Durability::kFsync}) {
    auto root = TempRoot();
    LogOptions o;
    o.segment_bytes = 2048;
    o.durability = d;
    auto log = OpenLog(root, o);
    std::vector<std::pair<std::string, uint64_t>> places;
    std::vector<std::string> payloads;
    for (int i = 0; i < 120; ++i) {
      std::string payload(20 + i % 37, static_cast<char>('a' + i % 26));
      payload += std::to_string(i);
      uint64_t seq = 0;
      RecordPlace where;
      ASSERT_TRUE(log->Append(3, reinterpret_cast<const uint8_t*>(payload.data()), payload.size(),
                              &seq, &where)
                      .ok());
      // read straight from the file, before anything else is appended
      std::ifstream in(root + "/segments/" + where.segment, std::ios::binary);
      in.seekg(static_cast<std::streamoff>(where.payload_at));
      std::string got(payload.size(), '\0');
      in.read(got.data(), static_cast<std::streamsize>(got.size()));
      ASSERT_TRUE(in.good()) << where.segment << " @" << where.payload_at;
      EXPECT_EQ(payload, got);
      places.emplace_back(where.segment, where.payload_at);
      payloads.push_back(payload);
    }
    std::vector<std::string> segs;
    for (auto& p : places) segs.push_back(p.first);
    std::sort(segs.begin(), segs.end());
    EXPECT_GE(std::unique(segs.begin(), segs.end()) - segs.begin(), 3);  // it rotated
    o.read_only = true;
    auto reader = OpenLog(root, o);
    ReadBatch b;
    ASSERT_TRUE(reader->ReadNew(&b).ok());
    ASSERT_EQ(places.size(), b.records.size());
    for (size_t i = 0; i < b.records.size(); ++i) {
      EXPECT_EQ(places[i].first, b.segments[b.records[i].segment]);
      EXPECT_EQ(places[i].second, b.records[i].payload_at);
      EXPECT_EQ(payloads[i], std::string(reinterpret_cast<const char*>(b.records[i].payload),
                                         b.records[i].len));
    }
  }
}

bool MayHaveNew(const Log& log) {
  bool out = true;
  EXPECT_TRUE(log.MayHaveNew(&out).ok());
  return out;
}

// MayHaveNew is false only where ReadNew finds nothing: checked against ReadNew
// itself after every step (another instance's appends, a rotation into a new
// segment, the reader's own appends, a read not yet committed).
TEST(Log, MayHaveNewIsFalseOnlyWhenReadNewWouldFindNothing) {
  auto root = TempRoot();
  LogOptions small;
  small.segment_bytes = 4096;  // the writer rotates every few records
  auto writer = OpenLog(root, small);
  auto reader = OpenLog(root);
  EXPECT_TRUE(MayHaveNew(*reader));  // nothing read yet
  ReadBatch b;
  ASSERT_TRUE(reader->ReadNew(&b).ok());
  EXPECT_TRUE(b.records.empty());
  EXPECT_FALSE(MayHaveNew(*reader));

  Put(reader.get(), 1, "its own record");  // never read back by its own log
  EXPECT_FALSE(MayHaveNew(*reader));

  Put(writer.get(), 1, "one");
  EXPECT_TRUE(MayHaveNew(*reader));
  ASSERT_TRUE(reader->ReadNew(&b, /*commit=*/false).ok());
  EXPECT_EQ(1u, b.records.size());
  EXPECT_TRUE(MayHaveNew(*reader));  // read, not committed: the next ReadNew returns it again
  reader->CommitRead();
  EXPECT_FALSE(MayHaveNew(*reader));
  ASSERT_TRUE(reader->ReadNew(&b).ok());
  EXPECT_TRUE(b.records.empty());

  const std::string big(1500, 'x');
  size_t seen = 1, written = 1;
  for (int round = 0; round < 12; ++round) {  // each round crosses into a new segment or grows one
    for (int i = 0; i < round % 3 + 1; ++i, ++written) Put(writer.get(), 2, big);
    EXPECT_TRUE(MayHaveNew(*reader)) << round;
    ASSERT_TRUE(reader->ReadNew(&b).ok());
    seen += b.records.size();
    EXPECT_FALSE(MayHaveNew(*reader)) << round;
    ReadBatch none;
    ASSERT_TRUE(reader->ReadNew(&none).ok());
    EXPECT_TRUE(none.records.empty()) << round;
  }
  EXPECT_EQ(written, seen);
  std::vector<std::string> names;
  ASSERT_TRUE(file::ListDir(root + "/segments", &names).ok());
  EXPECT_GT(names.size(), 4u);  // the writer did rotate

  // A segment it reads that has gone: "maybe" (ReadNew reports what happened).
  Put(writer.get(), 2, big);
  ASSERT_TRUE(reader->ReadNew(&b).ok());
  ASSERT_FALSE(MayHaveNew(*reader));
  names.clear();
  ASSERT_TRUE(file::ListDir(root + "/segments", &names).ok());
  for (const auto& n : names) std::remove((root + "/segments/" + n).c_str());  // writer still open
  EXPECT_TRUE(MayHaveNew(*reader));
}

TEST(Log, MergesInstancesBySeqnoAndLamportOrdersCausalOps) {
  auto root = TempRoot();
  auto a = OpenLog(root);
  auto b = OpenLog(root);
  ASSERT_NE(a->instance_id(), b->instance_id());
  Put(a.get(), 0, "put-x");
  for (int i = 0; i < 50; ++i) Put(b.get(), 1, "b-noise");  // b's clock races ahead
  ReadBatch seen;
  ASSERT_TRUE(a->ReadNew(&seen).ok());
  EXPECT_EQ(50u, seen.records.size());
  Put(a.get(), 2, "delete-x");  // written after a read b's records
  ReadBatch again;
  ASSERT_TRUE(b->ReadNew(&again).ok());  // b sees a's two records
  EXPECT_EQ(2u, again.records.size());

  auto r = OpenLog(root, LogOptions{0, Durability::kFlush, 256ull << 20, false, true, false});
  ReadBatch all;
  ASSERT_TRUE(r->ReadNew(&all).ok());
  ASSERT_EQ(52u, all.records.size());
  auto p = Payloads(all);
  EXPECT_EQ("delete-x", p.back());  // sorts after every record a had read
  for (size_t i = 1; i < all.records.size(); ++i) {
    auto k0 = std::make_pair(all.records[i - 1].seqno, all.records[i - 1].instance_id);
    auto k1 = std::make_pair(all.records[i].seqno, all.records[i].instance_id);
    EXPECT_LT(k0, k1);
  }
}

TEST(Log, TailingSeesNewRecordsOnly) {
  auto root = TempRoot();
  auto w = OpenLog(root);
  auto r = OpenLog(root, LogOptions{0, Durability::kFlush, 256ull << 20, false, true, false});
  ReadBatch b;
  ASSERT_TRUE(r->ReadNew(&b).ok());
  EXPECT_TRUE(b.records.empty());
  Put(w.get(), 0, "one");
  Put(w.get(), 0, "two");
  ASSERT_TRUE(r->ReadNew(&b).ok());
  EXPECT_EQ((std::vector<std::string>{"one", "two"}), Payloads(b));
  Put(w.get(), 0, "three");
  ASSERT_TRUE(r->ReadNew(&b).ok());
  EXPECT_EQ((std::vector<std::string>{"three"}), Payloads(b));
  ASSERT_TRUE(r->ReadNew(&b).ok());
  EXPECT_TRUE(b.records.empty());
  ReadBatch own;
  ASSERT_TRUE(w->ReadNew(&own).ok());
  EXPECT_TRUE(own.records.empty()) << "a writer never re-reads its own appends";
}

TEST(Log, IncompleteTrailingRecordIsNotYetWritten) {
  auto root = TempRoot();
  {
    auto w = OpenLog(root);
    Put(w.get(), 0, "complete");
    Put(w.get(), 0, "will-be-torn");
  }
  auto seg = OnlySegment(root);
  Truncate(seg, Size(seg) - 3);
  auto r = OpenLog(root, LogOptions{0, Durability::kFlush, 256ull << 20, false, true, false});
  ReadBatch b;
  ASSERT_TRUE(r->ReadNew(&b).ok());
  EXPECT_EQ((std::vector<std::string>{"complete"}), Payloads(b));
  VerifyReport rep;
  ASSERT_TRUE(Verify(root, &rep).ok());
  ASSERT_EQ(1u, rep.damages.size());
  EXPECT_EQ(DamageKind::kTornTail, rep.damages[0].kind);
  EXPECT_EQ(1u, rep.records);
}

TEST(Log, NamedInstanceTruncatesItsTornTailAndContinues) {
  auto root = TempRoot();
  LogOptions o;
  o.instance_id = 0x1234;
  {
    auto w = OpenLog(root, o);
    Put(w.get(), 0, "a");
    Put(w.get(), 0, "b");
  }
  auto seg = OnlySegment(root);
  Truncate(seg, Size(seg) - 1);
  {
    auto w = OpenLog(root, o);
    ReadBatch b;
    ASSERT_TRUE(w->ReadNew(&b).ok());
    EXPECT_EQ((std::vector<std::string>{"a"}), Payloads(b));
    Put(w.get(), 0, "c");
  }
  OnlySegment(root);  // still one segment: continued, not a new one
  auto r = OpenLog(root, LogOptions{0, Durability::kFlush, 256ull << 20, false, true, false});
  ReadBatch b;
  ASSERT_TRUE(r->ReadNew(&b).ok());
  EXPECT_EQ((std::vector<std::string>{"a", "c"}), Payloads(b));
  VerifyReport rep;
  ASSERT_TRUE(Verify(root, &rep).ok());
  EXPECT_TRUE(rep.damages.empty());
}

TEST(Log, SecondOpenOfLiveNamedInstanceIsLocked) {
  auto root = TempRoot();
  LogOptions o;
  o.instance_id = 77;
  auto w = OpenLog(root, o);
  std::unique_ptr<Log> second;
  Status st = Log::Open(root, o, &second);
  EXPECT_EQ(Code::kLocked, st.code()) << st.ToString();
  w.reset();
  EXPECT_TRUE(Log::Open(root, o, &second).ok());
}

TEST(Log, StaleLockOfDeadPidIsReclaimed) {
  auto root = TempRoot();
  ASSERT_TRUE(file::MakeDirs(root + "/locks").ok());
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  pid_t child = fork();
  if (child == 0) _exit(0);
  int status;
  waitpid(child, &status, 0);  // child is dead: its pid is stale
  ASSERT_TRUE(file::AtomicWrite(root + "/locks/" + LockFileName(99),
                                std::string(host) + "\n" + std::to_string(child) + "\n", false)
                  .ok());
  LogOptions o;
  o.instance_id = 99;
  auto w = OpenLog(root, o);
  ASSERT_NE(nullptr, w);
  EXPECT_EQ(99u, w->instance_id());
}

class Damaged : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = TempRoot();
    auto w = OpenLog(root_);
    for (int i = 0; i < 5; ++i) offsets_.push_back(0), Put(w.get(), 3, "record-number-" + std::to_string(i));
    w.reset();
    seg_ = OnlySegment(root_);
    // Record i starts at 32 + i * (17 + 15).
    for (int i = 0; i < 5; ++i) offsets_[i] = kHeaderSize + i * (kRecordHeaderSizeV2 + 15);
  }
  Status Read(bool salvage, ReadBatch* b) {
    std::unique_ptr<Log> r;
    LogOptions o;
    o.read_only = true;
    o.salvage = salvage;
    CHITTA_RETURN_IF_ERROR(Log::Open(root_, o, &r));
    return r->ReadNew(b);
  }
  std::string root_, seg_;
  std::vector<uint64_t> offsets_;
};

TEST_F(Damaged, FlippedPayloadByteIsCrcMismatchNamingSegmentAndOffset) {
  FlipByte(seg_, offsets_[2] + kRecordHeaderSizeV2 + 3);
  ReadBatch b;
  Status st = Read(false, &b);
  EXPECT_EQ(Code::kCrcMismatch, st.code());
  EXPECT_EQ(static_cast<int64_t>(offsets_[2]), st.offset());
  EXPECT_NE(std::string::npos, st.path().find(".seg"));
  ASSERT_TRUE(Read(true, &b).ok());
  EXPECT_EQ(4u, b.records.size());
  ASSERT_EQ(1u, b.damages.size());
  EXPECT_EQ(DamageKind::kCrcMismatch, b.damages[0].kind);
  EXPECT_EQ(offsets_[2], b.damages[0].offset);
  EXPECT_EQ(kRecordHeaderSizeV2 + 15, b.damages[0].bytes);
}

TEST_F(Damaged, HugeLengthIsBadLengthNotAnAllocation) {
  uint8_t huge[4];
  EncodeFixed32(huge, 0xFFFFFFF0u);
  int fd = ::open(seg_.c_str(), O_RDWR);
  ASSERT_EQ(4, ::pwrite(fd, huge, 4, static_cast<off_t>(offsets_[1])));
  ReadBatch b;
  Status st = Read(false, &b);  // 2.0: the header's own CRC catches the length first
  EXPECT_NE(std::string::npos, st.message().find("bad_record_header")) << st.ToString();
  uint8_t head[kHeaderCrcAtV2 + 4];  // a header that verifies, with a length above the maximum
  ASSERT_EQ(13, ::pread(fd, head, kHeaderCrcAtV2, static_cast<off_t>(offsets_[1])));
  EncodeFixed32(head + kHeaderCrcAtV2, crc32c::Value(head, kHeaderCrcAtV2));
  ASSERT_EQ(4, ::pwrite(fd, head + kHeaderCrcAtV2, 4, static_cast<off_t>(offsets_[1] + kHeaderCrcAtV2)));
  ::close(fd);
  st = Read(false, &b);
  EXPECT_EQ(Code::kCorruption, st.code()) << st.ToString();
  EXPECT_NE(std::string::npos, st.message().find("bad_length"));
  ASSERT_TRUE(Read(true, &b).ok());
  EXPECT_EQ(4u, b.records.size());
}

TEST_F(Damaged, LengthPointingPastEndWithRecordsAfterIsCorruptionNotTornTail) {
  uint8_t len[4];
  EncodeFixed32(len, 1000);  // within the maximum, beyond the file
  int fd = ::open(seg_.c_str(), O_WRONLY);
  ASSERT_EQ(4, ::pwrite(fd, len, 4, static_cast<off_t>(offsets_[1])));
  ::close(fd);
  ReadBatch b;
  EXPECT_EQ(Code::kCorruption, Read(false, &b).code());
  ASSERT_TRUE(Read(true, &b).ok());
  EXPECT_EQ(4u, b.records.size());
}

TEST_F(Damaged, WrongMagic) {
  FlipByte(seg_, 0);
  ReadBatch b;
  Status st = Read(false, &b);
  EXPECT_EQ(Code::kCorruption, st.code());
  EXPECT_NE(std::string::npos, st.message().find("bad_magic"));
  ASSERT_TRUE(Read(true, &b).ok());
  EXPECT_TRUE(b.records.empty());
  EXPECT_EQ(DamageKind::kBadMagic, b.damages.at(0).kind);
}

TEST_F(Damaged, FutureMajorVersionIsUnsupported) {
  uint8_t header[kHeaderSize];
  int fd = ::open(seg_.c_str(), O_RDWR);
  ASSERT_EQ(static_cast<ssize_t>(kHeaderSize), ::pread(fd, header, kHeaderSize, 0));
  EncodeFixed16(header + 8, kFormatMajor + 1);
  EncodeFixed32(header + kHeaderCrcOffset, crc32c::Value(header, kHeaderCrcOffset));
  ASSERT_EQ(static_cast<ssize_t>(kHeaderSize), ::pwrite(fd, header, kHeaderSize, 0));
  ::close(fd);
  ReadBatch b;
  EXPECT_EQ(Code::kUnsupported, Read(false, &b).code());
}

TEST_F(Damaged, HeaderChecksum) {
  FlipByte(seg_, 20);
  ReadBatch b;
  Status st = Read(false, &b);
  EXPECT_EQ(Code::kCorruption, st.code());
  EXPECT_NE(std::string::npos, st.message().find("bad_header"));
}

TEST_F(Damaged, ZeroFilledTailIsTorn) {
  int fd = ::open(seg_.c_str(), O_WRONLY | O_APPEND);
  std::vector<uint8_t> zeros(100, 0);
  ASSERT_EQ(100, ::write(fd, zeros.data(), zeros.size()));
  ::close(fd);
  ReadBatch b;
  ASSERT_TRUE(Read(false, &b).ok());
  EXPECT_EQ(5u, b.records.size());
}

TEST(Log, GroupCommitFsyncFromManyThreads) {
  auto root = TempRoot();
  LogOptions o;
  o.durability = Durability::kFsync;
  auto log = OpenLog(root, o);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&log, t] {
      for (int i = 0; i < 50; ++i) Put(log.get(), 0, "t" + std::to_string(t) + "-" + std::to_string(i));
    });
  }
  for (auto& th : threads) th.join();
  log.reset();
  VerifyReport rep;
  ASSERT_TRUE(Verify(root, &rep).ok());
  EXPECT_EQ(400u, rep.records);
  EXPECT_TRUE(rep.damages.empty());
}

TEST(Log, BufferedWritesLandOnClose) {
  auto root = TempRoot();
  LogOptions o;
  o.durability = Durability::kBuffered;
  {
    auto log = OpenLog(root, o);
    for (int i = 0; i < 1000; ++i) Put(log.get(), 0, "bulk");
  }
  VerifyReport rep;
  ASSERT_TRUE(Verify(root, &rep).ok());
  EXPECT_EQ(1000u, rep.records);
}

TEST(Log, ManifestIsACacheRebuiltWhenWrong) {
  auto root = TempRoot();
  uint64_t last;
  {
    auto log = OpenLog(root);
    for (int i = 0; i < 10; ++i) last = Put(log.get(), 0, "x");
  }
  ASSERT_TRUE(file::AtomicWrite(root + "/MANIFEST", "garbage", false).ok());
  {
    auto log = OpenLog(root);
    EXPECT_EQ(last, log->clock());
    EXPECT_GT(Put(log.get(), 0, "y"), last);
  }
  std::string bytes;
  ASSERT_TRUE(file::ReadSmallFile(root + "/MANIFEST", &bytes, 1 << 20).ok());
  std::vector<ManifestEntry> entries;
  ASSERT_TRUE(DecodeManifest(bytes, &entries).ok());
  EXPECT_EQ(2u, entries.size());
}

TEST(Log, OversizedPayloadIsRefused) {
  auto root = TempRoot();
  auto log = OpenLog(root);
  std::vector<uint8_t> big(kMaxPayload + 1);
  uint64_t seq;
  EXPECT_EQ(Code::kInvalidArgument, log->Append(0, big.data(), big.size(), &seq).code());
}

TEST(Log, NotAFieldWithoutCreate) {
  auto root = TempRoot();
  std::unique_ptr<Log> log;
  LogOptions o;
  o.create = false;
  EXPECT_EQ(Code::kNotFound, Log::Open(root + "/nope", o, &log).code());
}

}  // namespace
}  // namespace chitta::wal
