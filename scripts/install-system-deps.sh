#!/usr/bin/env bash
# Debian packages the real-software test tiers need (no others: the Kafka image copies the
# host's own openjdk-17-jre-headless, scripts/check-java.sh). Returns at once when all are present.
set -euo pipefail
need=()
command -v haproxy >/dev/null 2>&1 || need+=(haproxy)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v mvn >/dev/null 2>&1 || need+=(maven)
# Real nodes (the `nodes` tier): runc under containerd, the bridge/host-local CNI plugins, and
# what scripts/images/build.sh builds images with (umoci; busybox for the pause and workload).
command -v runc >/dev/null 2>&1 || need+=(runc)
[ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
command -v umoci >/dev/null 2>&1 || need+=(umoci)
[ -x /bin/busybox ] || need+=(busybox-static)
# The real nodes' expandable volumes (infra/localcluster/loop_volume_driver.sh): XFS, which
# grows online, and jq for the FlexVolume protocol's JSON.
command -v mkfs.xfs >/dev/null 2>&1 || need+=(xfsprogs)
command -v jq >/dev/null 2>&1 || need+=(jq)
# The kafka tier cuts one broker off its leader for a moment (tests/kafka/test_readiness.py).
command -v iptables >/dev/null 2>&1 || need+=(iptables)
[ ${#need[@]} -eq 0 ] && exit 0
echo "kafkastack: installing Debian packages: ${need[*]}" >&2
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
