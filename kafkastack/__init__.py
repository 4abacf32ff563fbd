"""The kafkastack command line: parses arguments and delegates to spark_sizing and infra."""
