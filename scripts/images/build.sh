#!/usr/bin/env bash
# The container images real nodes run, built here (no container registry is reachable) as OCI
# layout tarballs in $KAFKASTACK_CACHE/images/<name>-<tag>.tar, imported into each node's
# containerd as localhost/kafkastack/<name>:<tag>. A stamp per image records the hash of its
# inputs; a warm run returns at once.
#   pause:3.10    the pod sandbox: busybox-static sleeping forever
#   busybox:1     a small workload (sh, httpd, wget, nc): busybox-static and its applet links
#   coredns:<ver> cluster DNS: the static coredns binary scripts/toolchain/build-coredns.sh built
#   haproxy:<ver> Debian's haproxy, tagged with its exact upstream release (versions.env), laid
#                 out like the public haproxy image: config folder /usr/local/etc/haproxy, uid/gid 99, its
#                 entry point's effect (`haproxy -W -db <args>`)
#   kafka:<ver>   /opt/kafka laid out like the public apache/kafka image, uid 1000, on the host's
#                 Debian openjdk-17-jre-headless (the package's own files plus the libraries they
#                 link) and the jars scripts/kafka/fetch.sh fetched from Maven Central, with the
#                 Prometheus JMX agent at /opt/jmx-exporter/jmx_prometheus_javaagent.jar (the
#                 manifests' KAFKA_OPTS load it from there when images.kafka.jmx_agent is bundled).
#                 4.x logs through log4j2, 3.x through log4j 1 (reload4j) and adds the ZooKeeper
#                 mode's tools (bin-3.x, config-3.x); /opt/kafka/kafka.jsa is the class archive its
#                 kafka-run-class.sh maps, as the public image's launcher does
#   zookeeper:<ver> for Kafka 3.x's ZooKeeper mode, laid out like the public zookeeper image:
#                 /apache-zookeeper-<ver>-bin with zkServer.sh on PATH, /conf (ZOOCFGDIR), /data,
#                 /datalog, /logs, uid/gid 1000, bash (the manifests' probes speak over /dev/tcp),
#                 on the same JRE; its jars are ZooKeeper's own runtime that scripts/kafka/fetch.sh
#                 fetched at the version Kafka 3.x was built with, logging through logback as the
#                 public image does, which reads the logback.xml the manifests mount in ZOOCFGDIR
# Usage: build.sh [KAFKA_VERSION ...]   (default 4.3.1 3.9.1; their jars must be fetched first)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
CACHE="${KAFKASTACK_CACHE:-$HOME/.cache/kafkastack}"
OUT="$CACHE/images"
BIN="$CACHE/bin"
KAFKA_VERSIONS=("$@")
[ ${#KAFKA_VERSIONS[@]} -gt 0 ] || KAFKA_VERSIONS=(4.3.1 3.9.1)
JRE_PACKAGE=openjdk-17-jre-headless
# The agent scripts/kafka/fetch.sh pinned and checked (one pin, read from there).
JMX_AGENT_VERSION="$(sed -n 's/^JMX_AGENT_VERSION=//p' "$here/../kafka/fetch.sh")"
JMX_AGENT="$CACHE/jmx-agent/$JMX_AGENT_VERSION/jmx_prometheus_javaagent.jar"
log() { echo "[images] $*" >&2; }
die() { log "$*"; exit 1; }

# As root, umoci keeps file owners in the layers (/var/lib/kafka/data belongs to uid 1000);
# --rootless would record every file as root's.
[ "$(id -u)" -eq 0 ] || die "building images needs root (file owners in the layers): run as root"
command -v umoci >/dev/null || die "umoci is missing: run \`make system-deps\`"
[ -x /bin/busybox ] && /bin/busybox --list >/dev/null 2>&1 \
  || die "/bin/busybox (busybox-static) is missing: run \`make system-deps\`"
for v in "${KAFKA_VERSIONS[@]}"; do
  [[ "$v" == 4.* || "$v" == 3.* ]] || die "Kafka $v: the images know the 4.x and 3.x layouts only"
done
mkdir -p "$OUT"

# Files every image has: a shell-less passwd/group with root and appuser (uid 1000, as in
# apache/kafka), and a world-writable /tmp.
base_files() {
  local root="$1"
  mkdir -p "$root/etc" "$root/tmp" "$root/bin"
  chmod 1777 "$root/tmp"
  printf 'root:x:0:0:root:/root:/bin/sh\nappuser:x:1000:1000::/home/appuser:/bin/sh\nnobody:x:65534:65534::/nonexistent:/bin/false\n' > "$root/etc/passwd"
  printf 'root:x:0:\nappuser:x:1000:\nnogroup:x:65534:\n' > "$root/etc/group"
  printf 'hosts: files dns\n' > "$root/etc/nsswitch.conf"
}
with_busybox() {
  local root="$1" applet
  cp /bin/busybox "$root/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
  done
}

populate_pause() { base_files "$1"; cp /bin/busybox "$1/bin/busybox"; }
populate_busybox() { base_files "$1"; with_busybox "$1"; }
populate_coredns() { base_files "$1"; cp "$BIN/coredns" "$1/coredns"; }
# The shared libraries `binary` links (resolved by the host's loader), at their own paths.
copy_libraries() {
  local root="$1" f; shift
  for f in $( (ldd "$@" 2>/dev/null || true) \
      | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\/.*ld-linux/ {print $1}' | sort -u); do
    mkdir -p "$root$(dirname "$f")"; cp -L "$f" "$root$f"
  done
  for f in /lib/x86_64-linux-gnu/libnss_files.so.2 /lib/x86_64-linux-gnu/libnss_dns.so.2; do
    [ -f "$f" ] && mkdir -p "$root$(dirname "$f")" && cp -L "$f" "$root$f"
  done
}
populate_haproxy() {
  local root="$1"
  base_files "$root"; with_busybox "$root"
  echo 'haproxy:x:99:99::/var/lib/haproxy:/bin/false' >> "$root/etc/passwd"
  echo 'haproxy:x:99:' >> "$root/etc/group"
  mkdir -p "$root/usr/sbin" "$root/usr/local/etc/haproxy" "$root/var/lib/haproxy"
  cp /usr/sbin/haproxy "$root/usr/sbin/haproxy"
  copy_libraries "$root" /usr/sbin/haproxy
  chown 99:99 "$root/var/lib/haproxy"
}
# Debian's JRE under /usr/lib/jvm, as the host has it.
with_jre() {
  local root="$1" f
  # Exactly the files of Debian's JRE package (symlinks into /etc/java-17-openjdk included).
  dpkg-query -L "$JRE_PACKAGE" | grep -vE '^/usr/share/(doc|man|lintian|bug)' | while read -r f; do
    if [ -d "$f" ] && [ ! -L "$f" ]; then mkdir -p "$root$f"; else cp -a "$f" "$root$f"; fi
  done
  mkdir -p "$root/etc/ssl/certs/java"
  [ -f /etc/ssl/certs/java/cacerts ] && cp /etc/ssl/certs/java/cacerts "$root/etc/ssl/certs/java/"
  # The shared libraries the JRE links (libc, libz, libstdc++, …), at their own paths.
  for f in $( (dpkg-query -L "$JRE_PACKAGE" | grep -E '\.so$|/bin/java$' | xargs ldd 2>/dev/null || true) \
      | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\/.*ld-linux/ {print $1}' | sort -u); do
    mkdir -p "$root$(dirname "$f")"; cp -L "$f" "$root$f"
  done
  for f in /lib/x86_64-linux-gnu/libnss_files.so.2 /lib/x86_64-linux-gnu/libnss_dns.so.2; do
    [ -f "$f" ] && cp -L "$f" "$root$f"
  done
}
populate_kafka() {
  local root="$1" lib="$CACHE/kafka/$KAFKA_VERSION/lib" line=4.x
  [[ "$KAFKA_VERSION" == 3.* ]] && line=3.x
  base_files "$root"; with_busybox "$root"; with_jre "$root"
  mkdir -p "$root/opt/kafka/libs" "$root/opt/kafka/bin" "$root/opt/kafka/config"
  cp "$lib"/*.jar "$root/opt/kafka/libs/"
  cp "$here/kafka/bin/"*.sh "$root/opt/kafka/bin/"
  if [ "$line" = 3.x ]; then
    cp "$here/kafka/bin-3.x/"*.sh "$root/opt/kafka/bin/"
    cp "$here/kafka/config-3.x/"* "$root/opt/kafka/config/"
  else
    cp "$here/kafka/config/"* "$root/opt/kafka/config/"
  fi
  chmod 755 "$root/opt/kafka/bin/"*.sh
  # The class archive, from the classes scripts/kafka/class-archive.sh saw a broker and the tools
  # load: dumped inside the image's root through its own runner, so it holds for the paths and
  # the classpath the image's JVMs have (the JVM checks both, and each jar's size and time).
  # The JRE's loader finds libjli through /proc/self/exe: /proc is mounted in a mount namespace
  # of the dump's own, on a mount point that leaves the image with it.
  # It also checks each jar's time to the second, and the layer keeps whole seconds (umoci rounds
  # to the nearest one: a jar copied at .6 s would read a second later in the container, and
  # the archive be dropped): the jars get a whole second first.
  touch -d "@$(date +%s)" "$root"/opt/kafka/libs/*.jar
  cp "$CACHE/kafka/$KAFKA_VERSION/kafka.classlist" "$root/tmp/kafka.classlist"
  mkdir "$root/proc"
  unshare --mount --propagation private sh -c 'mount -t proc proc "$1/proc" && exec chroot "$1" \
    /bin/env KAFKA_CDS_OPTS="-Xshare:dump -XX:SharedClassListFile=/tmp/kafka.classlist -XX:SharedArchiveFile=/opt/kafka/kafka.jsa -Xlog:cds=off" \
    /opt/kafka/bin/kafka-run-class.sh kafka.Kafka' _ "$root" >/dev/null
  rmdir "$root/proc"
  rm "$root/tmp/kafka.classlist"
  mkdir -p "$root/opt/jmx-exporter"
  cp "$JMX_AGENT" "$root/opt/jmx-exporter/jmx_prometheus_javaagent.jar"
  mkdir -p "$root/var/lib/kafka/data" "$root/home/appuser"
  chown -R 1000:1000 "$root/var/lib/kafka" "$root/home/appuser"
}

populate_zookeeper() {
  local root="$1" home="/apache-zookeeper-$ZOOKEEPER_VERSION-bin" jar
  base_files "$root"; with_busybox "$root"; with_jre "$root"
  sed -i 's/^appuser:/zookeeper:/' "$root/etc/passwd" "$root/etc/group"
  sed -i 's#/home/appuser#/home/zookeeper#' "$root/etc/passwd"
  # The probes run bash (a /dev/tcp redirection busybox's sh lacks).
  rm -f "$root/bin/bash"; cp /bin/bash "$root/bin/bash"
  copy_libraries "$root" /bin/bash
  mkdir -p "$root$home/bin" "$root$home/lib" "$root$home/conf"
  cp "$ZOOKEEPER_LIB"/*.jar "$root$home/lib/"
  cp "$here/zookeeper/bin/"*.sh "$root$home/bin/"
  chmod 755 "$root$home/bin/"*.sh
  mkdir -p "$root/conf" "$root/data" "$root/datalog" "$root/logs" "$root/home/zookeeper"
  cp "$here/zookeeper/conf/"* "$root/conf/"
  chown -R 1000:1000 "$root/conf" "$root/data" "$root/datalog" "$root/logs" "$root/home/zookeeper"
}

# build NAME TAG INPUTS -- umoci config flags…
build() {
  local name="$1" tag="$2" inputs="$3"; shift 4
  local tarball="$OUT/$name-$tag.tar" stampfile="$OUT/$name-$tag.stamp" stamp work start
  # The script's content, not its path: a checkout elsewhere builds the same images.
  stamp="$( (sha256sum < "$here/build.sh"; echo "$inputs") | sha256sum | cut -c1-16)"
  [ -f "$tarball" ] && [ "$(cat "$stampfile" 2>/dev/null)" = "$stamp" ] && return 0
  start=$(date +%s)
  # The stamp goes first: an interrupted build never looks complete.
  rm -f "$stampfile" "$tarball"
  work="$(mktemp -d "$OUT/.build-$name.XXXXXX")"
  umoci init --layout "$work/layout"
  umoci new --image "$work/layout:$tag"
  umoci unpack --image "$work/layout:$tag" "$work/bundle" >/dev/null
  "populate_$name" "$work/bundle/rootfs"
  umoci repack --image "$work/layout:$tag" "$work/bundle"
  umoci config --image "$work/layout:$tag" --author kafkastack "$@"
  umoci gc --layout "$work/layout"
  tar -C "$work/layout" -cf "$tarball.part" .
  mv "$tarball.part" "$tarball"
  rm -rf "$work"
  echo "$stamp" > "$stampfile"
  log "$name:$tag built in $(( $(date +%s) - start ))s ($(du -h "$tarball" | cut -f1))"
}

# sed reads the whole help text: `| head -1` stops reading early, and busybox, still writing,
# dies of SIGPIPE, which pipefail turns into the script's failure (exit 141, seen in CI).
busybox_version="$(/bin/busybox | sed -n 1p)"
build pause 3.10 "$busybox_version" -- \
  --config.entrypoint /bin/busybox --config.entrypoint sleep --config.entrypoint infinity
build busybox 1 "$busybox_version" -- --config.cmd /bin/sh
COREDNS_VERSION="$(sed -n 's/^COREDNS_VERSION=v//p' "$here/../toolchain/versions.env")"
[ -x "$BIN/coredns" ] && [[ "$("$BIN/coredns" -version)" == *"$COREDNS_VERSION"* ]] \
  || die "coredns $COREDNS_VERSION is missing from $BIN: run \`make nodes-toolchain\` (scripts/toolchain/build-coredns.sh)"
build coredns "$COREDNS_VERSION" "$(sha256sum "$BIN/coredns")" -- \
  --config.entrypoint /coredns
haproxy_version="$(dpkg-query -W -f '${Version}' haproxy 2>/dev/null)" \
  || die "haproxy is not installed: run \`make system-deps\`"
HAPROXY_VERSION="$(sed -n 's/^HAPROXY_VERSION=//p' "$here/../toolchain/versions.env")"
[[ "${haproxy_version%%-*}" == "$HAPROXY_VERSION" ]] \
  || die "Debian's haproxy is $haproxy_version, not $HAPROXY_VERSION (scripts/toolchain/versions.env): pin the release Debian has"
build haproxy "$HAPROXY_VERSION" "$busybox_version $haproxy_version" -- \
  --config.user 99:99 --config.entrypoint /usr/sbin/haproxy --config.entrypoint -W \
  --config.entrypoint -db --config.cmd -f --config.cmd /usr/local/etc/haproxy/haproxy.cfg \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
[ -f "$JMX_AGENT" ] || die "the JMX agent $JMX_AGENT_VERSION is missing: run \`make kafka-jars\` (scripts/kafka/fetch.sh)"
jre_version="$(dpkg-query -W -f '${Version}' "$JRE_PACKAGE" 2>/dev/null)" \
  || die "$JRE_PACKAGE is not installed: run \`apt-get install $JRE_PACKAGE\` (scripts/check-java.sh)"
JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64
for KAFKA_VERSION in "${KAFKA_VERSIONS[@]}"; do
  jars_stamp="$CACHE/kafka/$KAFKA_VERSION/.complete"
  [ -f "$jars_stamp" ] || die "Kafka $KAFKA_VERSION jars are missing: run \`make kafka-jars\` (scripts/kafka/fetch.sh $KAFKA_VERSION)"
  classes="$CACHE/kafka/$KAFKA_VERSION/kafka.classlist"
  [ -f "$classes" ] || die "Kafka $KAFKA_VERSION's class list is missing: run \`make kafka-jars\` (scripts/kafka/class-archive.sh $KAFKA_VERSION)"
  build kafka "$KAFKA_VERSION" "$busybox_version $jre_version $(cat "$jars_stamp") $(sha256sum "$JMX_AGENT") $(sha256sum "$classes") $(cat "$here"/kafka/*/*)" -- \
    --config.user 1000:1000 --config.workingdir /opt/kafka \
    --config.env PATH=/opt/kafka/bin:$JAVA_HOME/bin:/bin \
    --config.env JAVA_HOME=$JAVA_HOME --config.cmd /bin/sh
  [[ "$KAFKA_VERSION" == 3.* ]] || continue
  # ZooKeeper at the version this Kafka release was built with (the jar its fetch brought).
  zookeeper_jar="$(cd "$CACHE/kafka/$KAFKA_VERSION/lib" && ls zookeeper-[0-9]*.jar)"
  ZOOKEEPER_VERSION="${zookeeper_jar#zookeeper-}"; ZOOKEEPER_VERSION="${ZOOKEEPER_VERSION%.jar}"
  ZOOKEEPER_LIB="$CACHE/zookeeper/$ZOOKEEPER_VERSION/lib"
  zk_stamp="$CACHE/zookeeper/$ZOOKEEPER_VERSION/.complete"
  [ -f "$zk_stamp" ] || die "ZooKeeper $ZOOKEEPER_VERSION jars are missing: run \`make kafka-jars\` (scripts/kafka/fetch.sh $KAFKA_VERSION)"
  zk_home="/apache-zookeeper-$ZOOKEEPER_VERSION-bin"
  build zookeeper "$ZOOKEEPER_VERSION" "$busybox_version $jre_version $(sha256sum /bin/bash) $(cat "$zk_stamp") $(cat "$here"/zookeeper/*/*)" -- \
    --config.user 1000:1000 --config.workingdir "$zk_home" \
    --config.env PATH=$zk_home/bin:$JAVA_HOME/bin:/bin \
    --config.env JAVA_HOME=$JAVA_HOME --config.env ZOOCFGDIR=/conf --config.env ZOO_CONF_DIR=/conf \
    --config.env ZOO_DATA_DIR=/data --config.env ZOO_DATA_LOG_DIR=/datalog --config.env ZOO_LOG_DIR=/logs \
    --config.cmd zkServer.sh --config.cmd start-foreground
done
