"""Built-in tools; each module registers itself through register_builtin on import."""
