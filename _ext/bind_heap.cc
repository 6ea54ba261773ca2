// _ext/bind_heap.cc
// chitta._core._trim_heap: hand the C allocator's free memory back to the system
// (glibc's malloc_trim). After a bulk pass frees its temporaries, glibc keeps most of
// the freed pages in its heaps (the dynamic mmap threshold moves large blocks there),
// so the process's RSS stays at the pass's peak (D-089). No logic beyond the call.
#include "registry.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace chitta_ext {

CHITTA_BIND(heap) {
  m.def(
      "_trim_heap",
      []() {
#if defined(__GLIBC__)
        py::gil_scoped_release release;
        return malloc_trim(0) != 0;
#else
        return false;
#endif
      },
      "Give the allocator's free pages back to the system; True if any were (glibc only).");
}

}  // namespace chitta_ext
