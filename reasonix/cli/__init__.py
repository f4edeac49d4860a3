"""Command-line interface: argument parsing, exit codes, output formats (top layer)."""
