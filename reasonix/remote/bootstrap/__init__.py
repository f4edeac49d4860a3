"""Starts a detached `reasonix serve` on a remote host."""
