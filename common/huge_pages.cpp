#include "common/huge_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace ragd {
namespace {

size_t MappedBytes(size_t bytes) { return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes; }

}  // namespace

void* AllocateHugePages(size_t bytes, size_t align) {
  if (bytes < kHugePageBytes) return ::operator new(bytes, std::align_val_t(align));
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

void FreeHugePages(void* p, size_t bytes, size_t align) noexcept {
  if (p == nullptr) return;
  if (bytes < kHugePageBytes) {
    ::operator delete(p, std::align_val_t(align));
    return;
  }
  munmap(p, MappedBytes(bytes));
}

}  // namespace ragd
