// Implementation of tensor/gemm.h.
//
// Layout of the work: the output is cut into tasks of one column tile (kNc
// columns) by a group of rows. A task walks k in blocks of kKc; for each block
// it packs its columns of op(B) into panels of kNr = 8 columns (panel q holds,
// for every k, its 8 values side by side, widened to float32; columns past n
// are zero; kKc x kNc floats, stays in L2), then for every 4-row strip of its
// rows packs A (4 x kKc floats, stays in L1) and runs the 4x8 microkernel over
// the panels. Row groups are as few as keep every thread busy, so B is packed
// about once per call and no float32 copy of it exists beyond one block;
// unless B was packed ahead (PackedOperand: every block's panels, kept, in
// the same layout), and then tasks read its panels instead of packing.
// One or two rows of A (decoding) skip the packing: gemv.cpp reads B in place.
// Every output element is summed in the same order whatever the split, so
// results are identical with any number of threads. The 4x8 tile
// (8 accumulators + 2 B vectors + 1 broadcast A) fits the 16 SIMD registers V8
// uses on x86-64; a 6x8 tile spills.
#include "tensor/gemm.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include "tensor/gemv.h"
#include "tensor/simd.h"
#include "tensor/thread_pool.h"

namespace attnplay::gemm {
namespace {

constexpr std::ptrdiff_t kMr = 4;    // rows of the register tile
constexpr std::ptrdiff_t kNr = 8;    // columns of the register tile (= panel width)
constexpr std::ptrdiff_t kKc = 256;  // depth of one k block
constexpr std::ptrdiff_t kNc = 128;  // columns of one task (multiple of kNr)
constexpr std::ptrdiff_t kTasksPerThread = 4;  // enough tasks to balance the threads

using namespace simd;

// Packs rows [p0, p0 + kc) of columns [j0, j0 + kNr) of op(B) into panel
// (kc x kNr floats), widened; columns at or past n are zero.
template <Element E>
void pack_panel(const WeightView& b, RightOperand layout, std::ptrdiff_t p0, std::ptrdiff_t kc, std::ptrdiff_t n,
                std::ptrdiff_t j0, float* panel) {
  using W = Widen<E>;
  const std::ptrdiff_t width = std::min(kNr, n - j0);
  if (layout == RightOperand::k_by_n) {
    for (std::ptrdiff_t p = 0; p < kc; ++p, panel += kNr) {
      const unsigned char* src = at<E>(b, p0 + p, j0);
      if (width == kNr) {
        f32x4 lo, hi;
        W::eight(src, lo, hi);
        store(panel, lo);
        store(panel + 4, hi);
      } else {
        std::ptrdiff_t j = 0;
        for (; j < width; ++j) panel[j] = W::one(src + j * W::size);
        for (; j < kNr; ++j) panel[j] = 0.0f;
      }
    }
    return;
  }
  // op(B)(p, j) = b(j, p): panel column j is row j0 + j of b.
  if (width == kNr) {
    // Four k values of each of the 8 rows, widened, then 4x4 transposes in
    // registers give 4 panel rows (scalar gathers made packing the transposed
    // operand several times slower than the plain one).
    const unsigned char* rows[kNr];
    for (std::ptrdiff_t j = 0; j < kNr; ++j) rows[j] = at<E>(b, j0 + j, p0);
    std::ptrdiff_t p = 0;
    for (; p + 4 <= kc; p += 4, panel += 4 * kNr) {
      for (int half = 0; half < 2; ++half) {  // panel columns 0..3, then 4..7
        const unsigned char* const* r = rows + 4 * half;
        const std::ptrdiff_t offset = p * W::size;
        f32x4 a0 = W::four(r[0] + offset), a1 = W::four(r[1] + offset);
        f32x4 a2 = W::four(r[2] + offset), a3 = W::four(r[3] + offset);
        transpose(a0, a1, a2, a3);
        store(panel + 0 * kNr + 4 * half, a0);
        store(panel + 1 * kNr + 4 * half, a1);
        store(panel + 2 * kNr + 4 * half, a2);
        store(panel + 3 * kNr + 4 * half, a3);
      }
    }
    for (; p < kc; ++p, panel += kNr)
      for (std::ptrdiff_t j = 0; j < kNr; ++j) panel[j] = W::one(rows[j] + p * W::size);
    return;
  }
  for (std::ptrdiff_t j = 0; j < kNr; ++j) {
    if (j < width) {
      const unsigned char* src = at<E>(b, j0 + j, p0);
      for (std::ptrdiff_t p = 0; p < kc; ++p) panel[p * kNr + j] = W::one(src + p * W::size);
    } else {
      for (std::ptrdiff_t p = 0; p < kc; ++p) panel[p * kNr + j] = 0.0f;
    }
  }
}

// Packs rows [0, rows) x columns [0, kc) of A into strip, column by column
// (strip[p * rows + r] = a(r, p)), so the microkernel reads it in order. A
// full strip moves four columns at a time through a 4x4 transpose in
// registers (one float at a time, at a stride, it cost about as much as
// packing B).
void pack_strip(const float* a, std::ptrdiff_t lda, std::ptrdiff_t rows, std::ptrdiff_t kc, float* strip) {
  std::ptrdiff_t p = 0;
  if (rows == kMr) {
    for (; p + 4 <= kc; p += 4) {
      f32x4 r0 = load(a + p), r1 = load(a + lda + p), r2 = load(a + 2 * lda + p), r3 = load(a + 3 * lda + p);
      transpose(r0, r1, r2, r3);
      store(strip + p * kMr, r0);
      store(strip + p * kMr + 4, r1);
      store(strip + p * kMr + 8, r2);
      store(strip + p * kMr + 12, r3);
    }
  }
  for (; p < kc; ++p)
    for (std::ptrdiff_t r = 0; r < rows; ++r) strip[p * rows + r] = a[r * lda + p];
}

// How a microkernel writes its 4x8 result into C.
enum class Store { overwrite, overwrite_with_bias, accumulate };

// C[0..Rows, 0..width) (=, = bias +, +=) A[0..Rows, 0..kc) · panel[0..kc, 0..8).
// Rows is 1..4 (4 except at the bottom edge); width is 1..8.
template <int Rows>
void microkernel(std::ptrdiff_t kc, const float* strip, const float* panel, float* c,
                 std::ptrdiff_t ldc, std::ptrdiff_t width, Store mode, const float* bias) {
  f32x4 acc[Rows][2];
  for (int r = 0; r < Rows; ++r) acc[r][0] = acc[r][1] = zero();
  for (std::ptrdiff_t p = 0; p < kc; ++p, panel += kNr, strip += Rows) {
    const f32x4 b0 = load(panel);
    const f32x4 b1 = load(panel + 4);
    for (int r = 0; r < Rows; ++r) {
      const f32x4 ar = broadcast(strip + r);
      acc[r][0] = multiply_add(acc[r][0], ar, b0);
      acc[r][1] = multiply_add(acc[r][1], ar, b1);
    }
  }
  for (int r = 0; r < Rows; ++r) {
    float* out = c + r * ldc;
    if (width == kNr) {
      if (mode == Store::accumulate) {
        acc[r][0] = add(acc[r][0], load(out));
        acc[r][1] = add(acc[r][1], load(out + 4));
      } else if (mode == Store::overwrite_with_bias) {
        acc[r][0] = add(acc[r][0], load(bias));
        acc[r][1] = add(acc[r][1], load(bias + 4));
      }
      store(out, acc[r][0]);
      store(out + 4, acc[r][1]);
    } else {
      float row[kNr];
      store(row, acc[r][0]);
      store(row + 4, acc[r][1]);
      for (std::ptrdiff_t j = 0; j < width; ++j) {
        out[j] = mode == Store::accumulate            ? out[j] + row[j]
                 : mode == Store::overwrite_with_bias ? row[j] + bias[j]
                                                      : row[j];
      }
    }
  }
}

struct Problem {
  std::ptrdiff_t m, n, k;
  ConstView a;
  WeightView b;
  RightOperand layout;
  const float* bias;
  float* c;
  std::ptrdiff_t ldc;
  const float* packed = nullptr;  // op(B)'s panels packed ahead (PackedOperand), or null: pack per task
  std::ptrdiff_t packed_n = 0;    // n rounded up to kNr: floats per k in `packed`
};

// pack_panel for one element type.
using PackPanel = void (*)(const WeightView&, RightOperand, std::ptrdiff_t, std::ptrdiff_t, std::ptrdiff_t,
                           std::ptrdiff_t, float*);

PackPanel pack_panel_for(Element element) {
  switch (element) {
    case Element::f16: return pack_panel<Element::f16>;
    case Element::bf16: return pack_panel<Element::bf16>;
    case Element::f32: break;
  }
  return pack_panel<Element::f32>;
}

// Computes output rows [i0, i1) x columns [j0, j1) (j0 a multiple of kNr,
// j1 - j0 <= kNc). Without prepacked panels, block (kKc x kNc floats) holds
// the panels this task packs; with them, it is not used. One function for
// every element type (only the packing differs; it is called through a
// pointer, once per panel): the page downloads every byte of this code.
void compute_task(const Problem& w, std::ptrdiff_t i0, std::ptrdiff_t i1, std::ptrdiff_t j0, std::ptrdiff_t j1,
                  float* block) {
  const PackPanel pack = pack_panel_for(w.b.element);
  float strip[kMr * kKc];
  for (std::ptrdiff_t p0 = 0; p0 < w.k; p0 += kKc) {
    const std::ptrdiff_t kc = std::min(kKc, w.k - p0);
    const float* panels = block;  // panel j at (j - j0) * kc
    if (w.packed) {
      panels = w.packed + p0 * w.packed_n + j0 * kc;
    } else {
      for (std::ptrdiff_t j = j0; j < j1; j += kNr) pack(w.b, w.layout, p0, kc, w.n, j, block + (j - j0) * kc);
    }
    const Store mode = p0 > 0 ? Store::accumulate : w.bias ? Store::overwrite_with_bias : Store::overwrite;
    for (std::ptrdiff_t i = i0; i < i1; i += kMr) {
      const std::ptrdiff_t rows = std::min(kMr, i1 - i);
      pack_strip(w.a.data + i * w.a.stride + p0, w.a.stride, rows, kc, strip);
      for (std::ptrdiff_t j = j0; j < j1; j += kNr) {
        const float* panel = panels + (j - j0) * kc;
        float* c = w.c + i * w.ldc + j;
        const std::ptrdiff_t width = std::min(kNr, j1 - j);
        const float* bias = w.bias ? w.bias + j : nullptr;
        switch (rows) {
          case 4: microkernel<4>(kc, strip, panel, c, w.ldc, width, mode, bias); break;
          case 3: microkernel<3>(kc, strip, panel, c, w.ldc, width, mode, bias); break;
          case 2: microkernel<2>(kc, strip, panel, c, w.ldc, width, mode, bias); break;
          default: microkernel<1>(kc, strip, panel, c, w.ldc, width, mode, bias); break;
        }
      }
    }
  }
}

template <Element E>
void widen_as(const unsigned char* p, std::ptrdiff_t count, float* out) {
  using W = Widen<E>;
  std::ptrdiff_t i = 0;
  for (; i + 8 <= count; i += 8) {
    f32x4 lo, hi;
    W::eight(p + i * W::size, lo, hi);
    store(out + i, lo);
    store(out + i + 4, hi);
  }
  for (; i < count; ++i) out[i] = W::one(p + i * W::size);
}

// Runs a whole product: decoding rows read B in place (gemv.cpp); otherwise output
// tiles, each packing its panels of op(B) unless they were packed ahead.
void run(const Problem& work) {
  const std::ptrdiff_t m = work.m, n = work.n, k = work.k;
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (std::ptrdiff_t i = 0; i < m; ++i)
      for (std::ptrdiff_t j = 0; j < n; ++j) work.c[i * work.ldc + j] = work.bias ? work.bias[j] : 0.0f;
    return;
  }
  if (m <= kVectorRows) {  // decoding: B read in place (gemv.cpp)
    multiply_vectors(m, n, k, work.a, work.b, work.layout, work.bias, work.c, work.ldc);
    return;
  }
  const std::ptrdiff_t col_tiles = (n + kNc - 1) / kNc;
  // Tasks: column tiles x row groups (whole strips), as few groups as give
  // every thread kTasksPerThread tasks.
  const std::ptrdiff_t strips = (m + kMr - 1) / kMr;
  const std::ptrdiff_t wanted = kTasksPerThread * threads::concurrency();
  const std::ptrdiff_t groups = std::min(strips, std::max<std::ptrdiff_t>(1, (wanted + col_tiles - 1) / col_tiles));
  const std::ptrdiff_t group_rows = ((strips + groups - 1) / groups) * kMr;
  const std::ptrdiff_t row_groups = (m + group_rows - 1) / group_rows;

