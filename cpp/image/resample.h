// Resizing a picture exactly as Pillow's Image.resize does, which is what
// transformers' image processors call (resize with reducing_gap=None): the
// convolution filters (bilinear, bicubic, Lanczos, box, Hamming) with their
// support widened by the scale when shrinking, coefficients normalised and
// rounded to 22-bit fixed point, a horizontal then a vertical pass, each
// rounded and clipped to 8 bits; nearest neighbour as Pillow's affine
// scaling. Verified against Pillow (tests/golden/make_vision_goldens.py).
// Not here: the preprocessing steps around it (image/image_processor.h).
#pragma once

#include "image/picture.h"

namespace attnplay {

// Pillow's Resampling values, as preprocessor_config.json's "resample" writes them.
enum class Resampling { nearest = 0, lanczos = 1, bilinear = 2, bicubic = 3, box = 4, hamming = 5 };

// "nearest", "lanczos", "bilinear", ... (as messages and the CLI name them).
const char* resampling_name(Resampling resampling);

// The picture resized to width × height (each at least 1).
Picture resize_picture(const Picture& picture, int width, int height, Resampling resampling);

}  // namespace attnplay
