"""`python -m spark_sizing …` and `spark-submit spark_sizing/__main__.py …`: the sizing CLI."""

from kafkastack.cli import app

app()
