"""Size Apache Kafka clusters from projected topic throughput (PySpark)."""
