// The one-file HTML page of `attnplay attention --format html`: the page
// template (the <attention-view> widget bundled with its styles and a strict
// Content-Security-Policy; kPageTemplate is generated at build time from web/
// by scripts/make-page-template.mjs) filled with a title, the widget's
// attributes and the attention as data-mode JSON. web/export/page-export.js fills
// the same template the same way for the playground's "Download as a page".
// Not here: running the model (model_attention.cpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attnplay::cli {

extern const char* const kPageTemplate;

/** A float32 tensor as data-mode JSON: {"dtype": "float32", "shape": [...], "base64": "..."} (little-endian bytes). */
nlohmann::ordered_json base64_tensor(const std::vector<std::int64_t>& shape, const std::vector<float>& values);

/** The page: `title` (plain text, escaped here), `attributes` (name -> value, escaped here), `data` (the widget's JSON). */
std::string html_page(const std::string& title, const std::vector<std::pair<std::string, std::string>>& attributes,
                      const nlohmann::ordered_json& data);

}  // namespace attnplay::cli
