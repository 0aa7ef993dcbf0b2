// Implementation of image/resample.h, step for step as Pillow's
// libImaging/Resample.c (precompute_coeffs, normalize_coeffs_8bpc,
// ImagingResampleHorizontal_8bpc / Vertical_8bpc, ImagingResampleInner) and
// Geometry.c's ImagingScaleAffine for nearest neighbour.
#include "image/resample.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnplay {
namespace {

constexpr double kPi = 3.14159265358979323846;

double box_filter(double x) { return x > -0.5 && x <= 0.5 ? 1.0 : 0.0; }

double bilinear_filter(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

double hamming_filter(double x) {
  x = std::fabs(x);
  if (x == 0.0) return 1.0;
  if (x >= 1.0) return 0.0;
  x *= kPi;
  return std::sin(x) / x * (0.54f + 0.46f * std::cos(x));  // Pillow's float constants
}

double bicubic_filter(double x) {  // Keys' cubic convolution, a = -0.5
  constexpr double a = -0.5;
  x = std::fabs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

double sinc(double x) {
  if (x == 0.0) return 1.0;
  x *= kPi;
  return std::sin(x) / x;
}

double lanczos_filter(double x) { return -3.0 <= x && x < 3.0 ? sinc(x) * sinc(x / 3) : 0.0; }

struct Filter {
  double (*weight)(double);
  double support;
};

Filter filter_of(Resampling resampling) {
  switch (resampling) {
    case Resampling::box: return {box_filter, 0.5};
    case Resampling::bilinear: return {bilinear_filter, 1.0};
    case Resampling::hamming: return {hamming_filter, 1.0};
    case Resampling::bicubic: return {bicubic_filter, 2.0};
    case Resampling::lanczos: return {lanczos_filter, 3.0};
    case Resampling::nearest: break;
  }
  throw std::logic_error("nearest neighbour has no filter");
}

// 8 bits of result, 2 bits of headroom for the filters' negative lobes.
constexpr int kPrecisionBits = 32 - 8 - 2;

// One output sample of a pass: the inputs first..first + count - 1, with
// fixed-point weights.
struct Taps {
  int first = 0, count = 0;
  std::vector<int> weights;  // [count]
};

// Pillow's precompute_coeffs over the whole input (box 0..in_size) and
// normalize_coeffs_8bpc.
std::vector<Taps> resampling_taps(int in_size, int out_size, const Filter& filter) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = scale < 1.0 ? 1.0 : scale;
  const double support = filter.support * filter_scale;
  std::vector<Taps> taps(static_cast<std::size_t>(out_size));
  std::vector<double> k;
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = (xx + 0.5) * scale;
    const double ss = 1.0 / filter_scale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    k.assign(static_cast<std::size_t>(xmax), 0.0);
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      k[x] = filter.weight((x + xmin - center + 0.5) * ss);
      ww += k[x];
    }
    Taps& t = taps[static_cast<std::size_t>(xx)];
    t.first = xmin;
    t.count = xmax;
    t.weights.resize(static_cast<std::size_t>(xmax));
    for (int x = 0; x < xmax; ++x) {
      const double w = ww != 0.0 ? k[x] / ww : k[x];
      t.weights[x] = static_cast<int>(w < 0 ? -0.5 + w * (1 << kPrecisionBits) : 0.5 + w * (1 << kPrecisionBits));
    }
  }
  return taps;
}

std::uint8_t clip8(int sum) {
  const int v = sum >> kPrecisionBits;  // arithmetic shift: floor, as Pillow's lookup table reads it
  return static_cast<std::uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}

// Rows first_row.. of `in` resampled along x to out_width: [rows, out_width, 3].
Picture horizontal_pass(const Picture& in, int first_row, int rows, const std::vector<Taps>& taps) {
  Picture out;
  out.width = static_cast<int>(taps.size());
  out.height = rows;
  out.rgb.resize(static_cast<std::size_t>(out.width) * rows * 3);
  for (int yy = 0; yy < rows; ++yy) {
    for (int xx = 0; xx < out.width; ++xx) {
      const Taps& t = taps[static_cast<std::size_t>(xx)];
      int sum[3] = {1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1)};
      for (int x = 0; x < t.count; ++x) {
        const std::uint8_t* p = in.pixel(t.first + x, first_row + yy);
        for (int ch = 0; ch < 3; ++ch) sum[ch] += p[ch] * t.weights[x];
      }
      std::uint8_t* o = out.rgb.data() + (static_cast<std::size_t>(yy) * out.width + xx) * 3;
      for (int ch = 0; ch < 3; ++ch) o[ch] = clip8(sum[ch]);
    }
  }
  return out;
}

