// How a command printed for the user to type (a repro line) names this kvchaos binary: `kvchaos`
// when that is what the shell finds on PATH, else the binary's absolute path, so the line works
// from wherever the user stands.
#pragma once

#include <string>

namespace kvchaos::cli {

std::string SelfCommand();

}  // namespace kvchaos::cli
