"""Configuration: paths, loading and merging, .env, ${VAR} expansion, model resolution."""
