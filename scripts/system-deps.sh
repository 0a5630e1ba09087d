#!/usr/bin/env bash
# Debian packages the tests use: chromium (browser tests), poppler-utils (PDF checks), fonts-nanum (Hangul),
# nodejs (the pages' view rules under Node's test runner), nginx (several processes behind deploy/nginx.conf),
# espeak-ng (speech for the spoken answers' transcription tests); the pages' tests on the two other engines:
# firefox-esr (driven over WebDriver BiDi), webkit2gtk-driver (WebKitWebDriver and its MiniBrowser) under xvfb,
# gstreamer1.0-libav (WebKitGTK's H.264 decoder for the clips).
set -euo pipefail
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v pdftoppm >/dev/null || missing+=(poppler-utils)
command -v node >/dev/null || missing+=(nodejs)
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)  # /usr/sbin: not on every PATH
command -v espeak-ng >/dev/null || missing+=(espeak-ng)
[ -e /usr/share/fonts/truetype/nanum/NanumGothic.ttf ] || missing+=(fonts-nanum)
command -v firefox-esr >/dev/null || missing+=(firefox-esr)
command -v WebKitWebDriver >/dev/null || missing+=(webkit2gtk-driver)
command -v xvfb-run >/dev/null || missing+=(xvfb)
compgen -G "/usr/lib/*/gstreamer-1.0/libgstlibav.so" >/dev/null || missing+=(gstreamer1.0-libav)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "system-deps: missing ${missing[*]} (Debian/Ubuntu: sudo apt-get install ${missing[*]});" \
       "the tests that need them will skip" >&2
  # CI must run every test, so there a missing package is an error.
  case "${CI:-}" in true|1|yes) exit 1 ;; *) exit 0 ;; esac
fi
echo "system-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Another apt process (unattended-upgrades on a fresh machine) may hold the dpkg lock: wait for it, up to 5 minutes.
apt=(apt-get -o DPkg::Lock::Timeout=300)
"${apt[@]}" update -qq
"${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
