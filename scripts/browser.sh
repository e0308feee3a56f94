#!/usr/bin/env bash
# Make sure Debian's headless Chromium is installed (the browser tests and the pages benchmark
# drive it with Playwright; `playwright install` cannot download a browser here).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
echo "browser: installing Debian's chromium (apt-get; a minute or two)"
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq chromium >/dev/null
/usr/bin/chromium --version
