// Where the browser pages are served from when server.web_dir is empty.
//
// An installed ragd (`cmake --install`, `make install PREFIX=...`) finds them
// beside its binary: <prefix>/bin/ragd serves <prefix>/share/ragd/web (the
// relative path is fixed at configure time from the install folders, so any
// prefix works). A ragd run from inside the build folder it was built in
// serves the web/ folder of its source tree, so that an edited page needs no
// install step. Nothing else is tried: an installed binary never serves the
// files of the tree it was built from.
#pragma once

#include <string>

namespace ragd::app {

// The folder above for the running executable (/proc/self/exe).
std::string DefaultWebDir();

// The same rule for an executable at `exe_path` (tests).
std::string DefaultWebDirFor(const std::string& exe_path);

}  // namespace ragd::app