  threads::parallel_for(row_groups * col_tiles, [&](std::ptrdiff_t t) {
    const std::ptrdiff_t i0 = (t / col_tiles) * group_rows;
    const std::ptrdiff_t j0 = (t % col_tiles) * kNc;
    const std::ptrdiff_t i1 = std::min(m, i0 + group_rows), j1 = std::min(n, j0 + kNc);
    const std::unique_ptr<float[]> block(work.packed ? nullptr : new float[static_cast<std::size_t>(kKc * kNc)]);
    compute_task(work, i0, i1, j0, j1, block.get());
  });
}

std::ptrdiff_t padded_columns(std::ptrdiff_t n) { return (n + kNr - 1) / kNr * kNr; }

}  // namespace

void multiply(std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k, ConstView a, WeightView b, RightOperand layout,
              const float* bias, float* c, std::ptrdiff_t ldc) {
  run(Problem{m, n, k, a, b, layout, bias, c, ldc});
}

std::size_t PackedOperand::bytes_for(std::ptrdiff_t n, std::ptrdiff_t k) {
  return static_cast<std::size_t>(std::max<std::ptrdiff_t>(k, 0) * padded_columns(std::max<std::ptrdiff_t>(n, 0))) *
         sizeof(float);
}

PackedOperand::PackedOperand(std::ptrdiff_t n, std::ptrdiff_t k, WeightView b, RightOperand layout)
    : n_(std::max<std::ptrdiff_t>(n, 0)), k_(std::max<std::ptrdiff_t>(k, 0)), b_(b), layout_(layout),
      panels_(new float[bytes_for(n_, k_) / sizeof(float) + 1]) {
  const std::ptrdiff_t packed_n = padded_columns(n_);
  const PackPanel pack = pack_panel_for(b.element);
  for (std::ptrdiff_t p0 = 0; p0 < k_; p0 += kKc) {
    const std::ptrdiff_t kc = std::min(kKc, k_ - p0);
    float* block = panels_.get() + p0 * packed_n;
    for (std::ptrdiff_t j = 0; j < n_; j += kNr) pack(b, layout, p0, kc, n_, j, block + j * kc);
  }
}

