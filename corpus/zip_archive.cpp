#include "corpus/zip_archive.h"

#include <zip.h>

#include <algorithm>

namespace ragd::corpus {

struct ZipArchive::Handle {
  zip_t* zip = nullptr;
  ~Handle() {
    if (zip != nullptr) zip_discard(zip);
  }
};

ZipArchive::ZipArchive(std::unique_ptr<Handle> handle, std::vector<std::string> names)
    : handle_(std::move(handle)), names_(std::move(names)) {}

ZipArchive::~ZipArchive() = default;

Result<std::unique_ptr<ZipArchive>> ZipArchive::Open(std::string_view bytes) {
  zip_error_t error;
  zip_error_init(&error);
  // The source reads `bytes` in place (freep = 0): nothing is copied.
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (source == nullptr) {
    zip_error_fini(&error);
    return Status::InvalidArgument("unreadable ZIP archive");
  }
  zip_t* zip = zip_open_from_source(source, ZIP_RDONLY, &error);
  if (zip == nullptr) {
    zip_source_free(source);
    const std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    return Status::InvalidArgument("unreadable ZIP archive (" + why + ")");
  }
  zip_error_fini(&error);
  auto handle = std::make_unique<Handle>();
  handle->zip = zip;
  std::vector<std::string> names;
  const zip_int64_t n = zip_get_num_entries(zip, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(zip, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_GUESS);
    names.emplace_back(name != nullptr ? name : "");
  }
  return std::unique_ptr<ZipArchive>(new ZipArchive(std::move(handle), std::move(names)));
}

bool ZipArchive::Has(std::string_view name) const {
  return std::find(names_.begin(), names_.end(), name) != names_.end();
}

Result<std::string> ZipArchive::Read(std::string_view name, size_t max_bytes) const {
  const auto it = std::find(names_.begin(), names_.end(), name);
  if (it == names_.end()) return Status::NotFound("the archive has no " + std::string(name));
  const auto index = static_cast<zip_uint64_t>(it - names_.begin());
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(handle_->zip, index, 0, &st) != 0)
    return Status::InvalidArgument("damaged ZIP entry " + std::string(name));
  if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) != 0 && st.encryption_method != ZIP_EM_NONE)
    return Status::Unsupported("encrypted document (password protected)");
  zip_file_t* file = zip_fopen_index(handle_->zip, index, 0);
  if (file == nullptr) return Status::InvalidArgument("unreadable ZIP entry " + std::string(name));
  // The declared size is only a hint: read in pieces and stop past the budget.
  std::string out;
  char buf[1 << 16];
  for (;;) {
    const zip_int64_t got = zip_fread(file, buf, sizeof buf);
    if (got < 0) {
      zip_fclose(file);
      return Status::InvalidArgument("damaged ZIP entry " + std::string(name));
    }
    if (got == 0) break;
    if (out.size() + static_cast<size_t>(got) > max_bytes) {
      zip_fclose(file);
      return Status::OutOfRange("the archive entry " + std::string(name) + " unpacks to more than " +
                                std::to_string(max_bytes) + " bytes");
    }
    out.append(buf, static_cast<size_t>(got));
  }
  zip_fclose(file);
  return out;
}

}  // namespace ragd::corpus
