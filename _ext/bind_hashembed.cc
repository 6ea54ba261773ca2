// _ext/bind_hashembed.cc
// chitta._core._hash_embed: batch hashed-feature embedding (csrc/hashembed).
// chitta/encode/hashing.py validates and normalises the texts first.
#include <pybind11/numpy.h>

#include <string_view>
#include <vector>

#include "hashembed/hash_embed.h"
#include "registry.h"

namespace chitta_ext {

CHITTA_BIND(hashembed) {
  m.attr("HASHEMBED_MAX_DIM") = chitta::hashembed::kMaxDim;
  m.def(
      "_hash_embed",
      [](const py::sequence& texts, int64_t dim) {
        if (dim < 1 || dim > static_cast<int64_t>(chitta::hashembed::kMaxDim)) {
          ThrowInvalid("dim must be in [1, " + std::to_string(chitta::hashembed::kMaxDim) + "]");
        }
        const auto n = static_cast<size_t>(py::len(texts));
        std::vector<py::object> keep;  // owns the str objects while the GIL is released
        std::vector<std::string_view> views;
        keep.reserve(n);
        views.reserve(n);
        for (size_t i = 0; i < n; ++i) {
          py::object item = texts[i];
          if (!PyUnicode_Check(item.ptr())) ThrowInvalid("texts must be str");
          Py_ssize_t len = 0;
          const char* data = PyUnicode_AsUTF8AndSize(item.ptr(), &len);
          if (data == nullptr) throw py::error_already_set();
          views.emplace_back(data, static_cast<size_t>(len));
          keep.push_back(std::move(item));
        }
        py::array_t<float> out({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(dim)});
        float* dst = out.mutable_data();
        chitta::Status st;
        {
          py::gil_scoped_release release;
          st = chitta::hashembed::HashEmbed(views.data(), n, static_cast<uint32_t>(dim), dst);
        }
        ThrowIfError(std::move(st));
        return out;
      },
      py::arg("texts"), py::arg("dim"),
      "Embed already-normalised texts (words separated by spaces) into an (n, dim) float32 "
      "array; see chitta.encode.hashing.");
}

}  // namespace chitta_ext
