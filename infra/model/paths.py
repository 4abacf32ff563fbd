"""Every path inside a pod that more than one part names (configs, volumes, mounts)."""

from __future__ import annotations

CONFIG_DIR = "/etc/kafka/config"  # the node's ConfigMap, read-only
# Where kafka-run-class.sh writes the JVM's own files (`LOG_DIR`: the GC log), on an emptyDir:
# its default, /opt/kafka/logs, belongs to the image's user, and on OpenShift the pod runs as
# another uid, and the JVM refuses to start when it cannot open its GC log.
SCRIPT_LOG_DIR = "/var/log/kafka"
SCRIPT_LOG_VOLUME = "script-logs"  # the emptyDir mounted there
# The node's cert-manager Secret, mounted as it is: the kubelet swaps in each renewal, and the
# pod's keystore reloader makes Kafka load it (a copy made at start would never follow).
TLS_DIR = "/etc/kafka/tls"
# cert-manager's `additionalOutputFormats: CombinedPEM` key: the private key, then the chain.
COMBINED_PEM = "tls-combined.pem"
KEYSTORE_FILE = f"{TLS_DIR}/{COMBINED_PEM}"
TRUSTSTORE_FILE = f"{TLS_DIR}/ca.crt"
METADATA_DIR = "/var/lib/kafka/metadata"  # KRaft metadata log (its own volume)
# ZooKeeper's ConfigMap (zoo.cfg, logging, JAAS); ZOOCFGDIR names it to the image's scripts.
ZK_CONFIG_DIR = "/etc/zookeeper/conf"
ZK_DATA_DIR = "/var/lib/zookeeper/data"  # snapshots and myid
ZK_LOG_DIR = "/var/lib/zookeeper/log"  # the transaction log, on a device of its own
# A ZooKeeper server's cert-manager Secret, mounted as it is (zookeeper_tls.py).
ZK_TLS_DIR = "/etc/zookeeper/tls"
ZK_JAAS_DIR = "/etc/zookeeper/jaas"  # ZooKeeper's SASL/DIGEST server login (a Secret)
KAFKA_ZK_JAAS_DIR = "/etc/kafka/zookeeper-jaas"  # brokers' and tools' login at ZooKeeper
# KRaft nodes' SASL/PLAIN login on the CONTROLLER listener (a Secret): the server's JAAS file and
# the one of the node's tools that reach that listener.
CONTROLLER_LOGIN_DIR = "/etc/kafka/controller-login"
KAFKA_BIN = "/opt/kafka/bin"  # the Kafka image's tools
DATA_DIR_PREFIX = "/var/lib/kafka/data-"  # one log directory per data volume (JBOD)


def data_dir(volume: int) -> str:
    """The mount and `log.dirs` entry of a broker's data volume `volume` (0-based)."""
    return f"{DATA_DIR_PREFIX}{volume}"


# The Prometheus JMX exporter agent: baked into the image at this path (jmx_agent: bundled) or
# put there by an init container on an emptyDir (jmx_agent: download).
JMX_AGENT_DIR = "/opt/jmx-exporter"
JMX_AGENT_JAR = f"{JMX_AGENT_DIR}/jmx_prometheus_javaagent.jar"