// `in` resampled along y; taps' first rows counted from `row_offset` of `in`.
Picture vertical_pass(const Picture& in, int row_offset, const std::vector<Taps>& taps) {
  Picture out;
  out.width = in.width;
  out.height = static_cast<int>(taps.size());
  out.rgb.resize(static_cast<std::size_t>(out.width) * out.height * 3);
  for (int yy = 0; yy < out.height; ++yy) {
    const Taps& t = taps[static_cast<std::size_t>(yy)];
    for (int xx = 0; xx < out.width; ++xx) {
      int sum[3] = {1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1)};
      for (int y = 0; y < t.count; ++y) {
        const std::uint8_t* p = in.pixel(xx, t.first - row_offset + y);
        for (int ch = 0; ch < 3; ++ch) sum[ch] += p[ch] * t.weights[y];
      }
      std::uint8_t* o = out.rgb.data() + (static_cast<std::size_t>(yy) * out.width + xx) * 3;
      for (int ch = 0; ch < 3; ++ch) o[ch] = clip8(sum[ch]);
    }
  }
  return out;
}

// Pillow's ImagingScaleAffine: source coordinates accumulated in steps of
// in/out from half a step, truncated.
std::vector<int> nearest_sources(int in_size, int out_size) {
  const double step = static_cast<double>(in_size) / out_size;
  std::vector<int> sources(static_cast<std::size_t>(out_size));
  double position = step * 0.5;
  for (int i = 0; i < out_size; ++i) {
    const int source = position < 0.0 ? -1 : static_cast<int>(position);
    sources[static_cast<std::size_t>(i)] = source < in_size ? source : in_size - 1;
    position += step;
  }
  return sources;
}

}  // namespace

const char* resampling_name(Resampling resampling) {
  switch (resampling) {
    case Resampling::nearest: return "nearest";
    case Resampling::lanczos: return "lanczos";
    case Resampling::bilinear: return "bilinear";
    case Resampling::bicubic: return "bicubic";
    case Resampling::box: return "box";
    case Resampling::hamming: return "hamming";
  }
  return "?";
}

Picture resize_picture(const Picture& picture, int width, int height, Resampling resampling) {
  if (width < 1 || height < 1) {
    throw std::invalid_argument("cannot resize a picture to " + std::to_string(width) + "×" + std::to_string(height));
  }
  if (width == picture.width && height == picture.height) return picture;
  if (resampling == Resampling::nearest) {
    const std::vector<int> xs = nearest_sources(picture.width, width), ys = nearest_sources(picture.height, height);
    Picture out;
    out.width = width;
    out.height = height;
    out.rgb.resize(static_cast<std::size_t>(width) * height * 3);
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        const std::uint8_t* p = picture.pixel(xs[x], ys[y]);
        std::uint8_t* o = out.rgb.data() + (static_cast<std::size_t>(y) * width + x) * 3;
        o[0] = p[0], o[1] = p[1], o[2] = p[2];
      }
    }
    return out;
  }
  const Filter filter = filter_of(resampling);
  const std::vector<Taps> rows = resampling_taps(picture.height, height, filter);
  if (width == picture.width) return vertical_pass(picture, 0, rows);
  const std::vector<Taps> columns = resampling_taps(picture.width, width, filter);
  // The horizontal pass covers only the rows the vertical one reads.
  const int first_row = rows.front().first;
  const int last_row = rows.back().first + rows.back().count;
  const Picture wide = horizontal_pass(picture, first_row, last_row - first_row, columns);
  if (height == picture.height) return wide;
  return vertical_pass(wide, first_row, rows);
}

}  // namespace attnplay
