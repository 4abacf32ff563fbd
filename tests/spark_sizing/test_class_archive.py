"""The driver's class archive: when the job uses it, and that Spark really loads from it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spark_sizing import class_archive, class_archive_recorder


def fake_jdk(root: Path, modules: bytes = b"classes") -> dict[str, str]:
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "java").write_text("#!/bin/sh\n")
    (root / "lib").mkdir()
    (root / "lib" / "modules").write_bytes(modules)
    return {"JAVA_HOME": str(root), "KAFKASTACK_CACHE": str(root / "cache")}


def with_archive_file(env: dict[str, str]) -> Path:
    archive = class_archive.archive_path(env)
    assert archive is not None
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"archive")
    return archive


def test_no_archive_no_option(tmp_path: Path) -> None:
    assert class_archive.java_options(fake_jdk(tmp_path)) is None


def test_an_archive_is_named_on_the_driver_options(tmp_path: Path) -> None:
    env = fake_jdk(tmp_path)
    archive = with_archive_file(env)
    options = class_archive.java_options(env)
    assert options is not None and f"-XX:SharedArchiveFile={archive}" in options.split()


def test_another_jdk_gets_another_archive(tmp_path: Path) -> None:
    first = class_archive.archive_path(fake_jdk(tmp_path / "a"))
    updated = class_archive.archive_path(fake_jdk(tmp_path / "b", modules=b"patched classes"))
    assert first is not None and updated is not None and first.name != updated.name


def pyspark_install(site: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`site`/pyspark as the pyspark the job imports; its jars folder, made."""
    (site / "pyspark" / "jars").mkdir(parents=True)
    monkeypatch.setattr(class_archive.pyspark, "__file__", str(site / "pyspark" / "__init__.py"))
    return site / "pyspark" / "jars"


def test_a_reinstalled_pyspark_gets_another_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = fake_jdk(tmp_path / "jdk")
    jar = pyspark_install(tmp_path / "site", monkeypatch) / "spark-core.jar"
    jar.write_bytes(b"classes")
    first = class_archive.archive_path(env)
    jar.unlink()  # its jars written again, at the same path
    jar.write_bytes(b"classes")
    os.utime(jar, ns=(0, 10**18))
    again = class_archive.archive_path(env)
    assert first is not None and again is not None and first.name != again.name


def test_a_checkout_with_links_to_the_same_jars_shares_the_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two clones' virtualenvs installed from uv's cache: each jar a hard link to one file.
    The JVM takes the same file at another path, so recording again would only cost a minute."""
    env = fake_jdk(tmp_path / "jdk")
    first_jar = pyspark_install(tmp_path / "clone-a", monkeypatch) / "spark-core.jar"
    first_jar.write_bytes(b"classes")
    first = class_archive.archive_path(env)
    copy = pyspark_install(tmp_path / "clone-b", monkeypatch) / "spark-core.jar"
    os.link(first_jar, copy)
    linked = class_archive.archive_path(env)
    copy.unlink()
    copy.write_bytes(b"classes")  # the same bytes in a file of its own: the JVM refuses that
    copied = class_archive.archive_path(env)
    assert first is not None and first == linked
    assert copied is not None and copied != first


@pytest.mark.parametrize(
    "launcher",
    [
        {"PYSPARK_GATEWAY_PORT": "41234"},
        {"PYSPARK_SUBMIT_ARGS": "--driver-java-options -Xmx2g pyspark-shell"},
        {"PYSPARK_SUBMIT_ARGS": "--conf spark.driver.extraJavaOptions=-Xss4m pyspark-shell"},
    ],
)
def test_java_options_chosen_elsewhere_stand(tmp_path: Path, launcher: dict[str, str]) -> None:
    env = fake_jdk(tmp_path)
    with_archive_file(env)
    assert class_archive.java_options({**env, **launcher}) is None


def test_spark_defaults_java_options_stand(tmp_path: Path) -> None:
    env = fake_jdk(tmp_path)
    with_archive_file(env)
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "spark-defaults.conf").write_text(
        "# site settings\nspark.driver.defaultJavaOptions -XX:+UseG1GC\n"
    )
    assert class_archive.java_options({**env, "SPARK_CONF_DIR": str(tmp_path / "conf")}) is None


@pytest.mark.spark
def test_the_recorded_archive_serves_sparks_classes(tmp_path: Path) -> None:
    archive = class_archive.archive_path(os.environ)
    assert archive is not None and archive.is_file(), (
        "no class archive for this JDK and pyspark: run `make spark-cds`"
    )
    # A fresh process, as `kafkastack size` is: its driver JVM logs where each class came from.
    # (JAVA_TOOL_OPTIONS reaches spark-submit's launcher JVM too: a log per process.)
    env = {**os.environ, "JAVA_TOOL_OPTIONS": f"-Xlog:class+load=info:file={tmp_path}/%p.log"}
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    script = "from spark_sizing.session import spark_session; spark_session().range(3).count()"
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=300)
    loaded = "".join(log.read_text() for log in tmp_path.glob("*.log"))
    assert "org.apache.spark.SparkContext source: shared objects file (top)" in loaded
    from_archive = loaded.count("source: shared objects file (top)")
    assert from_archive > 5000, f"only {from_archive} classes came from {archive}"


def test_recording_keeps_the_archives_of_other_installs_that_still_exist(tmp_path: Path) -> None:
    living, removed = tmp_path / "checkout-a" / "pyspark", tmp_path / "checkout-b" / "pyspark"
    living.mkdir(parents=True)
    for name, install in (("spark-a", living), ("spark-b", removed), ("spark-c", None)):
        (tmp_path / f"{name}.jsa").write_bytes(b"archive")
        if install is not None:
            (tmp_path / f"{name}.install").write_text(str(install))
    class_archive_recorder.remove_archives_of_removed_installs(tmp_path)
    assert sorted(p.name for p in tmp_path.glob("spark-*")) == ["spark-a.install", "spark-a.jsa"]


def test_recording_an_archive_that_exists_keeps_it_for_this_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checkout that recorded it may be gone (a CI clone): the next recording of another
    install's archive would delete one whose install is gone, though this one uses it."""
    env = fake_jdk(tmp_path / "jdk")
    jars = pyspark_install(tmp_path / "clone-b", monkeypatch)
    archive = with_archive_file(env)
    archive.with_suffix(".install").write_text(str(tmp_path / "clone-a" / "pyspark"))
    assert class_archive_recorder.record(env) == archive
    assert archive.with_suffix(".install").read_text().split() == [str(jars.parent)]
    class_archive_recorder.remove_archives_of_removed_installs(archive.parent)
    assert archive.is_file()


