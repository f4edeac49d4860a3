"""Permission policy: decisions, rules, modes and the bash classifier."""
