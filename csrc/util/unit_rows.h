// csrc/util/unit_rows.h
// Row-wise L2 normalisation of a float32 matrix, in one pass over it.
//
// RowNorm: the row's sum of squares, accumulated in double in eight lanes
// (lane j takes elements j, j + 8, ...; the lanes are then added in order),
// square-rooted and rounded to float. The order is fixed, so a row gets the
// same norm alone or in a million-row matrix, on every machine.
// UnitRows: norms[i] = RowNorm(row i); each row whose norm is finite and > 0
// is written, divided by its norm (float division), to the next row of dst
// (packed from dst's row 0, in order); returns how many were written.
#pragma once

#include <cstddef>

namespace chitta::util {

float RowNorm(const float* row, size_t dim);
size_t UnitRows(const float* src, size_t rows, size_t dim, float* dst, float* norms);

}  // namespace chitta::util