def test_a_shared_archive_stays_while_any_install_that_asked_for_it_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-lived checkout and the CI clones after it share one archive: the last clone
    going must not take it from the checkout."""
    env = fake_jdk(tmp_path / "jdk")
    pyspark_install(tmp_path / "checkout", monkeypatch)
    archive = with_archive_file(env)
    class_archive_recorder.record(env)
    clone = pyspark_install(tmp_path / "ci-clone", monkeypatch)
    class_archive_recorder.record(env)
    installs = archive.with_suffix(".install").read_text().split()
    assert installs == [str(tmp_path / "checkout" / "pyspark"), str(clone.parent)]
    shutil.rmtree(tmp_path / "ci-clone")
    class_archive_recorder.remove_archives_of_removed_installs(archive.parent)
    assert archive.is_file()
    shutil.rmtree(tmp_path / "checkout")
    class_archive_recorder.remove_archives_of_removed_installs(archive.parent)
    assert not archive.exists()


def test_a_spark_home_chosen_elsewhere_is_the_one_the_recording_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job's runs use a SPARK_HOME the user set: the archive must match its jars, not
    links to pyspark's own."""
    jars = pyspark_install(tmp_path / "site", monkeypatch)
    own = class_archive_recorder.uses_pyspark_home
    assert own({}) and own({"SPARK_HOME": str(jars.parent)})
    assert not own({"SPARK_HOME": str(tmp_path / "spark-4.0.1-bin-hadoop3")})


def test_the_recording_runs_from_links_that_outlive_the_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The archive names the jar paths it was recorded with, and the JVM takes another
    checkout's jars only while those still exist: the recording's Spark home is hard links in
    the cache, which outlive the checkout and go with the archive."""
    jars = pyspark_install(tmp_path / "clone-a", monkeypatch)
    (jars / "spark-core.jar").write_bytes(b"classes")
    (jars.parent / "bin").mkdir()
    (jars.parent / "bin" / "spark-submit").write_text("#!/bin/sh\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    home = class_archive_recorder.linked_spark_home(cache / "spark-x.home")
    assert home is not None
    assert (home / "jars" / "spark-core.jar").samefile(jars / "spark-core.jar")
    assert (home / "bin" / "spark-submit").samefile(jars.parent / "bin" / "spark-submit")
    (cache / "spark-x.jsa").write_bytes(b"archive")
    (cache / "spark-x.install").write_text(str(tmp_path / "clone-gone" / "pyspark"))
    class_archive_recorder.remove_archives_of_removed_installs(cache)
    assert list(cache.iterdir()) == []
