"""Container images built here for real nodes (scripts/images/build.sh): where their tarballs
are and the name each node's containerd knows them by. No registry is reachable, so pods use
them with `imagePullPolicy: Never`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from infra import toolchain
from infra.image_config import ImagesConfig
from infra.toolchain import pinned_versions


class ImageError(RuntimeError):
    """A locally built image is missing; the message names the make target that builds it."""


@dataclass(frozen=True)
class Image:
    name: str
    tag: str

    @property
    def ref(self) -> str:
        """The reference `ctr images import --base-name localhost/kafkastack/<name>` gives it."""
        return f"localhost/kafkastack/{self.name}:{self.tag}"

    @property
    def base_name(self) -> str:
        return self.ref.rsplit(":", 1)[0]

    @property
    def tarball(self) -> Path:
        return toolchain.cache_dir() / "images" / f"{self.name}-{self.tag}.tar"

    def require(self) -> Path:
        if not self.tarball.is_file():
            raise ImageError(
                f"image {self.ref} is missing ({self.tarball}): run `make images` "
                "(scripts/images/build.sh)"
            )
        return self.tarball


PAUSE = Image("pause", "3.10")
BUSYBOX = Image("busybox", "1")
KAFKA = Image("kafka", "4.3.1")
COREDNS = Image("coredns", pinned_versions()["COREDNS_VERSION"].lstrip("v"))
# Tagged with its exact release, like the stack's default (external.haproxy_image).
HAPROXY = Image("haproxy", pinned_versions()["HAPROXY_VERSION"])
ALL = (PAUSE, BUSYBOX, COREDNS, HAPROXY, KAFKA)
# The ZooKeeper mode's (Kafka 3.9): its Kafka, and ZooKeeper at the public default's tag (the
# version Kafka 3.9's jars name; build.sh reads it from there). Imported only where a test runs
# that mode (RealNodes.import_images), so every other session's nodes start as fast as before.
KAFKA_ZOOKEEPER_MODE = Image("kafka", "3.9.1")
ZOOKEEPER = Image("zookeeper", ImagesConfig().zookeeper.image.rsplit(":", 1)[1])
ZOOKEEPER_MODE = (KAFKA_ZOOKEEPER_MODE, ZOOKEEPER)
# On every node whatever it runs: the pod sandbox, and cluster DNS (dns.py).
ALWAYS = (PAUSE, COREDNS)
