// Memory for large arrays that every step reads from end to end (a model's
// packed weights). An allocation of 2 MiB or more is an anonymous mapping
// aligned to 2 MiB and offered to the kernel as transparent huge pages
// (madvise, which Debian's default THP mode "madvise" honours): a pass over
// it then needs one TLB entry per 2 MiB instead of one per 4 KiB. Smaller
// ones come from operator new. Where the kernel has no huge pages, the
// mapping is plain memory.
#pragma once

#include <cstddef>
#include <new>

namespace ragd {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// `bytes` of memory aligned to `align` (a power of two, at most 2 MiB);
// throws std::bad_alloc when there is none. Free with FreeHugePages and the
// same size.
void* AllocateHugePages(size_t bytes, size_t align);
void FreeHugePages(void* p, size_t bytes, size_t align) noexcept;

// A std::allocator for such arrays: std::vector<T, HugePageAllocator<T>>.
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT(google-explicit-constructor): allocator rebind
  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(AllocateHugePages(n * sizeof(T), alignof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { FreeHugePages(p, n * sizeof(T), alignof(T)); }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

}  // namespace ragd
