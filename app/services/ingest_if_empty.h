// Seeding an empty corpus from a folder (`ragd serve --ingest-if-empty`,
// `ragd eval --ingest`).
#pragma once

#include <string>
#include <vector>

#include "retrieval/retriever.h"

namespace ragd::app {

struct SeedReport {
  bool ingested = false;         // false: the corpus already held documents
  size_t files = 0;              // regular files found under the folder(s)
  std::vector<Status> failures;  // one per file that could not be added, its message "path: why"
};

// When the corpus holds no documents, adds every regular file under `folder`
// (recursively, in path order) and saves the vector index. A file that
// fails is listed in `failures` and the others still go in; whether that is
// fatal is the caller's call. Errors: the document count or the folder
// cannot be read, or the index cannot be saved.
Result<SeedReport> IngestIfEmpty(retrieval::Retriever& retriever, const std::string& folder);
// The same over the files of several folders, together in path order.
Result<SeedReport> IngestIfEmpty(retrieval::Retriever& retriever, const std::vector<std::string>& folders);

}  // namespace ragd::app
