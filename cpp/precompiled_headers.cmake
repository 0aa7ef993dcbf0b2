# The headers that every core source parses (Eigen, nlohmann/json, the
# standard library): one precompiled header of them, used by the core and the
# CLI (cpp/CMakeLists.txt; in WASM by the -O3 sources only), the native
# benches (tests/bench), the doctest suites with doctest added
# (tests/native) and the fuzz targets (tests/fuzz).
set(ATTNPLAY_PRECOMPILED_HEADERS <Eigen/Core> <nlohmann/json.hpp> <algorithm> <cmath> <cstdint> <memory> <optional>
    <stdexcept> <string> <string_view> <unordered_map> <vector>)
