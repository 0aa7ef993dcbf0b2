// Implementation of tensor/gemm.h.
//
// Layout of the work: B is packed once per call into panels of kNr = 8
// columns (panel p holds, for every k, its 8 values side by side; columns past
// n are zero). The output is cut into tiles of kMc rows x kNc columns; a tile
// walks k in blocks of kKc, packs every 4-row strip of A (4 x kKc floats,
// stays in L1) and runs the 4x8 microkernel over the tile's panels (kKc x kNc
// of packed B, stays in L2). Tiles are independent, so the thread pool runs them
// in parallel. The 4x8 tile (8 accumulators + 2 B vectors + 1 broadcast A)
// fits the 16 SIMD registers V8 uses on x86-64; a 6x8 tile spills.
#include "tensor/gemm.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "tensor/thread_pool.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

namespace attnplay::gemm {
namespace {

constexpr std::ptrdiff_t kMr = 4;    // rows of the register tile
constexpr std::ptrdiff_t kNr = 8;    // columns of the register tile (= panel width)
constexpr std::ptrdiff_t kKc = 256;  // depth of one k block
constexpr std::ptrdiff_t kMc = 64;   // rows of one output tile
constexpr std::ptrdiff_t kNc = 128;  // columns of one output tile (multiple of kNr)

// Four float lanes: wasm_simd128.h intrinsics in WebAssembly, GCC/Clang vector
// extensions natively (SSE/AVX code from the same source).
#ifdef __wasm_simd128__
using f32x4 = v128_t;
inline f32x4 zero() { return wasm_f32x4_splat(0.0f); }
inline f32x4 load(const float* p) { return wasm_v128_load(p); }
inline f32x4 broadcast(const float* p) { return wasm_v128_load32_splat(p); }
inline void store(float* p, f32x4 v) { wasm_v128_store(p, v); }
inline f32x4 multiply_add(f32x4 acc, f32x4 a, f32x4 b) { return wasm_f32x4_add(acc, wasm_f32x4_mul(a, b)); }
inline f32x4 add(f32x4 a, f32x4 b) { return wasm_f32x4_add(a, b); }
#else
typedef float f32x4 __attribute__((vector_size(16)));
inline f32x4 zero() { return f32x4{0.0f, 0.0f, 0.0f, 0.0f}; }
inline f32x4 load(const float* p) {
  f32x4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline f32x4 broadcast(const float* p) { return f32x4{*p, *p, *p, *p}; }
inline void store(float* p, f32x4 v) { std::memcpy(p, &v, sizeof v); }
inline f32x4 multiply_add(f32x4 acc, f32x4 a, f32x4 b) { return acc + a * b; }
inline f32x4 add(f32x4 a, f32x4 b) { return a + b; }
#endif

#ifdef __wasm_simd128__
// A full panel of op(B) = Bᵀ: columns j0..j0+7 of op(B) are rows of B, so 4 x 4
// blocks of them are transposed in registers (shuffles) and stored as 4 panel
// rows; scalar gathers made packing the transposed operand (the unembedding of
// the LM head, K in Q·Kᵀ) several times slower than the plain one.
void pack_transposed_panel(ConstView b, std::ptrdiff_t k, std::ptrdiff_t j0, float* panel) {
  const float* rows[kNr];
  for (std::ptrdiff_t j = 0; j < kNr; ++j) rows[j] = b.data + (j0 + j) * b.stride;
  std::ptrdiff_t p = 0;
  for (; p + 4 <= k; p += 4, panel += 4 * kNr) {
    for (int half = 0; half < 2; ++half) {  // panel columns 0..3, then 4..7
      const float* const* r = rows + 4 * half;
      const v128_t a0 = wasm_v128_load(r[0] + p), a1 = wasm_v128_load(r[1] + p);
      const v128_t a2 = wasm_v128_load(r[2] + p), a3 = wasm_v128_load(r[3] + p);
      const v128_t lo01 = wasm_i32x4_shuffle(a0, a1, 0, 4, 1, 5);  // a0[0] a1[0] a0[1] a1[1]
      const v128_t lo23 = wasm_i32x4_shuffle(a2, a3, 0, 4, 1, 5);
      const v128_t hi01 = wasm_i32x4_shuffle(a0, a1, 2, 6, 3, 7);  // a0[2] a1[2] a0[3] a1[3]
      const v128_t hi23 = wasm_i32x4_shuffle(a2, a3, 2, 6, 3, 7);
      wasm_v128_store(panel + 0 * kNr + 4 * half, wasm_i32x4_shuffle(lo01, lo23, 0, 1, 4, 5));  // a0[0] a1[0] a2[0] a3[0]
      wasm_v128_store(panel + 1 * kNr + 4 * half, wasm_i32x4_shuffle(lo01, lo23, 2, 3, 6, 7));
      wasm_v128_store(panel + 2 * kNr + 4 * half, wasm_i32x4_shuffle(hi01, hi23, 0, 1, 4, 5));
      wasm_v128_store(panel + 3 * kNr + 4 * half, wasm_i32x4_shuffle(hi01, hi23, 2, 3, 6, 7));
    }
  }
  for (; p < k; ++p, panel += kNr)
    for (std::ptrdiff_t j = 0; j < kNr; ++j) panel[j] = rows[j][p];
}
#endif

// Packs columns [j0, j0 + kNr) of op(B), rows [0, k), into panel (k x kNr).
void pack_panel(ConstView b, RightOperand layout, std::ptrdiff_t k, std::ptrdiff_t n, std::ptrdiff_t j0,
                float* panel) {
  const std::ptrdiff_t width = std::min(kNr, n - j0);
  if (layout == RightOperand::k_by_n) {
    const float* src = b.data + j0;
    if (width == kNr) {
      for (std::ptrdiff_t p = 0; p < k; ++p, src += b.stride, panel += kNr) {
        store(panel, load(src));
        store(panel + 4, load(src + 4));
      }
    } else {
      for (std::ptrdiff_t p = 0; p < k; ++p, src += b.stride, panel += kNr) {
        std::ptrdiff_t j = 0;
        for (; j < width; ++j) panel[j] = src[j];
        for (; j < kNr; ++j) panel[j] = 0.0f;
      }
    }
  } else {  // op(B)(p, j) = b(j, p): gather column j of the panel from row j0 + j
#ifdef __wasm_simd128__
    if (width == kNr) {
      pack_transposed_panel(b, k, j0, panel);
      return;
    }
#endif
    for (std::ptrdiff_t j = 0; j < kNr; ++j) {
      if (j < width) {
        const float* src = b.data + (j0 + j) * b.stride;
        for (std::ptrdiff_t p = 0; p < k; ++p) panel[p * kNr + j] = src[p];
      } else {
        for (std::ptrdiff_t p = 0; p < k; ++p) panel[p * kNr + j] = 0.0f;
      }
    }
  }
}

// Packs rows [0, rows) x columns [0, kc) of A into strip, column by column
// (strip[p * rows + r] = a(r, p)), so the microkernel reads it in order.
void pack_strip(const float* a, std::ptrdiff_t lda, std::ptrdiff_t rows, std::ptrdiff_t kc, float* strip) {
  for (std::ptrdiff_t r = 0; r < rows; ++r)
    for (std::ptrdiff_t p = 0; p < kc; ++p) strip[p * rows + r] = a[r * lda + p];
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
  const float* packed;  // ceil(n / kNr) panels of k x kNr
  const float* bias;
  float* c;
  std::ptrdiff_t ldc;
};

// Computes output rows [i0, i1) x columns [j0, j1) (j0 a multiple of kNr).
void compute_tile(const Problem& w, std::ptrdiff_t i0, std::ptrdiff_t i1, std::ptrdiff_t j0, std::ptrdiff_t j1) {
  float strip[kMr * kKc];
  for (std::ptrdiff_t p0 = 0; p0 < w.k; p0 += kKc) {
    const std::ptrdiff_t kc = std::min(kKc, w.k - p0);
    const Store mode = p0 > 0 ? Store::accumulate : w.bias ? Store::overwrite_with_bias : Store::overwrite;
    for (std::ptrdiff_t i = i0; i < i1; i += kMr) {
      const std::ptrdiff_t rows = std::min(kMr, i1 - i);
      pack_strip(w.a.data + i * w.a.stride + p0, w.a.stride, rows, kc, strip);
      for (std::ptrdiff_t j = j0; j < j1; j += kNr) {
        const float* panel = w.packed + (j / kNr) * (w.k * kNr) + p0 * kNr;
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

}  // namespace

void multiply(std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k, ConstView a, ConstView b, RightOperand layout,
              const float* bias, float* c, std::ptrdiff_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    for (std::ptrdiff_t i = 0; i < m; ++i)
      for (std::ptrdiff_t j = 0; j < n; ++j) c[i * ldc + j] = bias ? bias[j] : 0.0f;
    return;
  }
  const std::ptrdiff_t panels = (n + kNr - 1) / kNr;
  const std::unique_ptr<float[]> packed(new float[static_cast<std::size_t>(panels * k * kNr)]);
  for (std::ptrdiff_t p = 0; p < panels; ++p) pack_panel(b, layout, k, n, p * kNr, packed.get() + p * k * kNr);

  const Problem work{m, n, k, a, packed.get(), bias, c, ldc};
  const std::ptrdiff_t row_tiles = (m + kMc - 1) / kMc;
  const std::ptrdiff_t col_tiles = (n + kNc - 1) / kNc;
  threads::parallel_for(row_tiles * col_tiles, [&](std::ptrdiff_t t) {
    const std::ptrdiff_t i0 = (t / col_tiles) * kMc;
    const std::ptrdiff_t j0 = (t % col_tiles) * kNc;
    compute_tile(work, i0, std::min(m, i0 + kMc), j0, std::min(n, j0 + kNc));
  });
}

}  // namespace attnplay::gemm
