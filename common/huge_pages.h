// Memory for large arrays that every step reads from end to end (a model's
// packed weights). An allocation of 2 MiB or more is an anonymous mapping
// aligned to 2 MiB and offered to the kernel as transparent huge pages
// (madvise, which Debian's default THP mode "madvise" honours): a pass over
// it then needs one TLB entry per 2 MiB instead of one per 4 KiB. Smaller
// ones come from operator new. Where the kernel has no huge pages, the
// mapping is plain memory.
//
// Arrays smaller than 2 MiB that are read together (a model's layer
// matrices) get huge pages by sharing one arena on this resource, e.g. a
// std::pmr::monotonic_buffer_resource sized for all of them.
#pragma once

#include <cstddef>
#include <memory_resource>

namespace ragd {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// The process's one such resource (thread-safe, never destroyed).
std::pmr::memory_resource* HugePageResource();

}  // namespace ragd
