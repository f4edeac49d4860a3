"""Remote-SSH support (drives the system OpenSSH client)."""
