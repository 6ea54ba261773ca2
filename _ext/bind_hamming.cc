// _ext/bind_hamming.cc
// chitta._core bindings of the Hamming code index, the kernel dispatch and
// binarize. Converts, releases the GIL, maps Status; no logic.
#include <memory>
#include <string>

#include "hamming/binarize.h"
#include "hamming/hamming_index.h"
#include "hamming/scan.h"
#include "hamming_arrays.h"

namespace chitta_ext {
namespace {

using chitta::hamming::HammingIndex;
using hamming::Expect;
using hamming::ExpectRows;

chitta::hamming::SimdLevel LevelFromName(const std::string& name) {
  chitta::hamming::SimdLevel level;
  if (!chitta::hamming::ParseSimdLevel(name.c_str(), &level)) {
    ThrowInvalid("unknown SIMD level '" + name + "' (generic, avx2, avx512)");
  }
  return level;
}

}  // namespace

CHITTA_BIND(hamming) {
  m.def("hamming_simd_level", [] {
    return std::string(chitta::hamming::SimdLevelName(chitta::hamming::ActiveSimdLevel()));
  }, "Name of the Hamming kernel in use: avx512_vpopcntdq, avx2 or generic.");
  m.def("_hamming_simd_supported", [](const std::string& name) {
    return chitta::hamming::CpuSupports(LevelFromName(name));
  }, "Whether this CPU can run the named Hamming kernel (tests).");
  m.def("_hamming_force_simd", [](const std::string& name) {
    ThrowIfError(chitta::hamming::ForceSimdLevel(LevelFromName(name)));
  }, "Use the named Hamming kernel from now on (tests). UnsupportedFormat if the CPU lacks it.");
  m.def("_hamming_read_bytes", [](const py::buffer& data) {
    py::buffer_info info = data.request();
    if (!PyBuffer_IsContiguous(info.view(), 'C')) ThrowInvalid("buffer must be C-contiguous");
    const auto n = static_cast<size_t>(info.size * info.itemsize);
    py::gil_scoped_release release;
    return chitta::hamming::ReadBytes(info.ptr, n);
  }, "Read every byte of a buffer once (single-thread bandwidth probe for benchmarks).");

  m.def("hamming_binarize", [](const py::array& vectors_in, const py::array& mean_in) {
    auto vectors = Expect<float>(vectors_in, 2, "vectors");
    auto mean = Expect<float>(mean_in, 1, "mean");
    const size_t n = static_cast<size_t>(vectors.shape(0));
    const size_t dim = static_cast<size_t>(vectors.shape(1));
    if (static_cast<size_t>(mean.shape(0)) != dim) ThrowInvalid("mean length must equal dim");
    if (dim == 0) ThrowInvalid("dim must be positive");
    const size_t words = chitta::hamming::WordsForDim(dim);
    py::array_t<uint64_t> out({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(words)});
    CallReleased([&] {
      return chitta::hamming::Binarize(vectors.data(), n, dim, mean.data(), out.mutable_data());
    });
    return out;
  }, py::arg("vectors"), py::arg("mean"), "Sign codes of vectors - mean (see chitta.organs.index.hamming).");

  py::class_<HammingIndex>(m, "HammingIndex")
      .def(py::init([](uint64_t bits) {
             auto r = HammingIndex::Create(bits);
             ThrowIfError(r.status());
             return std::move(r.value());
           }),
           py::arg("bits"))
      .def_property_readonly("bits", &HammingIndex::bits)
      .def_property_readonly("words", &HammingIndex::words)
      .def("__len__", &HammingIndex::size)
      .def("contains", &HammingIndex::Contains, py::arg("id"))
      .def("memory_bytes", &HammingIndex::MemoryBytes)
      .def("ids", [](const HammingIndex& self) { return ToArray(self.Ids()); })
      .def("add", [](HammingIndex& self, const py::array& ids_in, const py::array& codes_in) {
        auto ids = Expect<uint64_t>(ids_in, 1, "ids");
        auto codes = Expect<uint64_t>(codes_in, 2, "codes");
        ExpectRows(codes, ids.shape(0), static_cast<py::ssize_t>(self.words()), "codes");
        CallReleased([&] {
          return self.Add(ids.data(), codes.data(), static_cast<size_t>(ids.shape(0)));
        });
      }, py::arg("ids"), py::arg("codes"))
      .def("remove", [](HammingIndex& self, const py::array& ids_in) {
        auto ids = Expect<uint64_t>(ids_in, 1, "ids");
        CallReleased([&] { return self.Remove(ids.data(), static_cast<size_t>(ids.shape(0))); });
      }, py::arg("ids"))
      .def("search", [](const HammingIndex& self, const py::array& queries_in, int64_t k) {
        auto queries = Expect<uint64_t>(queries_in, 2, "queries");
        if (k <= 0) ThrowInvalid("k must be positive");
        ExpectRows(queries, queries.shape(0), static_cast<py::ssize_t>(self.words()), "queries");
        const auto nq = queries.shape(0);
        py::array_t<uint64_t> ids({nq, static_cast<py::ssize_t>(k)});
        py::array_t<uint32_t> dist({nq, static_cast<py::ssize_t>(k)});
        CallReleased([&] {
          return self.Search(queries.data(), static_cast<size_t>(nq), static_cast<size_t>(k),
                             ids.mutable_data(), dist.mutable_data());
        });
        return py::make_tuple(ids, dist);
      }, py::arg("queries"), py::arg("k"))
      .def("save", [](const HammingIndex& self, const std::string& path) {
        CallReleased([&] { return self.Save(path); });
      }, py::arg("path"))
      .def_static("load", [](const std::string& path) {
        return ValueReleased([&] { return HammingIndex::Load(path); });
      }, py::arg("path"));
}

}  // namespace chitta_ext
