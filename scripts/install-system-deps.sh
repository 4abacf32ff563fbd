#!/usr/bin/env bash
# Debian packages the real-software test tiers need. Returns at once when all are present.
set -euo pipefail
need=()
command -v haproxy >/dev/null 2>&1 || need+=(haproxy)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v mvn >/dev/null 2>&1 || need+=(maven)
[ ${#need[@]} -eq 0 ] && exit 0
echo "kafkastack: installing Debian packages: ${need[*]}" >&2
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
