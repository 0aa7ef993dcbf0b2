// Implementation of attention/positional.h.
#include "attention/positional.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace attnplay {

Matrix sinusoidal_positional_encoding(int n_positions, int d) {
  if (n_positions < 0 || d <= 0) {
    throw std::invalid_argument("positional encoding: need n_positions >= 0 and d > 0");
  }
  Matrix pe(n_positions, d);  // [T, d]
  for (int pos = 0; pos < n_positions; ++pos) {
    for (int i = 0; i < d; i += 2) {
      // Computed in double so that large positions keep their precision.
      const double angle = pos / std::pow(10000.0, static_cast<double>(i) / d);
      pe(pos, i) = static_cast<float>(std::sin(angle));
      if (i + 1 < d) pe(pos, i + 1) = static_cast<float>(std::cos(angle));
    }
  }
  return pe;
}

Matrix embed_tokens(const std::vector<std::int32_t>& ids, const ConstMatrixRef& token_table,
                    const ConstMatrixRef& position_table) {
  if (token_table.cols() != position_table.cols()) {
    throw std::invalid_argument("embed_tokens: token and position tables differ in width");
  }
  const auto n = static_cast<Eigen::Index>(ids.size());
  if (n > position_table.rows()) {
    throw std::invalid_argument("embed_tokens: " + std::to_string(n) + " tokens but only " +
                                std::to_string(position_table.rows()) + " positions");
  }
  Matrix out(n, token_table.cols());  // [T, d]
  for (Eigen::Index t = 0; t < n; ++t) {
    const std::int32_t id = ids[static_cast<std::size_t>(t)];
    if (id < 0 || id >= token_table.rows()) {
      throw std::invalid_argument("embed_tokens: token id " + std::to_string(id) + " outside the vocabulary of " +
                                  std::to_string(token_table.rows()));
    }
    out.row(t) = token_table.row(id) + position_table.row(t);
  }
  return out;
}

std::vector<double> rope_inverse_frequencies(int rotary_dims, double theta, const RopeFrequencyScaling& scaling,
                                             int positions) {
  if (rotary_dims <= 0 || rotary_dims % 2 != 0) throw std::invalid_argument("rope: the rotated width must be positive and even");
  std::vector<double> inv_freq(static_cast<std::size_t>(rotary_dims / 2));
  for (std::size_t i = 0; i < inv_freq.size(); ++i) {
    inv_freq[i] = 1.0 / std::pow(theta, static_cast<double>(2 * i) / rotary_dims);
  }
  const double pi = 3.14159265358979323846;
  if (scaling.type == RopeFrequencyScaling::Type::longrope) {
    const std::vector<double>& factors =
        positions > scaling.original_max_positions ? scaling.long_factors : scaling.short_factors;
    if (factors.size() != inv_freq.size()) {
      throw std::invalid_argument("rope: longrope has " + std::to_string(factors.size()) + " factors for " +
                                  std::to_string(inv_freq.size()) + " rotated pairs");
    }
    for (std::size_t i = 0; i < inv_freq.size(); ++i) inv_freq[i] /= factors[i];
    return inv_freq;
  }
  if (scaling.type == RopeFrequencyScaling::Type::yarn) {
    // The dimension that turns `rotations` times within the original positions, and the ramp between beta_fast's and beta_slow's.
    const auto correction_dim = [&](double rotations) {
      return rotary_dims * std::log(scaling.original_max_positions / (rotations * 2 * pi)) / (2 * std::log(theta));
    };
    double low = correction_dim(scaling.beta_fast), high = correction_dim(scaling.beta_slow);
    if (scaling.truncate) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, static_cast<double>(rotary_dims - 1));
    if (low == high) high += 0.001;
    for (std::size_t i = 0; i < inv_freq.size(); ++i) {
      const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
      const double extrapolation = 1 - ramp;  // 1: keep the original frequency
      inv_freq[i] = inv_freq[i] / scaling.factor * (1 - extrapolation) + inv_freq[i] * extrapolation;
    }
    return inv_freq;
  }
  for (double& f : inv_freq) {
    if (scaling.type == RopeFrequencyScaling::Type::linear) {
      f /= scaling.factor;
    } else if (scaling.type == RopeFrequencyScaling::Type::llama3) {
      const double wavelength = 2 * pi / f;
      const double low_freq_wavelength = scaling.original_max_positions / scaling.low_freq_factor;
      const double high_freq_wavelength = scaling.original_max_positions / scaling.high_freq_factor;
      if (wavelength > low_freq_wavelength) {
        f /= scaling.factor;
      } else if (!(wavelength < high_freq_wavelength)) {  // between the two: interpolate
        const double smooth = (scaling.original_max_positions / wavelength - scaling.low_freq_factor) /
                              (scaling.high_freq_factor - scaling.low_freq_factor);
        f = (1 - smooth) * f / scaling.factor + smooth * f;
      }
    }
  }
  return inv_freq;
}

