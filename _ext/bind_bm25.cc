// _ext/bind_bm25.cc
// chitta._core bindings of the BM25 index and tokenizer (csrc/bm25/). Converts
// arguments, releases the GIL for bulk work, maps Status to chitta.errors.
// The typed, validating surface is chitta/organs/index/bm25.py.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bm25/index.h"
#include "bm25/tokenizer.h"
#include "registry.h"

namespace chitta_ext {
namespace {

using chitta::bm25::Index;

std::string_view Utf8Of(const py::handle& obj, size_t position) {
  if (!PyUnicode_Check(obj.ptr())) {
    ThrowInvalid("text " + std::to_string(position) + " must be str, got " +
                 std::string(py::str(obj.get_type().attr("__name__"))));
  }
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(obj.ptr(), &size);
  if (data == nullptr) {
    PyErr_Clear();
    ThrowInvalid("text " + std::to_string(position) +
                 " is not encodable as UTF-8 (lone surrogate?)");
  }
  return std::string_view(data, static_cast<size_t>(size));
}

// A 1-D C-contiguous uint64 numpy array, or InvalidArgument.
py::array_t<uint64_t> IdArray(const py::handle& obj, const char* what) {
  if (!py::isinstance<py::array_t<uint64_t>>(obj)) {
    ThrowInvalid(std::string(what) + " must be a numpy uint64 array");
  }
  auto arr = py::reinterpret_borrow<py::array_t<uint64_t>>(obj);
  if (arr.ndim() != 1) ThrowInvalid(std::string(what) + " must be 1-D");
  if (!(arr.flags() & py::array::c_style)) ThrowInvalid(std::string(what) + " must be contiguous");
  return arr;
}

py::tuple HitsToArrays(const std::vector<chitta::bm25::Hit>& hits, size_t k) {
  py::array_t<uint64_t> ids(static_cast<py::ssize_t>(k));
  py::array_t<float> scores(static_cast<py::ssize_t>(k));
  uint64_t* id_ptr = ids.mutable_data();
  float* score_ptr = scores.mutable_data();
  for (size_t i = 0; i < k; ++i) {
    id_ptr[i] = i < hits.size() ? hits[i].id : chitta::bm25::kPadId;
    score_ptr[i] = i < hits.size() ? hits[i].score : 0.0f;
  }
  return py::make_tuple(ids, scores);
}

chitta::bm25::Accumulator AccumulatorFrom(const std::string& name) {
  if (name == "auto") return chitta::bm25::Accumulator::kAuto;
  if (name == "dense") return chitta::bm25::Accumulator::kDense;
  if (name == "sparse") return chitta::bm25::Accumulator::kSparse;
  ThrowInvalid("accumulator must be 'auto', 'dense' or 'sparse'");
}

chitta::bm25::Method MethodFrom(const std::string& name) {
  if (name == "auto") return chitta::bm25::Method::kAuto;
  if (name == "exhaustive") return chitta::bm25::Method::kExhaustive;
  if (name == "pruned") return chitta::bm25::Method::kPruned;
  ThrowInvalid("method must be 'auto', 'exhaustive' or 'pruned', got '" + name + "'");
}

}  // namespace

CHITTA_BIND(bm25) {
  m.def(
      "_bm25_tokenize",
      [](const py::object& text, bool stem, bool stopwords) {
        std::string_view view;
        if (PyBytes_Check(text.ptr())) {
          view = std::string_view(PyBytes_AS_STRING(text.ptr()),
                                  static_cast<size_t>(PyBytes_GET_SIZE(text.ptr())));
        } else {
          view = Utf8Of(text, 0);
        }
        std::vector<std::string> tokens;
        chitta::Status st;
        {
          py::gil_scoped_release release;
          st = chitta::bm25::Tokenize(view, {stem, stopwords}, &tokens);
        }
        ThrowIfError(std::move(st));
        return tokens;
      },
      py::arg("text"), py::arg("stem"), py::arg("stopwords"),
      "Tokenize str (or UTF-8 bytes) with the BM25 tokenizer.");

  py::class_<Index>(m, "_BM25")
      .def_static(
          "load",
          [](const std::string& path) {
            chitta::Result<std::unique_ptr<Index>> r = chitta::Status::OK();
            {
              py::gil_scoped_release release;
              r = Index::Load(path);
            }
            if (!r.ok()) ThrowIfError(r.status());
            return std::move(r.value());
          },
          py::arg("path"))
      .def(
          "save",
          [](const Index& self, const std::string& path) {
            chitta::Status st;
            {
              py::gil_scoped_release release;
              st = self.Save(path);
            }
            ThrowIfError(std::move(st));
          },
          py::arg("path"))
      .def(py::init([](double k1, double b, bool stem, bool stopwords) {
             ThrowIfError(Index::ValidateParams(k1, b));
             return std::make_unique<Index>(k1, b, chitta::bm25::TokenizerOptions{stem, stopwords});
           }),
           py::arg("k1"), py::arg("b"), py::arg("stem"), py::arg("stopwords"))
      .def("set_params",
           [](Index& self, double k1, double b) { ThrowIfError(self.SetParams(k1, b)); })
      .def_property_readonly("k1", &Index::k1)
      .def_property_readonly("b", &Index::b)
      .def_property_readonly("stem", [](const Index& self) { return self.tokenizer().stem; })
      .def_property_readonly("stopwords",
                             [](const Index& self) { return self.tokenizer().stopwords; })
      .def("add",
           [](Index& self, const py::handle& ids_obj, const py::sequence& texts) {
             auto ids = IdArray(ids_obj, "ids");
             const auto n = static_cast<size_t>(ids.shape(0));
             if (static_cast<size_t>(py::len(texts)) != n) {
               ThrowInvalid("got " + std::to_string(n) + " ids but " +
                            std::to_string(py::len(texts)) + " texts");
             }
             std::vector<py::object> keep;  // owns the str objects behind the views
             std::vector<std::string_view> views;
             keep.reserve(n);
             views.reserve(n);
             for (size_t i = 0; i < n; ++i) {
               keep.push_back(texts[i]);
               views.push_back(Utf8Of(keep.back(), i));
             }
             chitta::Status st;
             {
               py::gil_scoped_release release;
               st = self.Add(ids.data(), views.data(), n);
             }
             ThrowIfError(std::move(st));
           })
      .def("remove",
           [](Index& self, const py::handle& ids_obj) {
             auto ids = IdArray(ids_obj, "ids");
             chitta::Status st;
             {
               py::gil_scoped_release release;
               st = self.Remove(ids.data(), static_cast<size_t>(ids.shape(0)));
             }
             ThrowIfError(std::move(st));
           })
      .def(
          "search",
          [](const Index& self, const py::object& query, int64_t k, const py::object& allowed,
             const std::string& accumulator, const std::string& method) {
            if (k <= 0) ThrowInvalid("k must be >= 1");
            const std::string_view q = Utf8Of(query, 0);
            const auto acc = AccumulatorFrom(accumulator);
            const auto how = MethodFrom(method);
            std::vector<uint64_t> allowed_ids;
            const bool filtered = !allowed.is_none();
            if (filtered) {
              auto arr = IdArray(allowed, "allowed");
              allowed_ids.assign(arr.data(), arr.data() + arr.shape(0));
            }
            std::vector<chitta::bm25::Hit> hits;
            chitta::Status st;
            {
              py::gil_scoped_release release;
              st = self.Search(q, static_cast<size_t>(k), filtered ? &allowed_ids : nullptr,
                               &hits, acc, how);
            }
            ThrowIfError(std::move(st));
            return HitsToArrays(hits, static_cast<size_t>(k));
          },
          py::arg("query"), py::arg("k"), py::arg("allowed") = py::none(),
          py::arg("accumulator") = "auto", py::arg("method") = "auto")
      .def("__len__", &Index::size)
      .def("contains", &Index::Contains)
      .def("doc_freq", [](const Index& self, const std::string& t) { return self.DocFreq(t); })
      .def_property_readonly("vocabulary_size", &Index::VocabularySize)
      .def_property_readonly("avg_doc_length", &Index::AverageDocLength)
      .def_property_readonly("ordinal_slots", &Index::OrdinalSlots)
      .def("export_docs",
           [](const Index& self) {
             std::vector<Index::DocTerms> docs;
             {
               py::gil_scoped_release release;
               docs = self.ExportDocs();
             }
             py::list out;
             for (const auto& d : docs) out.append(py::make_tuple(d.id, d.terms));
             return out;
           })
      .def("import_docs", [](Index& self, const py::list& docs) {
        std::vector<Index::DocTerms> in;
        in.reserve(py::len(docs));
        for (const auto& item : docs) {
          auto tup = item.cast<py::tuple>();
          Index::DocTerms d{tup[0].cast<uint64_t>(),
                            tup[1].cast<std::vector<std::pair<std::string, uint32_t>>>()};
          in.push_back(std::move(d));
        }
        chitta::Status st;
        {
          py::gil_scoped_release release;
          st = self.ImportDocs(in);
        }
        ThrowIfError(std::move(st));
      });
}

}  // namespace chitta_ext
