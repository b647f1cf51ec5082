// `faultfs ctl SOCKET COMMAND [ARG]`: the command-line client of the control protocol.
//
//   faultfs ctl /run/ffs.sock list | stats | metrics | enable | disable | clear | crash
//   faultfs ctl /run/ffs.sock release [RULE_ID]
//   faultfs ctl /run/ffs.sock remove RULE_ID
//   faultfs ctl /run/ffs.sock add '{"id":"e","path":"*.blk","action":"errno","errno":"EIO"}'
//   faultfs ctl /run/ffs.sock add rules.yaml        # checked locally first: file:line: key: problem
//   faultfs ctl /run/ffs.sock '{"cmd":"stats"}'     # a raw request
//
// `metrics` asks for the stats and prints them in the Prometheus text format (stats_metrics.h).
// Prints the reply line; exits 0 when it says ok, 1 when it carries an error, 2 on bad usage or
// when the socket cannot be reached.
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"

namespace kvchaos::faultfs {

// Builds the request line for `args` (COMMAND [ARG]); errors explain the usage.
Result<std::string> BuildCtlRequest(const std::vector<std::string>& args);
int RunCtl(const std::vector<std::string>& args);

}  // namespace kvchaos::faultfs