double rope_attention_factor(const RopeFrequencyScaling& scaling) {
  using Type = RopeFrequencyScaling::Type;
  if (scaling.type != Type::yarn && scaling.type != Type::longrope) return 1.0;
  if (scaling.attention_factor > 0) return scaling.attention_factor;
  if (scaling.factor <= 1) return 1.0;
  if (scaling.type == Type::longrope) return std::sqrt(1 + std::log(scaling.factor) / std::log(scaling.original_max_positions));
  const auto mscale = [&](double m) { return 0.1 * m * std::log(scaling.factor) + 1.0; };
  if (scaling.mscale > 0 && scaling.mscale_all_dim > 0) return mscale(scaling.mscale) / mscale(scaling.mscale_all_dim);
  return mscale(1.0);
}

void apply_rope(MatrixRef x, int head_dim, const std::vector<double>& inv_freq, int first_position,
                double attention_factor) {
  const int half = static_cast<int>(inv_freq.size());
  if (head_dim <= 0 || x.cols() % head_dim != 0 || 2 * half > head_dim) {
    throw std::invalid_argument("rope: width " + std::to_string(x.cols()) + " does not split into heads of " +
                                std::to_string(head_dim) + " with " + std::to_string(2 * half) + " rotated dims");
  }
  const Eigen::Index heads = x.cols() / head_dim;
  std::vector<float> cos(static_cast<std::size_t>(half)), sin(static_cast<std::size_t>(half));
  for (Eigen::Index t = 0; t < x.rows(); ++t) {
    const double position = static_cast<double>(first_position + t);
    for (int i = 0; i < half; ++i) {
      cos[i] = static_cast<float>(std::cos(position * inv_freq[i]) * attention_factor);
      sin[i] = static_cast<float>(std::sin(position * inv_freq[i]) * attention_factor);
    }
    for (Eigen::Index h = 0; h < heads; ++h) {
      float* row = x.row(t).data() + h * head_dim;
      for (int i = 0; i < half; ++i) {
        const float a = row[i], b = row[i + half];
        row[i] = a * cos[i] - b * sin[i];
        row[i + half] = b * cos[i] + a * sin[i];
      }
    }
  }
}

int relative_position_bucket(int relative_position, bool bidirectional, int num_buckets, int max_distance) {
  int bucket = 0;
  int distance = relative_position;
  if (bidirectional) {
    num_buckets /= 2;
    if (distance > 0) bucket += num_buckets;  // keys after the query
    distance = std::abs(distance);
  } else {
    distance = distance < 0 ? -distance : 0;  // keys before the query; later ones (masked) share bucket 0
  }
  const int max_exact = num_buckets / 2;
  if (distance < max_exact) return bucket + distance;
  // float32 throughout, as torch: log(d / max_exact) / log(max_distance / max_exact) · (buckets - max_exact).
  const float log_ratio = std::log(static_cast<float>(distance) / static_cast<float>(max_exact));
  const float log_span = static_cast<float>(std::log(static_cast<double>(max_distance) / max_exact));
  const int large = max_exact + static_cast<int>(log_ratio / log_span * static_cast<float>(num_buckets - max_exact));
  return bucket + std::min(large, num_buckets - 1);
}

std::vector<Matrix> relative_position_bias(const Matrix& table, int queries, int keys, int first_query,
                                           bool bidirectional, int max_distance) {
  const int buckets = static_cast<int>(table.rows()), heads = static_cast<int>(table.cols());
  std::vector<Matrix> bias(static_cast<std::size_t>(heads), Matrix(queries, keys));  // H of [Tq, Tk]
  const int lowest = -(first_query + queries - 1);  // the smallest key - query
  std::vector<int> bucket_of(static_cast<std::size_t>(keys - lowest));  // [key - query - lowest]
  for (int r = lowest; r < keys; ++r) {
    bucket_of[static_cast<std::size_t>(r - lowest)] = relative_position_bucket(r, bidirectional, buckets, max_distance);
  }
  for (int i = 0; i < queries; ++i) {
    for (int j = 0; j < keys; ++j) {
      const int b = bucket_of[static_cast<std::size_t>(j - (first_query + i) - lowest)];
      for (int h = 0; h < heads; ++h) bias[static_cast<std::size_t>(h)](i, j) = table(b, h);
    }
  }
  return bias;
}

