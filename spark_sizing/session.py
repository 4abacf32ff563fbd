"""The sizing job's Spark session: defaults tuned for its one shuffle, and the guards it needs
around Spark's observed metrics (SPARK-54620)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from pyspark.sql import Observation, SparkSession

from spark_sizing import class_archive, s3a

# The job's one big shuffle (rows grouped by topic) is sized by adaptive execution: partitions of
# about 16 MB keep each sort in memory under the default 1 GB driver (8 fixed partitions spilled
# 1 GB at 50M rows), and small inputs coalesce to a few partitions.
SESSION_DEFAULTS = {
    "spark.sql.adaptive.advisoryPartitionSizeInBytes": "16m",
    # The per-(topic, month) pieces are persisted, and Spark plans a cached query with
    # adaptive coalescing off unless this is set: 200 tiny tasks instead of a few dozen.
    "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning": "true",
    # Input splits of 32 MB rather than 128: a 430 MB file makes 14 tasks that two cores share
    # evenly, where 4 left one core idle for a quarter of the scan.
    "spark.sql.files.maxPartitionBytes": "32m",
    # Periods without a zone, and calendar months, are UTC whatever the machine's zone.
    "spark.sql.session.timeZone": "UTC",
}


def spark_session(reads_s3: bool = False, java_options: str | None = None) -> SparkSession:
    """The session, with local defaults that spark-submit or spark-defaults.conf may override.

    `reads_s3` adds the cached s3a connector; the jars cost about a second of JVM start, so
    local inputs go without. A JVM started here uses the class archive when there is one
    (class_archive.py), or `java_options` instead when given."""
    # The console progress bar would fight rich's progress lines on the same terminal.
    builder = SparkSession.builder.appName("kafkastack-sizing").config(
        "spark.ui.showConsoleProgress", "false"
    )
    if reads_s3:
        # s3a's jars must be named before the JVM starts; spark-submit's --jars/--packages win.
        builder = s3a.with_connector(builder)
    if java_options is not None:
        builder = builder.config(class_archive.JAVA_OPTION_KEYS[0], java_options)
    else:
        builder = class_archive.with_archive(builder)
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    spark = builder.getOrCreate()
    submitted = spark.sparkContext.getConf()
    for key, value in SESSION_DEFAULTS.items():
        if not submitted.contains(key):
            spark.conf.set(key, value)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


EXCLUDED_AQE_RULES = "spark.sql.adaptive.optimizer.excludedRules"
PROPAGATE_EMPTY = "org.apache.spark.sql.execution.adaptive.AQEPropagateEmptyRelation"


@contextmanager
def observed_plan_kept_whole(spark: SparkSession) -> Iterator[None]:
    """Keeps adaptive execution from pruning an observed plan around an empty stage.

    SPARK-54620 (open in Spark 4.0): when no row passes validation, the empty shuffle lets
    adaptive execution replace the plan above and below it, metrics node included, and
    Observation.get then waits forever. Only the counted action runs with the rule off."""
    before = spark.conf.get(EXCLUDED_AQE_RULES, None)
    spark.conf.set(EXCLUDED_AQE_RULES, ",".join(r for r in (before, PROPAGATE_EMPTY) if r))
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(EXCLUDED_AQE_RULES)
        else:
            spark.conf.set(EXCLUDED_AQE_RULES, before)


OBSERVATION_WAIT_S = 60.0


def observed_counts(observation: Observation, *names: str) -> tuple[int, ...]:
    """The observed counts, or a clear error if Spark never reports them.

    Metrics reach the driver through the listener bus shortly after the action; Observation.get
    would wait forever if they never come, so the wait has a deadline."""
    future = observation._jo.future() if observation._jo is not None else None
    deadline = time.monotonic() + OBSERVATION_WAIT_S
    while future is not None and not future.isCompleted():
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"Spark did not report the row counts within {OBSERVATION_WAIT_S:.0f} s after "
                "the aggregation finished; please report this with the Spark version"
            )
        time.sleep(0.05)
    metrics = observation.get
    return tuple(int(metrics[name]) for name in names)
