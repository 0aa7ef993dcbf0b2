// The SIMD vocabulary the matrix kernels (gemm.cpp, gemv.cpp) are written
// in: four float lanes (f32x4) and four 32-bit integer lanes (u32x4), as
// wasm_simd128.h intrinsics in WebAssembly and GCC/Clang vector extensions
// natively (SSE/AVX code from the same source, so the native suites test the
// same arithmetic), and the exact widening of IEEE half and bfloat16 elements
// to float32.
// Not here: any kernel (gemm.cpp, gemv.cpp); the public API (gemm.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tensor/gemm.h"

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

namespace attnplay::gemm::simd {

#ifdef __wasm_simd128__
using f32x4 = v128_t;
using u32x4 = v128_t;
inline f32x4 zero() { return wasm_f32x4_splat(0.0f); }
inline f32x4 load(const float* p) { return wasm_v128_load(p); }
inline f32x4 broadcast(const float* p) { return wasm_v128_load32_splat(p); }
inline void store(float* p, f32x4 v) { wasm_v128_store(p, v); }
inline f32x4 multiply_add(f32x4 acc, f32x4 a, f32x4 b) { return wasm_f32x4_add(acc, wasm_f32x4_mul(a, b)); }
inline f32x4 add(f32x4 a, f32x4 b) { return wasm_f32x4_add(a, b); }
inline float first_lane(f32x4 v) { return wasm_f32x4_extract_lane(v, 0); }
// 4x4 transpose: rows a0..a3 become columns.
inline void transpose(f32x4& a0, f32x4& a1, f32x4& a2, f32x4& a3) {
  const v128_t lo01 = wasm_i32x4_shuffle(a0, a1, 0, 4, 1, 5);  // a0[0] a1[0] a0[1] a1[1]
  const v128_t lo23 = wasm_i32x4_shuffle(a2, a3, 0, 4, 1, 5);
  const v128_t hi01 = wasm_i32x4_shuffle(a0, a1, 2, 6, 3, 7);  // a0[2] a1[2] a0[3] a1[3]
  const v128_t hi23 = wasm_i32x4_shuffle(a2, a3, 2, 6, 3, 7);
  a0 = wasm_i32x4_shuffle(lo01, lo23, 0, 1, 4, 5);  // a0[0] a1[0] a2[0] a3[0]
  a1 = wasm_i32x4_shuffle(lo01, lo23, 2, 3, 6, 7);
  a2 = wasm_i32x4_shuffle(hi01, hi23, 0, 1, 4, 5);
  a3 = wasm_i32x4_shuffle(hi01, hi23, 2, 3, 6, 7);
}
inline u32x4 splat_u(std::uint32_t x) { return wasm_i32x4_splat(static_cast<std::int32_t>(x)); }
inline u32x4 and_u(u32x4 a, u32x4 b) { return wasm_v128_and(a, b); }
inline u32x4 or_u(u32x4 a, u32x4 b) { return wasm_v128_or(a, b); }
inline u32x4 add_u(u32x4 a, u32x4 b) { return wasm_i32x4_add(a, b); }
inline u32x4 equal_u(u32x4 a, u32x4 b) { return wasm_i32x4_eq(a, b); }
template <int Bits>
inline u32x4 shift_left(u32x4 a) { return wasm_i32x4_shl(a, Bits); }
inline u32x4 select(u32x4 mask, u32x4 if_set, u32x4 if_clear) { return wasm_v128_bitselect(if_set, if_clear, mask); }
inline f32x4 as_float(u32x4 v) { return v; }
inline u32x4 as_bits(f32x4 v) { return v; }
inline f32x4 subtract(f32x4 a, f32x4 b) { return wasm_f32x4_sub(a, b); }
// Eight consecutive 16-bit elements as two u32x4 (lanes 0..3, 4..7).
inline void load_u16x8(const unsigned char* p, u32x4& lo, u32x4& hi) {
  const v128_t v = wasm_v128_load(p);
  lo = wasm_u32x4_extend_low_u16x8(v);
  hi = wasm_u32x4_extend_high_u16x8(v);
}
inline u32x4 load_u16x4(const unsigned char* p) { return wasm_u32x4_extend_low_u16x8(wasm_v128_load64_zero(p)); }
inline f32x4 splat(float x) { return wasm_f32x4_splat(x); }
inline f32x4 multiply(f32x4 a, f32x4 b) { return wasm_f32x4_mul(a, b); }
// 16 bytes as they lie (eight 16-bit elements: element 2i in the low half of lane i).
inline u32x4 load_bits(const unsigned char* p) { return wasm_v128_load(p); }
template <int Bits>
inline u32x4 shift_right(u32x4 a) { return wasm_u32x4_shr(a, Bits); }
template <int Bits>
inline u32x4 shift_right_signed(u32x4 a) { return wasm_i32x4_shr(a, Bits); }
// Lanes 0, 2 of a then of b; lanes 1, 3 of a then of b.
inline f32x4 even_lanes(f32x4 a, f32x4 b) { return wasm_i32x4_shuffle(a, b, 0, 2, 4, 6); }
inline f32x4 odd_lanes(f32x4 a, f32x4 b) { return wasm_i32x4_shuffle(a, b, 1, 3, 5, 7); }
// even[0] odd[0] even[1] odd[1] and even[2] odd[2] even[3] odd[3].
inline void interleave(f32x4 even, f32x4 odd, f32x4& lo, f32x4& hi) {
  lo = wasm_i32x4_shuffle(even, odd, 0, 4, 1, 5);
  hi = wasm_i32x4_shuffle(even, odd, 2, 6, 3, 7);
}
#else
typedef float f32x4 __attribute__((vector_size(16)));
typedef std::uint32_t u32x4 __attribute__((vector_size(16)));
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
inline float first_lane(f32x4 v) { return v[0]; }
inline void transpose(f32x4& a0, f32x4& a1, f32x4& a2, f32x4& a3) {
  const f32x4 lo01 = __builtin_shufflevector(a0, a1, 0, 4, 1, 5);
  const f32x4 lo23 = __builtin_shufflevector(a2, a3, 0, 4, 1, 5);
  const f32x4 hi01 = __builtin_shufflevector(a0, a1, 2, 6, 3, 7);
  const f32x4 hi23 = __builtin_shufflevector(a2, a3, 2, 6, 3, 7);
  a0 = __builtin_shufflevector(lo01, lo23, 0, 1, 4, 5);
  a1 = __builtin_shufflevector(lo01, lo23, 2, 3, 6, 7);
  a2 = __builtin_shufflevector(hi01, hi23, 0, 1, 4, 5);
  a3 = __builtin_shufflevector(hi01, hi23, 2, 3, 6, 7);
}
inline u32x4 splat_u(std::uint32_t x) { return u32x4{x, x, x, x}; }
inline u32x4 and_u(u32x4 a, u32x4 b) { return a & b; }
inline u32x4 or_u(u32x4 a, u32x4 b) { return a | b; }
inline u32x4 add_u(u32x4 a, u32x4 b) { return a + b; }
inline u32x4 equal_u(u32x4 a, u32x4 b) { return reinterpret_cast<u32x4>(a == b); }
template <int Bits>
inline u32x4 shift_left(u32x4 a) { return a << Bits; }
inline u32x4 select(u32x4 mask, u32x4 if_set, u32x4 if_clear) { return (mask & if_set) | (~mask & if_clear); }
inline f32x4 as_float(u32x4 v) { return reinterpret_cast<f32x4>(v); }
inline u32x4 as_bits(f32x4 v) { return reinterpret_cast<u32x4>(v); }
inline f32x4 subtract(f32x4 a, f32x4 b) { return a - b; }
typedef std::uint16_t u16x8 __attribute__((vector_size(16)));
typedef std::uint16_t u16x4 __attribute__((vector_size(8)));
inline void load_u16x8(const unsigned char* p, u32x4& lo, u32x4& hi) {
  u16x8 v;
  std::memcpy(&v, p, sizeof v);
  lo = __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1, 2, 3), u32x4);
  hi = __builtin_convertvector(__builtin_shufflevector(v, v, 4, 5, 6, 7), u32x4);
}
inline u32x4 load_u16x4(const unsigned char* p) {
  u16x4 v;
  std::memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, u32x4);
}
typedef std::int32_t i32x4 __attribute__((vector_size(16)));
inline f32x4 splat(float x) { return f32x4{x, x, x, x}; }
inline f32x4 multiply(f32x4 a, f32x4 b) { return a * b; }
inline u32x4 load_bits(const unsigned char* p) {
  u32x4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <int Bits>
inline u32x4 shift_right(u32x4 a) { return a >> Bits; }
template <int Bits>
inline u32x4 shift_right_signed(u32x4 a) { return reinterpret_cast<u32x4>(reinterpret_cast<i32x4>(a) >> Bits); }
inline f32x4 even_lanes(f32x4 a, f32x4 b) { return __builtin_shufflevector(a, b, 0, 2, 4, 6); }
inline f32x4 odd_lanes(f32x4 a, f32x4 b) { return __builtin_shufflevector(a, b, 1, 3, 5, 7); }
inline void interleave(f32x4 even, f32x4 odd, f32x4& lo, f32x4& hi) {
  lo = __builtin_shufflevector(even, odd, 0, 4, 1, 5);
  hi = __builtin_shufflevector(even, odd, 2, 6, 3, 7);
}
#endif

// bfloat16 bit patterns (low 16 bits of each lane) to float32: the upper half.
inline f32x4 bfloat16_to_float(u32x4 h) { return as_float(shift_left<16>(h)); }

// IEEE half bit patterns (low 16 bits of each lane) to float32, exactly:
// exponent and mantissa move to float32's positions and the exponent is
// rebiased by 127 - 15; infinities and NaNs (exponent 31) get the all-ones
// exponent (the NaN payload is kept); zeros and subnormals are renormalized
// by one float subtraction, which is exact (2^-24..2^-14 are normal floats).
inline f32x4 half_to_float(u32x4 h) {
  const u32x4 magnitude = shift_left<13>(and_u(h, splat_u(0x7fffu)));  // exponent + mantissa in place
  const u32x4 exponent = and_u(magnitude, splat_u(0x7c00u << 13));
  const u32x4 rebiased = add_u(magnitude, splat_u(112u << 23));
  const u32x4 special = add_u(rebiased, splat_u(112u << 23));  // exponent 31 -> 255
  // Exponent 0: value = mantissa · 2^-24 = float(2^-14 · (1 + mantissa / 1024)) - 2^-14.
  const u32x4 small = as_bits(subtract(as_float(add_u(rebiased, splat_u(1u << 23))), as_float(splat_u(113u << 23))));
  u32x4 bits = select(equal_u(exponent, splat_u(0x7c00u << 13)), special, rebiased);
  bits = select(equal_u(exponent, splat_u(0)), small, bits);
  return as_float(or_u(bits, shift_left<16>(and_u(h, splat_u(0x8000u)))));
}

// Loading elements of each type widened to float32. `p` points at element 0.
template <Element E>
struct Widen;

template <>
struct Widen<Element::f32> {
  static constexpr std::ptrdiff_t size = 4;
  static void eight(const unsigned char* p, f32x4& lo, f32x4& hi) {
    lo = load(reinterpret_cast<const float*>(p));
    hi = load(reinterpret_cast<const float*>(p) + 4);
  }
  static f32x4 four(const unsigned char* p) { return load(reinterpret_cast<const float*>(p)); }
  static float one(const unsigned char* p) {
    float f;
    std::memcpy(&f, p, sizeof f);
    return f;
  }
};

template <Element E>
struct WidenHalf {
  static constexpr std::ptrdiff_t size = 2;
  static f32x4 convert(u32x4 h) { return E == Element::f16 ? half_to_float(h) : bfloat16_to_float(h); }
  static void eight(const unsigned char* p, f32x4& lo, f32x4& hi) {
    u32x4 l, h;
    load_u16x8(p, l, h);
    lo = convert(l);
    hi = convert(h);
  }
  static f32x4 four(const unsigned char* p) { return convert(load_u16x4(p)); }
  static float one(const unsigned char* p) {
    std::uint16_t bits;
    std::memcpy(&bits, p, sizeof bits);
    return first_lane(convert(splat_u(bits)));
  }
};
template <>
struct Widen<Element::f16> : WidenHalf<Element::f16> {};
template <>
struct Widen<Element::bf16> : WidenHalf<Element::bf16> {};

// Element (r, c) of a view of E.
template <Element E>
const unsigned char* at(const WeightView& b, std::ptrdiff_t r, std::ptrdiff_t c) {
  return static_cast<const unsigned char*>(b.data) + (r * b.stride + c) * Widen<E>::size;
}

}  // namespace attnplay::gemm::simd
