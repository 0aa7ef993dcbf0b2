// Reader::reject_unused (weight_reader.h): kept out of the header so that
// std::regex, ~5 s of compiling per file that uses it, is compiled once.
#include "model/weight_reader.h"

#include <regex>

namespace attnplay {

void Reader::reject_unused(const std::string& ignorable_pattern) const {
  const std::regex ignorable(ignorable_pattern);
  std::vector<std::string> unexpected;
  for (const auto& entry : st_.tensors()) {
    if (used_.count(entry.first) == 0 && !std::regex_match(entry.first, ignorable)) {
      unexpected.push_back(entry.first);
    }
  }
  if (unexpected.empty()) return;
  std::string list;
  for (std::size_t i = 0; i < unexpected.size() && i < 5; ++i) list += (i ? "', '" : "'") + unexpected[i];
  throw std::invalid_argument(std::to_string(unexpected.size()) + " unexpected tensor(s) for this " +
                              "architecture: " + list + "'" + (unexpected.size() > 5 ? ", ..." : "") +
                              " (does config.json describe this checkpoint?)");
}

}  // namespace attnplay
