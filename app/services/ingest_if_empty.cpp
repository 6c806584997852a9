#include "app/services/ingest_if_empty.h"

#include <algorithm>
#include <filesystem>

namespace ragd::app {

Result<SeedReport> IngestIfEmpty(retrieval::Retriever& retriever, const std::string& folder) {
  return IngestIfEmpty(retriever, std::vector<std::string>{folder});
}

Result<SeedReport> IngestIfEmpty(retrieval::Retriever& retriever, const std::vector<std::string>& folders) {
  SeedReport report;
  auto count = retriever.store().CountDocuments();
  if (!count.ok()) return count.status();
  if (*count > 0) return report;
  std::vector<std::string> files;
  for (const std::string& folder : folders) {
    std::error_code ec;
    for (const auto& e : std::filesystem::recursive_directory_iterator(folder, ec))
      if (e.is_regular_file()) files.push_back(e.path().string());
    if (ec) return Status::IoError(folder + ": " + ec.message());
  }
  std::sort(files.begin(), files.end());
  for (const std::string& f : files) {
    auto r = retriever.IngestFile(f);
    if (!r.ok()) report.failures.push_back(Status(r.status().code(), f + ": " + r.status().message()));
  }
  report.ingested = true;
  report.files = files.size();
  RAGD_RETURN_IF_ERROR(retriever.SaveIndex());
  return report;
}

}  // namespace ragd::app
