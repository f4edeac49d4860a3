"""Prints garbage on stdout before handing over to our SDK server (a real MCP server)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.stdout.write("Starting up... not JSON\n{broken json\n")
sys.stdout.flush()
server = Path(__file__).with_name("sdk_server.py")
os.execv(sys.executable, [sys.executable, str(server), "stdio"])
