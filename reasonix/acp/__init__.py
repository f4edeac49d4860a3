"""``reasonix acp``: the Agent Client Protocol (v1) over stdio, for editors.

An editor (Zed, JetBrains, Neovim and VS Code plugins …) starts
``reasonix acp`` and talks JSON-RPC 2.0, one message per line. The modules:

- :mod:`.framing` — sans-I/O NDJSON lines; :mod:`.rpc` — ids, pending
  requests and the one exception→wire-error boundary;
- :mod:`.server` — method routing and handlers; :mod:`.session` — one
  runtime per session, built by boot, one cancel token per turn;
- :mod:`.relay` — Runner events → ``session/update``; :mod:`.permissions` —
  Ask → ``session/request_permission``; :mod:`.client_io` — the editor's
  files and terminals as tool ports; :mod:`.replay` — ``session/load``;
- :mod:`.stdio` — the loop the CLI runs.

Like ``serve``, this is a frontend: it builds runtimes only through
:func:`reasonix.boot.build_runtime` and consumes Runner events.
"""
