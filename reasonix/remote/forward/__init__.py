"""Port-forward lifecycle for Remote-SSH."""
