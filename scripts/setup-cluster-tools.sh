#!/usr/bin/env bash
# Installs the real components the cluster tests start on free ports (they never use mocks):
#   redis-server  the shared backend of `mcpkit serve --http --redis`
#   haproxy       the round-robin balancer in front of the instances
#   prometheus    promtool, which checks the `/metrics` exposition
# and the headless browser of `mcpkit dev`'s page tests:
#   chromium, chromium-driver   Chromium and chromedriver, driven over WebDriver
# from Debian/Ubuntu packages, when a command is missing. Idempotent: nothing happens when all
# of them are on the PATH. Needs root (or sudo) only when something must be installed; elsewhere
# it fails naming the packages to install.
set -euo pipefail

# command -> Debian package
declare -A package=([redis-server]=redis-server [haproxy]=haproxy [promtool]=prometheus \
  [chromium]=chromium [chromedriver]=chromium-driver)
missing=()
for cmd in redis-server haproxy promtool chromium chromedriver; do
  # haproxy lives in /usr/sbin, which a non-root PATH may lack.
  if ! command -v "$cmd" >/dev/null && [ ! -x "/usr/sbin/$cmd" ]; then
    missing+=("${package[$cmd]}")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "error: the cluster and browser tests need ${missing[*]}: install them (apt-get install ${missing[*]})" \
    "or run scripts/test.sh as root" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null; then
  echo "error: the cluster and browser tests need ${missing[*]} (Debian package names); no apt-get here:" \
    "install them with this system's package manager" >&2
  exit 1
fi
echo "installing ${missing[*]} for the cluster and browser tests" >&2
"${as_root[@]}" apt-get update -qq
# The packages' own services are not wanted (the tests start their own on free ports), but
# their postinst may start one where an init system runs; that does not disturb the tests.
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
