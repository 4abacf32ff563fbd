"""`kafkastack:images`: which container images the stack runs and the user each runs as.

Part of the stack config `infra/config.py` reads (kept apart to keep that file readable). The
public images are the defaults, for real clusters; the local stack names the images built here
(scripts/images/build.sh). The user matters because volumes arrive owned by root: the pod's
`fsGroup` must be a group the image's user belongs to, or Kafka cannot write its log dirs.
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from infra.config_base import StrictModel

# The newest Prometheus JMX exporter agent on Maven Central: later releases (1.1.0 on) are
# published on GitHub only (prometheus/jmx_exporter issues 1115, 1258). scripts/kafka/fetch.sh
# pins the same version and checksum (a test keeps them equal).
JMX_AGENT_VERSION = "1.0.1"
JMX_AGENT_SHA256 = "7d61f737fd661610ccc14aea79764faa1ea94a340cbc8f0029b3d2edea3d80c1"
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"


class ImageUser(StrictModel):
    user: int = Field(default=1000, description="uid the image runs as (never root)")
    group: int = Field(default=1000, description="its primary gid; also the pod's fsGroup")

    @field_validator("user", "group")
    @classmethod
    def _not_root(cls, value: int) -> int:
        if value <= 0:
            raise ValueError(
                f'{value} is root\'s (or invalid): Pod Security "restricted" refuses pods running '
                "as root; name the image's non-root uid and gid (apache/kafka: 1000)"
            )
        return value


class KafkaImage(ImageUser):
    repository: str = Field(default="apache/kafka", description="tag: kafkastack:kafka_version")
    jmx_agent: Literal["download", "bundled"] = Field(
        default="download",
        description="bundled: the image holds the Prometheus agent at its fixed path (the local "
        "image, or one built by docs/provisioning.md's recipe); download: an init container "
        "fetches the pinned jar from `maven_repository` and checks its sha256",
    )
    maven_repository: str = Field(
        default=MAVEN_CENTRAL, description="Maven Central or a mirror, for jmx_agent: download"
    )

    @field_validator("repository")
    @classmethod
    def _repository(cls, value: str) -> str:
        if re.fullmatch(REPOSITORY, value):
            return value
        if re.fullmatch(rf"{REPOSITORY}(:[\w][\w.-]*|@.*)", value):
            raise ValueError(
                f"{value!r} names a tag or digest; name the repository alone (apache/kafka): "
                "its tag is kafkastack:kafka_version"
            )
        raise ValueError(
            f"{value!r} is not an image repository: [registry[:port]/]path of lowercase "
            "letters, digits and . _ - separated by '/', such as apache/kafka"
        )

    @field_validator("maven_repository")
    @classmethod
    def _maven_url(cls, value: str) -> str:
        url = urlsplit(value)
        if url.scheme not in ("https", "http") or not url.netloc:
            raise ValueError(
                f"{value!r} is not a Maven repository's address: an https:// (or http://) URL "
                f"such as {MAVEN_CENTRAL}"
            )
        return value.rstrip("/")


# An image's repository as container runtimes parse it (the distribution reference grammar):
# an optional registry host[:port]/, then lowercase path components.
_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
_HOST = rf"(?:{_LABEL}(?:\.{_LABEL})*|\[[0-9a-fA-F:]+\])"  # a name, or an IPv6 address
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
REPOSITORY = rf"(?:{_HOST}(?::\d+)?/)?{_COMPONENT}(?:/{_COMPONENT})*"
# An exact release tag or a digest: a moving tag (haproxy:2.6, :latest) could change the image
# under a running stack at any pod restart, unreviewed. Images built here (localhost/…) are
# pinned by scripts/images/build.sh instead.
_PINNED = re.compile(
    rf"localhost/{_COMPONENT}(?:/{_COMPONENT})*:[\w][\w.-]{{0,127}}"
    rf"|{REPOSITORY}(:[\w][\w.-]{{0,127}})?@sha256:[0-9a-f]{{64}}"  # a digest, tagged or not
    rf"|{REPOSITORY}:\d+\.\d+\.\d+(-[A-Za-z0-9.]+)?"
)


class PinnedImage(ImageUser):
    image: str

    @field_validator("image")
    @classmethod
    def _pinned(cls, value: str) -> str:
        if not _PINNED.fullmatch(value):
            raise ValueError(
                f"{value!r} can change under a running stack; pin an exact release "
                "(haproxy:2.6.12) or a digest (haproxy@sha256:…)"
            )
        return value


class ImagesConfig(StrictModel):
    kafka: KafkaImage = KafkaImage()
    # The official zookeeper image's `zookeeper` user and group are 1000.
    zookeeper: PinnedImage = PinnedImage(image="zookeeper:3.8.4")
    # The official haproxy image (2.4 on) runs as its `haproxy` user, uid and gid 99. 2.6.12 is
    # Debian bookworm's haproxy, which `kafkastack verify` and the Kafka tier run haproxy.cfg with.
    haproxy: PinnedImage = PinnedImage(image="haproxy:2.6.12", user=99, group=99)
