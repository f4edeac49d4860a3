"""A real MCP server (our SDK server) whose stdout also carries garbage lines.

It relays the SDK server's stdout line by line and writes a non-JSON line
before every message, so garbage arrives at start-up and between answers.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

server = Path(__file__).with_name("sdk_server.py")
sys.stdout.write("Starting up... not JSON\n{broken json\n")
sys.stdout.flush()
child = subprocess.Popen([sys.executable, str(server), "stdio"], stdout=subprocess.PIPE)
assert child.stdout is not None
for line in child.stdout:
    sys.stdout.buffer.write(b"relay: between messages\n" + line)
    sys.stdout.flush()
sys.exit(child.wait())
