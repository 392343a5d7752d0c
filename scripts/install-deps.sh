#!/usr/bin/env bash
# Installs the Debian 12 packages ModelAtlas needs, only those missing.
#   scripts/install-deps.sh build   compilers and libraries
#   scripts/install-deps.sh test    the above plus what the tests run
#   scripts/install-deps.sh ci      the above plus CI's checks (buf via npm, clang-format)
set -euo pipefail

profile="${1:-build}"
packages=(
  g++ cmake ninja-build pkg-config git ca-certificates
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev prometheus-cpp-dev libsqlite3-dev libpqxx-dev libpq-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcurl4-openssl-dev libcpp-httplib-dev
)
if [[ "$profile" == test || "$profile" == ci ]]; then
  # PostgreSQL server and pg_virtualenv, for the PostgreSQL store tests;
  # Prometheus for the scrape test; Python with gRPC and YAML for the
  # second-language client and the deployment checks.
  # Chromium, its driver and Selenium for the web front's browser test.
  packages+=(sqlite3 postgresql postgresql-common prometheus python3 python3-grpcio
             python3-protobuf python3-yaml curl chromium chromium-driver python3-selenium)
fi
if [[ "$profile" == ci ]]; then
  # Tools count as present when their command is, whichever package brought it.
  command -v npm >/dev/null || packages+=(nodejs npm)
  command -v clang-format >/dev/null || packages+=(clang-format)
  packages+=(yamllint clang-14 libclang-rt-14-dev)
fi

missing=()
for package in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)"
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "Installing Debian packages: ${missing[*]}" >&2
if [[ "$(id -u)" != 0 ]]; then
  sudo=sudo
else
  sudo=
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
