# Third-party dependencies: all Debian 12 packages, installed by scripts/bootstrap.
# A missing one fails here with the package that provides it.

find_package(PkgConfig REQUIRED)

macro(shoal_require_package name debian_package)
  if(NOT ${name}_FOUND)
    message(FATAL_ERROR "${name} not found: install the Debian package '${debian_package}' "
                        "(run scripts/bootstrap)")
  endif()
endmacro()

# nats.c: its CMake config is broken on Debian 12, so use pkg-config.
pkg_check_modules(NATS QUIET IMPORTED_TARGET libnats)
shoal_require_package(NATS libnats-dev)

find_package(Boost 1.81 QUIET CONFIG COMPONENTS json)
shoal_require_package(Boost "libboost1.81-dev libboost-json1.81-dev")

# OpenSSL: Ed25519 nkeys and the HMAC that seals seat profiles.
find_package(OpenSSL 3 QUIET)
shoal_require_package(OpenSSL libssl-dev)

find_package(fmt QUIET CONFIG)
shoal_require_package(fmt libfmt-dev)
find_package(spdlog QUIET CONFIG)
shoal_require_package(spdlog libspdlog-dev)

if(NOT SHOAL_FUZZ)
  find_package(CLI11 QUIET CONFIG)
  shoal_require_package(CLI11 libcli11-dev)
  find_package(GTest QUIET CONFIG)
  shoal_require_package(GTest "libgtest-dev libgmock-dev")
  find_package(benchmark QUIET CONFIG)
  shoal_require_package(benchmark libbenchmark-dev)
  find_program(NATS_SERVER_PROGRAM nats-server PATHS /usr/sbin /usr/bin)
  if(NOT NATS_SERVER_PROGRAM)
    message(FATAL_ERROR "nats-server not found: install the Debian package 'nats-server' "
                        "(run scripts/bootstrap)")
  endif()
endif()
