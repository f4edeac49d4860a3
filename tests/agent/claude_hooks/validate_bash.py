#!/usr/bin/env python3
"""A PreToolUse hook on "Bash" in the shape of Anthropic's bash command validator example.

Written for these tests (the shape: read the hook input from stdin, look at
tool_name and tool_input.command, print one line per problem to stderr and
exit 2 so the model reads them; see code.claude.com/docs/en/hooks, "Exit code 2
behavior", and the claude-code repository's examples/hooks folder).
"""

import json
import re
import sys

RULES = [
    (r"^grep\b(?!.*\|)", "Use 'rg' (ripgrep) instead of 'grep' for better performance"),
    (r"^find\s+\S+\s+-name\b", "Use 'rg --files -g PATTERN' instead of 'find -name'"),
]


def problems(command: str) -> list[str]:
    return [message for pattern, message in RULES if re.search(pattern, command)]


def main() -> None:
    try:
        data = json.load(sys.stdin)
    except json.JSONDecodeError as exc:
        print(f"Error: invalid JSON input: {exc}", file=sys.stderr)
        sys.exit(1)
    if data.get("tool_name") != "Bash":
        sys.exit(0)
    command = data.get("tool_input", {}).get("command", "")
    found = problems(command)
    if found:
        for message in found:
            print(f"• {message}", file=sys.stderr)
        sys.exit(2)  # blocks the call; stderr goes to the model


if __name__ == "__main__":
    main()
