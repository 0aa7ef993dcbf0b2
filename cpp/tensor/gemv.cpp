// Implementation of tensor/gemv.h.
//
// Bᵀ stored [n, k] (nn.Linear, attention's q·Kᵀ): every output is a dot
// product along a stored row, read front to back (dot_rows). B stored [k, n]
// (GPT-2's Conv1D, attention's weights·V): 16 output columns stay in
// registers while every row of B is scaled by a value of A and added
// (axpy_columns).
// Sixteen-bit elements are widened eight at a time from one 16-byte load:
// a shift and a mask give elements 0 2 4 6 and 1 3 5 7 as two f32x4 lanes
// each. Against Bᵀ, A's row is put in that order once per call (each group of
// eight as its even then its odd elements); against B, the sums come out in
// that order and are interleaved once at the end.
#include "tensor/gemv.h"

#include <algorithm>
#include <array>
#include <vector>

#include "tensor/simd.h"
#include "tensor/thread_pool.h"

namespace attnplay::gemm {
namespace {

using namespace simd;

constexpr std::ptrdiff_t kAxpyColumns = 16;   // columns of B per pass
constexpr std::ptrdiff_t kDotRowsPerUnit = 4;  // rows of Bᵀ in the smallest share of a thread
constexpr std::ptrdiff_t kGroupsPerThread = 4;  // output groups per thread, to balance them

// How a kernel reads eight consecutive elements of B as two f32x4: float32
// in order (0 1 2 3, 4 5 6 7); 16-bit elements split (0 2 4 6, 1 3 5 7).
struct F32Stream : Widen<Element::f32> {  // Widen's eight: two loads
  static constexpr Element element = Element::f32;
  static constexpr bool split = false;
};

// Eight 16-bit elements from one 16-byte load, each in the top half of a
// lane (the bottom half zero): elements 0 2 4 6 in `even`, 1 3 5 7 in `odd`.
inline void top_halves(const unsigned char* p, u32x4& even, u32x4& odd) {
  const u32x4 v = load_bits(p);
  even = shift_left<16>(v);
  odd = and_u(v, splat_u(0xffff0000u));
}

struct Bf16Stream {  // a bfloat16 in a lane's top half is its float32
  static constexpr Element element = Element::bf16;
  static constexpr bool split = true;
  static void eight(const unsigned char* p, f32x4& even, f32x4& odd) {
    u32x4 even_bits, odd_bits;
    top_halves(p, even_bits, odd_bits);
    even = as_float(even_bits);
    odd = as_float(odd_bits);
  }
};

// IEEE half known to be finite. With the half in a lane's top 16 bits (sign
// at bit 31), a signed shift right by 3 puts exponent and mantissa at
// float32's positions and copies the sign into bits 30..28, which a mask
// clears: the float32 whose value is the half's times 2^-112 (a subnormal
// half gives a subnormal float), rescaled by 2^112 exactly. Infinities and
// NaNs would come out finite: weights holding any use F16Stream.
struct FiniteF16Stream {
  static constexpr Element element = Element::f16;
  static constexpr bool split = true;
  static f32x4 top_half_to_float(u32x4 t) {
    return multiply(as_float(and_u(shift_right_signed<3>(t), splat_u(0x8fffffffu))), splat(0x1p112f));
  }
  static void eight(const unsigned char* p, f32x4& even, f32x4& odd) {
    u32x4 even_bits, odd_bits;
    top_halves(p, even_bits, odd_bits);
    even = top_half_to_float(even_bits);
    odd = top_half_to_float(odd_bits);
  }
};

// Any IEEE half, infinities and NaNs included (half_to_float).
struct F16Stream {
  static constexpr Element element = Element::f16;
  static constexpr bool split = true;
  static void eight(const unsigned char* p, f32x4& even, f32x4& odd) {
    const u32x4 v = load_bits(p);
    even = half_to_float(and_u(v, splat_u(0xffffu)));
    odd = half_to_float(shift_right<16>(v));
  }
};

// Element p of a row of B, widened exactly (the tails past the last eight).
template <class S>
float one(const unsigned char* row, std::ptrdiff_t p) {
  return Widen<S::element>::one(row + p * Widen<S::element>::size);
}

// The operands of one product, as the kernels read them.
struct Operands {
  const float* x;           // A's rows, in the stream's order when it splits and B is Bᵀ
  std::ptrdiff_t ldx;       // floats between A's rows
  const unsigned char* b;   // B's first element
  std::ptrdiff_t row_bytes; // bytes between B's stored rows
  std::ptrdiff_t k;
  const float* bias;        // [n] or null
  float* c;
  std::ptrdiff_t ldc;
};

// Outputs [j, j + R) of M rows against Bᵀ: c[i][j] = Σ_p x_i[p]·B[j][p] (+ bias[j]).
// One long stored row at a time (R = 1), front to back: the weight streams
// from memory in address order, which the hardware prefetcher follows best
// (four long rows at a time, interleaved, read at half the speed here);
// sixteen elements per step into four accumulators. Short rows (a key of
// 64 or 128 values) four at a time (R = 4), eight elements per step into two
// accumulators each: the four sums leave through one 4x4 transpose, which
// costs less than four reductions.
template <class S, int M, int R>
void dot_block(const Operands& o, std::ptrdiff_t j) {
  constexpr std::ptrdiff_t size = Widen<S::element>::size;
  constexpr int A = R == 1 ? 4 : 2;  // accumulators per (row of A, row of B)
  constexpr std::ptrdiff_t step = 4 * A;
  const unsigned char* rows = o.b + j * o.row_bytes;
  f32x4 acc[M][R][A];
  for (int i = 0; i < M; ++i)
    for (int r = 0; r < R; ++r)
      for (int a = 0; a < A; ++a) acc[i][r][a] = zero();
  // Eight elements from p into accumulators a, a + 1 of every row.
  const auto eight = [&](std::ptrdiff_t p, int a) {
    for (int r = 0; r < R; ++r) {
      f32x4 w0, w1;
      S::eight(rows + r * o.row_bytes + p * size, w0, w1);
      for (int i = 0; i < M; ++i) {
        acc[i][r][a] = multiply_add(acc[i][r][a], load(o.x + i * o.ldx + p), w0);
        acc[i][r][a + 1] = multiply_add(acc[i][r][a + 1], load(o.x + i * o.ldx + p + 4), w1);
      }
    }
  };
  std::ptrdiff_t p = 0;
  for (; p + step <= o.k; p += step)
    for (int a = 0; a < A; a += 2) eight(p + 4 * a, a);
  for (; p + 8 <= o.k; p += 8) eight(p, 0);
  for (int i = 0; i < M; ++i) {
    f32x4 sums[R];
    for (int r = 0; r < R; ++r) {
      sums[r] = add(acc[i][r][0], acc[i][r][1]);
      if constexpr (A == 4) sums[r] = add(sums[r], add(acc[i][r][2], acc[i][r][3]));
    }
    float lanes[4];
    if constexpr (R == 4) {
      transpose(sums[0], sums[1], sums[2], sums[3]);  // lane r of sums[q]: lane q of row r's sums
      store(lanes, add(add(sums[0], sums[1]), add(sums[2], sums[3])));
    } else {
      store(lanes, sums[0]);
      lanes[0] = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    }
    const float* x = o.x + i * o.ldx;
    for (int r = 0; r < R; ++r) {
      float tail = 0.0f;
      for (std::ptrdiff_t q = p; q < o.k; ++q) tail += x[q] * one<S>(rows + r * o.row_bytes, q);
      o.c[i * o.ldc + j + r] = lanes[r] + tail + (o.bias ? o.bias[j + r] : 0.0f);
    }
  }
}

// Rows up to this many elements are short (dot_block reads them four at a time).
constexpr std::ptrdiff_t kShortRow = 256;

template <class S, int M>
void dot_rows(const Operands& o, std::ptrdiff_t j0, std::ptrdiff_t j1) {
  std::ptrdiff_t j = j0;
  if constexpr (M == 1)  // (two rows of A would need sixteen accumulators: more than there are registers)
    if (o.k <= kShortRow)
      for (; j + 4 <= j1; j += 4) dot_block<S, M, 4>(o, j);
  for (; j < j1; ++j) dot_block<S, M, 1>(o, j);
}

// Outputs [j0, j1) against B [k, n]: c[i][j] = Σ_p x_i[p]·B[p][j] (+ bias[j]).
template <class S, int M>
void axpy_columns(const Operands& o, std::ptrdiff_t j0, std::ptrdiff_t j1) {
  constexpr std::ptrdiff_t size = Widen<S::element>::size;
  std::ptrdiff_t j = j0;
  constexpr int A = M == 1 ? 2 : 1;  // accumulator sets, taking alternate rows of B: independent sums
  for (; j + kAxpyColumns <= j1; j += kAxpyColumns) {
    f32x4 acc[M][A][4];  // columns j..j+7 as two f32x4, then j+8..j+15 (split streams: even, odd)
    for (int i = 0; i < M; ++i)
      for (int a = 0; a < A; ++a)
        for (int q = 0; q < 4; ++q) acc[i][a][q] = zero();
    const unsigned char* row = o.b + j * size;
    // Row p of B, scaled by x_i[p], into accumulator set a.
    const auto add_row = [&](std::ptrdiff_t p, int a) {
      f32x4 w[4];
      S::eight(row + p * o.row_bytes, w[0], w[1]);
      S::eight(row + p * o.row_bytes + 8 * size, w[2], w[3]);
      for (int i = 0; i < M; ++i) {
        const f32x4 xp = broadcast(o.x + i * o.ldx + p);
        for (int q = 0; q < 4; ++q) acc[i][a][q] = multiply_add(acc[i][a][q], xp, w[q]);
      }
    };
    std::ptrdiff_t p = 0;
    for (; p + A <= o.k; p += A)
      for (int a = 0; a < A; ++a) add_row(p + a, a);
    for (; p < o.k; ++p) add_row(p, 0);
    for (int i = 0; i < M; ++i) {
      float* out = o.c + i * o.ldc + j;
      for (int half = 0; half < 2; ++half) {
        f32x4 first = acc[i][0][2 * half], second = acc[i][0][2 * half + 1];
        if constexpr (A == 2) {
          first = add(first, acc[i][1][2 * half]);
          second = add(second, acc[i][1][2 * half + 1]);
        }
        f32x4 lo = first, hi = second;
        if (S::split) interleave(first, second, lo, hi);
        if (o.bias) {
          lo = add(lo, load(o.bias + j + 8 * half));
          hi = add(hi, load(o.bias + j + 8 * half + 4));
        }
        store(out + 8 * half, lo);
        store(out + 8 * half + 4, hi);
      }
    }
  }
  for (; j < j1; ++j) {  // the last columns, one at a time
    for (int i = 0; i < M; ++i) {
      float sum = 0.0f;
      const unsigned char* column = o.b + j * size;
      for (std::ptrdiff_t p = 0; p < o.k; ++p) sum += o.x[i * o.ldx + p] * one<S>(column + p * o.row_bytes, 0);
      o.c[i * o.ldc + j] = sum + (o.bias ? o.bias[j] : 0.0f);
    }
  }
}

using Kernel = void (*)(const Operands&, std::ptrdiff_t, std::ptrdiff_t);

template <class S>
Kernel kernel_of(RightOperand layout, std::ptrdiff_t m) {
  if (layout == RightOperand::n_by_k) return m == 1 ? dot_rows<S, 1> : dot_rows<S, 2>;
  return m == 1 ? axpy_columns<S, 1> : axpy_columns<S, 2>;
}

// A's rows [m, k] in the split order: each group of eight as its even then
// its odd elements; the last k % 8 as they are.
void split_rows(std::ptrdiff_t m, std::ptrdiff_t k, ConstView a, float* out) {
  const std::ptrdiff_t k8 = k / 8 * 8;
  for (std::ptrdiff_t i = 0; i < m; ++i, out += k) {
    const float* row = a.data + i * a.stride;
    for (std::ptrdiff_t p = 0; p < k8; p += 8) {
      const f32x4 lo = load(row + p), hi = load(row + p + 4);
      store(out + p, even_lanes(lo, hi));
      store(out + p + 4, odd_lanes(lo, hi));
    }
    std::copy(row + k8, row + k, out + k8);
  }
}

// The products (1 to kTogetherProducts) in one pass: shared out among the threads when `shared` and big enough.
void run_vectors(std::ptrdiff_t m, std::ptrdiff_t k, ConstView a, const VectorProduct* products, std::size_t count,
                 bool shared) {
  struct Share {  // one product as the threads see it: its kernel, operands and output groups
    Kernel kernel;
    Operands o;
    std::ptrdiff_t n, unit, first_unit, units;
  };
  std::array<Share, kTogetherProducts> shares{};
  thread_local std::vector<float> split_input;  // A in the split order; kept between calls (no allocation per step)
  bool input_split = false;
  std::ptrdiff_t total_units = 0, work = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const VectorProduct& p = products[i];
    Share& share = shares[i];
    bool split = true;
    switch (p.b.element) {
      case Element::f32:
        share.kernel = kernel_of<F32Stream>(p.layout, m);
        split = false;
        break;
      case Element::bf16: share.kernel = kernel_of<Bf16Stream>(p.layout, m); break;
      case Element::f16:
        share.kernel = p.b.known_finite ? kernel_of<FiniteF16Stream>(p.layout, m) : kernel_of<F16Stream>(p.layout, m);
        break;
    }
    const std::ptrdiff_t element_size = p.b.element == Element::f32 ? 4 : 2;
    share.o = {a.data, a.stride, static_cast<const unsigned char*>(p.b.data), p.b.stride * element_size, k, p.bias, p.c, p.ldc};
    if (split && p.layout == RightOperand::n_by_k) {
      if (!input_split) {
        if (split_input.size() < static_cast<std::size_t>(m * k)) split_input.resize(static_cast<std::size_t>(m * k));
        split_rows(m, k, a, split_input.data());
        input_split = true;
      }
      share.o.x = split_input.data();
      share.o.ldx = k;
    }
    share.n = p.n;
    share.unit = p.layout == RightOperand::n_by_k ? kDotRowsPerUnit : kAxpyColumns;
    share.units = (p.n + share.unit - 1) / share.unit;
    share.first_unit = total_units;
    total_units += share.units;
    work += m * p.n * k;
  }
  const std::ptrdiff_t tasks =
      !shared || work < kSharedWork ? 1 : std::min<std::ptrdiff_t>(total_units, kGroupsPerThread * threads::concurrency());
  const auto task = [&](std::ptrdiff_t t) {
    const std::ptrdiff_t u0 = total_units * t / tasks, u1 = total_units * (t + 1) / tasks;  // this task's output groups
    for (std::size_t i = 0; i < count; ++i) {
      const Share& share = shares[i];
      const std::ptrdiff_t from = std::max(u0, share.first_unit) - share.first_unit;
      const std::ptrdiff_t to = std::min(u1, share.first_unit + share.units) - share.first_unit;
      if (from < to) share.kernel(share.o, from * share.unit, std::min(share.n, to * share.unit));
    }
  };
  if (tasks == 1) {
    task(0);  // here: no dispatch (and callable inside a parallel_for body)
  } else {
    threads::parallel_for(tasks, task);
  }
}

}  // namespace

void multiply_vectors(std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k, ConstView a, WeightView b,
                      RightOperand layout, const float* bias, float* c, std::ptrdiff_t ldc) {
  const VectorProduct product{n, b, layout, bias, c, ldc};
  multiply_vectors(m, k, a, &product, 1);
}

void multiply_vectors_on_this_thread(std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k, ConstView a, WeightView b,
                                     RightOperand layout, const float* bias, float* c, std::ptrdiff_t ldc) {
  const VectorProduct product{n, b, layout, bias, c, ldc};
  run_vectors(m, k, a, &product, 1, false);
}

void multiply_vectors(std::ptrdiff_t m, std::ptrdiff_t k, ConstView a, const VectorProduct* products, std::size_t count) {
  run_vectors(m, k, a, products, count, true);
}

}  // namespace attnplay::gemm
