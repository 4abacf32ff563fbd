"""Every path inside a pod that more than one part names (configs, volumes, mounts)."""

from __future__ import annotations

CONFIG_DIR = "/etc/kafka/config"  # the node's ConfigMap, read-only
# Where kafka-run-class.sh writes the JVM's own files (`LOG_DIR`: the GC log), on an emptyDir:
# its default, /opt/kafka/logs, belongs to the image's user, and on OpenShift the pod runs as
# another uid, and the JVM refuses to start when it cannot open its GC log.
SCRIPT_LOG_DIR = "/var/log/kafka"
TLS_DIR = "/etc/kafka/tls"  # keystore assembled at start from the cert-manager Secret
METADATA_DIR = "/var/lib/kafka/metadata"  # KRaft metadata log (its own volume)
ZK_DATA_DIR = "/var/lib/zookeeper/data"  # snapshots and myid
ZK_LOG_DIR = "/var/lib/zookeeper/log"  # the transaction log, on a device of its own
# The Prometheus JMX exporter agent: baked into the image at this path (jmx_agent: bundled) or
# put there by an init container on an emptyDir (jmx_agent: download).
JMX_AGENT_DIR = "/opt/jmx-exporter"
JMX_AGENT_JAR = f"{JMX_AGENT_DIR}/jmx_prometheus_javaagent.jar"