namespace {

// Keys' cubic convolution kernel at distance x from the sample (|x| < 2).
double cubic_near(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }       // |x| <= 1
double cubic_far(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }  // 1 < |x| < 2

// One output index of a resize along one axis: the inputs it reads and their weights.
struct AxisTaps {
  std::vector<int> index;
  std::vector<double> weight;
};

// upsample_bicubic2d's taps: the 4 inputs around scale·(o + 0.5) - 0.5, clamped to the axis.
std::vector<AxisTaps> bicubic_taps(int in, int out) {
  constexpr double a = -0.75;
  const double scale = static_cast<double>(in) / out;
  std::vector<AxisTaps> taps(static_cast<std::size_t>(out));
  for (int o = 0; o < out; ++o) {
    const double real = scale * (o + 0.5) - 0.5;
    const int base = static_cast<int>(std::floor(real));
    const double t = real - base;
    AxisTaps& tap = taps[static_cast<std::size_t>(o)];
    tap.weight = {cubic_far(t + 1, a), cubic_near(t, a), cubic_near(1 - t, a), cubic_far(2 - t, a)};
    for (int j = 0; j < 4; ++j) tap.index.push_back(std::clamp(base - 1 + j, 0, in - 1));
  }
  return taps;
}

// _upsample_bicubic2d_aa's taps: a = -0.5, support 2·max(scale, 1), normalised.
std::vector<AxisTaps> antialiased_bicubic_taps(int in, int out) {
  constexpr double a = -0.5;
  const double scale = static_cast<double>(in) / out;
  const double support = scale >= 1.0 ? 2.0 * scale : 2.0;
  const double inverse_scale = scale >= 1.0 ? 1.0 / scale : 1.0;
  std::vector<AxisTaps> taps(static_cast<std::size_t>(out));
  for (int o = 0; o < out; ++o) {
    const double center = scale * (o + 0.5);
    const int first = std::max(static_cast<int>(center - support + 0.5), 0);
    const int count = std::min(static_cast<int>(center + support + 0.5), in) - first;
    AxisTaps& tap = taps[static_cast<std::size_t>(o)];
    double total = 0;
    for (int j = 0; j < count; ++j) {
      const double x = std::fabs((j + first - center + 0.5) * inverse_scale);
      const double w = x < 1.0 ? cubic_near(x, a) : x < 2.0 ? cubic_far(x, a) : 0.0;
      tap.index.push_back(first + j);
      tap.weight.push_back(w);
      total += w;
    }
    if (total != 0.0) {
      for (double& w : tap.weight) w /= total;
    }
  }
  return taps;
}

}  // namespace

Matrix resize_position_grid(const ConstMatrixRef& grid, int from_height, int from_width, int to_height, int to_width,
                            bool antialias) {
  if (grid.rows() != static_cast<Eigen::Index>(from_height) * from_width) {
    throw std::invalid_argument("position grid: " + std::to_string(grid.rows()) + " rows for a " +
                                std::to_string(from_height) + "×" + std::to_string(from_width) + " grid");
  }
  const std::vector<AxisTaps> rows = antialias ? antialiased_bicubic_taps(from_height, to_height)
                                               : bicubic_taps(from_height, to_height);
  const std::vector<AxisTaps> cols = antialias ? antialiased_bicubic_taps(from_width, to_width)
                                               : bicubic_taps(from_width, to_width);
  const Eigen::Index d = grid.cols();
  Matrix out = Matrix::Zero(static_cast<Eigen::Index>(to_height) * to_width, d);  // [gh·gw, d]
  Eigen::RowVectorXd sum(d);
  for (int y = 0; y < to_height; ++y) {
    const AxisTaps& ry = rows[static_cast<std::size_t>(y)];
    for (int x = 0; x < to_width; ++x) {
      const AxisTaps& cx = cols[static_cast<std::size_t>(x)];
      sum.setZero();
      for (std::size_t j = 0; j < ry.index.size(); ++j) {
        for (std::size_t i = 0; i < cx.index.size(); ++i) {
          const double w = ry.weight[j] * cx.weight[i];
          sum += w * grid.row(static_cast<Eigen::Index>(ry.index[j]) * from_width + cx.index[i]).cast<double>();
        }
      }
      out.row(static_cast<Eigen::Index>(y) * to_width + x) = sum.cast<float>();
    }
  }
  return out;
}

}  // namespace attnplay
