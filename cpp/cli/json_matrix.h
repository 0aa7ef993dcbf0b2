// JSON <-> matrix conversion for the CLI (nlohmann-json). A matrix is a JSON
// array of equal-length rows; -inf (masked scores) is written as the string
// "-inf" because JSON has no infinities. Attention weights of every layer
// and head are nested [layer][head][query][key], as Hugging Face returns them.
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace attnplay::cli {

inline Matrix matrix_from_json(const nlohmann::json& j, const std::string& name) {
  if (!j.is_array() || j.empty() || !j[0].is_array()) {
    throw std::invalid_argument(name + ": expected a non-empty array of rows");
  }
  const std::size_t cols = j[0].size();
  Matrix m(static_cast<Eigen::Index>(j.size()), static_cast<Eigen::Index>(cols));
  for (std::size_t r = 0; r < j.size(); ++r) {
    if (!j[r].is_array() || j[r].size() != cols) {
      throw std::invalid_argument(name + ": row " + std::to_string(r) + " does not have " + std::to_string(cols) +
                                  " numbers");
    }
    for (std::size_t c = 0; c < cols; ++c) {
      if (!j[r][c].is_number()) throw std::invalid_argument(name + ": non-number at row " + std::to_string(r));
      m(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = j[r][c].get<float>();
    }
  }
  return m;
}

inline nlohmann::json matrix_to_json(const Matrix& m) {
  nlohmann::json rows = nlohmann::json::array();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    nlohmann::json row = nlohmann::json::array();
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      const float v = m(r, c);
      if (std::isinf(v)) {
        row.push_back(v < 0 ? "-inf" : "inf");
      } else {
        row.push_back(v);
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// [layers][heads][rows][cols] from a row-major [L, H, R, C] array.
inline nlohmann::ordered_json nested_attentions(const std::vector<float>& data, int layers, int heads, int rows, int cols) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  const float* w = data.data();
  for (int l = 0; l < layers; ++l) {
    nlohmann::ordered_json layer = nlohmann::ordered_json::array();
    for (int h = 0; h < heads; ++h) {
      nlohmann::ordered_json head = nlohmann::ordered_json::array();
      for (int r = 0; r < rows; ++r, w += cols) head.push_back(std::vector<float>(w, w + cols));
      layer.push_back(std::move(head));
    }
    out.push_back(std::move(layer));
  }
  return out;
}

}  // namespace attnplay::cli
