#include "common/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>
#include <new>

namespace ragd {
namespace {

size_t MappedBytes(size_t bytes) { return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes; }

// Small arrays, and alignments a huge page does not give, come from the heap.
bool FromHeap(size_t bytes, size_t align) { return bytes < kHugePageBytes || align > kHugePageBytes; }

class HugePages final : public std::pmr::memory_resource {
  void* do_allocate(size_t bytes, size_t align) override {
    if (FromHeap(bytes, align)) return ::operator new(bytes, std::align_val_t(align));
    const size_t length = MappedBytes(bytes);
    // Map one huge page more than needed, then unmap what lies outside the
    // 2 MiB-aligned part.
    void* raw =
        mmap(nullptr, length + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = (begin + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    if (aligned > begin) munmap(raw, aligned - begin);
    if (const size_t tail = begin + length + kHugePageBytes - (aligned + length); tail > 0) {
      munmap(reinterpret_cast<void*>(aligned + length), tail);
    }
    void* p = reinterpret_cast<void*>(aligned);
    (void)madvise(p, length, MADV_HUGEPAGE);  // a kernel without THP keeps small pages
    return p;
  }

  void do_deallocate(void* p, size_t bytes, size_t align) override {
    if (FromHeap(bytes, align)) {
      ::operator delete(p, std::align_val_t(align));
    } else {
      munmap(p, MappedBytes(bytes));
    }
  }

  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
};

}  // namespace

std::pmr::memory_resource* HugePageResource() {
  static HugePages* const resource = new HugePages;  // outlives every static that may free into it
  return resource;
}

}  // namespace ragd
