"""`python -m spark_sizing …` and `spark-submit spark_sizing/__main__.py …`: the sizing commands
only (`size`, `sample-projections`), not the whole kafkastack CLI."""

import typer

from kafkastack import sizing_commands

app = typer.Typer(name="spark_sizing", no_args_is_help=True, add_completion=False)
sizing_commands.register(app)

if __name__ == "__main__":
    app()
