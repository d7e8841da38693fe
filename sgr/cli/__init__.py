"""The ``sgr`` command line, one module per command group; ``cli.py`` assembles the Typer app."""
