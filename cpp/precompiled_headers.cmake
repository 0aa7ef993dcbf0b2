# The headers that every core source parses (Eigen, nlohmann/json, the
# standard library): one precompiled header of them, used by the WASM build's
# -O3 sources (cpp/CMakeLists.txt) and by the fuzz targets (tests/fuzz).
set(ATTNPLAY_PRECOMPILED_HEADERS <Eigen/Core> <nlohmann/json.hpp> <algorithm> <cmath> <cstdint> <memory> <optional>
    <stdexcept> <string> <string_view> <unordered_map> <vector>)
