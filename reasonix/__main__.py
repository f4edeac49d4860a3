"""Entry point for ``python -m reasonix`` and the zipapp."""

from __future__ import annotations

import sys


def _main() -> None:
    from reasonix.cli.main import main

    sys.exit(main(sys.argv[1:]))


if __name__ == "__main__":
    _main()
