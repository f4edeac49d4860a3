"""A stand-in browser for ``BROWSER=…``: fetch the URL, follow redirects, exit."""

from __future__ import annotations

import sys
import urllib.error
import urllib.request

opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    with opener.open(sys.argv[1], timeout=20) as resp:
        resp.read()
except urllib.error.HTTPError as exc:
    exc.close()
    sys.exit(1)
