"""History search, remembered facts and auto-recall (spec §3.6, MEM-*).

Modules: :mod:`.bm25` (hand-written ranking), :mod:`.facts` (fact files with
revisions), :mod:`.policy` (who may write memory), :mod:`.catalog` (project +
global search), :mod:`.recall` (the per-turn recall suffix), :mod:`.tools`
(``memory``/``remember``/``forget``), :mod:`.history` (``history`` and
``session:tool_result``), :mod:`.commands` (``/memory``, ``/compact``).
"""
