// csrc/wal/segment_scan.h
// Internal to the segment reader: the pieces the 1.0 and 2.0 record scanners share.
#pragma once

#include <cstdint>
#include <string>

#include "chitta/status.h"
#include "wal/segment_reader.h"

namespace chitta::wal::scan {

// Zero bytes up to the end: space the file system extended but never filled
// (e.g. after a power loss). Treated like any unfinished write, and only in
// an instance's last segment.
bool AllZero(const uint8_t* p, uint64_t n);

Status DamageStatus(DamageKind kind, const std::string& name, uint64_t offset,
                    const std::string& detail);

// What a scanner found at one position: go on, stop (clean or torn), or damage.
struct Step {
  enum What { kRecord, kStop, kTorn, kDamage } what = kStop;
  DamageKind kind = DamageKind::kTornTail;
  std::string detail;
};

// The record scanners (one per layout). Same contract as ScanSegment, with the
// header already checked and state->major set.
Status ScanRecordsV1(const std::string& name, const uint8_t* data, uint64_t limit, bool salvage,
                     bool last, ScanState* state, std::vector<Damage>* damages,
                     ScanResult* result, const std::function<void(const RawRecord&)>& on_record);
Status ScanRecordsV2(const std::string& name, const uint8_t* data, uint64_t limit, bool salvage,
                     bool last, ScanState* state, std::vector<Damage>* damages,
                     ScanResult* result, const std::function<void(const RawRecord&)>& on_record);

}  // namespace chitta::wal::scan