void multiply(std::ptrdiff_t m, ConstView a, const PackedOperand& b, const float* bias, float* c, std::ptrdiff_t ldc) {
  Problem work{m, b.n_, b.k_, a, b.b_, b.layout_, bias, c, ldc};
  work.packed = b.panels_.get();
  work.packed_n = padded_columns(b.n_);
  run(work);
}

void widen(Element element, const void* data, std::ptrdiff_t count, float* out) {
  const auto* p = static_cast<const unsigned char*>(data);
  switch (element) {
    case Element::f32: widen_as<Element::f32>(p, count, out); break;
    case Element::f16: widen_as<Element::f16>(p, count, out); break;
    case Element::bf16: widen_as<Element::bf16>(p, count, out); break;
  }
}

bool holds_only_finite(Element element, const void* data, std::ptrdiff_t count) {
  if (element != Element::f16) return true;  // float32 and bfloat16: exact widening either way
  const auto* p = static_cast<const unsigned char*>(data);
  bool any = false;  // no early exit: the loop vectorizes
  for (std::ptrdiff_t i = 0; i < count; ++i) {
    std::uint16_t h;
    std::memcpy(&h, p + 2 * i, sizeof h);
    any |= (h & 0x7c00u) == 0x7c00u;  // exponent 31: an infinity or a NaN
  }
  return !any;
}

}  // namespace attnplay::gemm
