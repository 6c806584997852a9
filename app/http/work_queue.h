// One background thread running submitted tasks in order, so slow work
// (document ingestion, answers' citation attribution) never blocks an HTTP
// reactor or the inference thread: a WorkPool of one worker whose backlog
// has no bound.
// Thread-safety: Post() from any thread. The destructor runs what is queued.
#pragma once

#include <functional>
#include <limits>

#include "app/http/work_pool.h"

namespace ragd::app {

class WorkQueue {
 public:
  void Post(std::function<void()> task) { pool_.TryPost(std::move(task)); }

 private:
  WorkPool pool_{1, std::numeric_limits<size_t>::max() - 1};
};

}  // namespace ragd::app
