#!/usr/bin/env bash
# `npm test`'s pretest: the dashboard tests drive a real headless browser, Debian's chromium,
# through playwright-core (which downloads no browser). Installs it when it is missing, so the
# README's `npm test` passes by itself on a fresh Debian machine; says so in one line.
set -euo pipefail

[ -x /usr/bin/chromium ] && exit 0

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }

if ! command -v apt-get >/dev/null 2>&1 || { [ "$(id -u)" != 0 ] && ! sudo -n true 2>/dev/null; }; then
  echo "giftjobs: the dashboard tests need /usr/bin/chromium; install Debian's chromium package (apt-get install chromium) and run npm test again" >&2
  exit 1
fi
echo "installing Debian's chromium for the dashboard tests (apt-get, once)"
as_root apt-get update -qq >/tmp/giftjobs-apt.log 2>&1
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >>/tmp/giftjobs-apt.log 2>&1 \
  || { echo "giftjobs: installing chromium failed; see /tmp/giftjobs-apt.log" >&2; exit 1; }
