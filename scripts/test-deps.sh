#!/usr/bin/env bash
# What `npm test` needs beyond npm packages: redis-server (the multi-replica tests start their own instance on a
# free loopback port), postgresql (the Postgres ledger tests start a throwaway cluster with initdb and pg_ctl),
# prometheus (runs the Grafana dashboard's queries against a scraped gateway), ffmpeg (decodes the simulator's MP4
# with a real decoder), and e2fsprogs + mount (the SQLite outage test mounts a small ext4 image through a loop
# device, as root, to fill it up and turn it read-only), and chromium (the console's browser test drives Debian's
# headless Chromium through playwright-core: browser downloads fail here). Installed with apt-get when missing and we may; otherwise a
# clear message. Runs before `npm test` (pretest) and in .ci/run.
set -euo pipefail

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
# Debian keeps initdb and pg_ctl in /usr/lib/postgresql/<version>/bin, off the PATH.
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v ffprobe >/dev/null 2>&1 || missing+=(ffmpeg)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v mkfs.ext4 >/dev/null 2>&1 && command -v fsck.ext4 >/dev/null 2>&1 || missing+=(e2fsprogs)
command -v mount >/dev/null 2>&1 && command -v findmnt >/dev/null 2>&1 || missing+=(mount util-linux)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test-deps: installing ${missing[*]} with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi

echo "test-deps: the tests need ${missing[*]}; install them (e.g. sudo apt-get install -y ${missing[*]}) and run again." >&2
# Without ffmpeg only the MP4 decode check is skipped, without e2fsprogs or mount the SQLite disk test (it says so);
# without redis-server, prometheus, postgresql or chromium their tests cannot run.
case " ${missing[*]} " in *" redis-server "* | *" prometheus "* | *" postgresql "* | *" chromium "*) exit 1 ;; esac
exit 0
