// Decoding a picture file (PNG, JPEG, BMP, GIF) into 8-bit RGB for the
// command line (the browser decodes pictures itself): JPEG with libjpeg-turbo
// (Debian's libjpeg62-turbo-dev: what Pillow decodes JPEG with, so the pixels
// are Pillow's), the others with stb_image (Debian's libstb-dev). 16-bit PNGs
// are reduced to 8 bits, grey and palette pictures expanded, alpha dropped (as
// Pillow's convert("RGB")); a GIF gives its first frame (as Pillow opens it);
// CMYK JPEGs are converted by the plain (255 − C)(255 − K) rule. The size is
// checked (image/picture.h) before the pixels are allocated. Also the way
// back for one format: a picture as PNG bytes (stb_image_write), which the
// CLI's JSON carries as the picture the model saw.
// Not here: resizing or the model's preprocessing (image/image_processor.h).
#pragma once

#include <string>
#include <string_view>

#include "image/picture.h"

namespace attnplay {

// Throws std::invalid_argument with what is wrong: not a picture format read
// here, truncated or corrupt data (stb_image's reason), a size out of range
// (check_picture_size with max_pixels, read from the file's header before
// any pixel is decoded; the fuzz target sets a smaller budget, so that its
// seconds go to many inputs rather than to decoding one huge picture).
Picture decode_picture(std::string_view bytes, std::int64_t max_pixels = kMaxPicturePixels);

// The PNG file of an 8-bit RGB picture (zlib-compressed by stb_image_write, no filter heuristics beyond its own).
std::string encode_png(const Picture& picture);

}  // namespace attnplay
