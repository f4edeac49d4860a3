"""Sub-agents: skills, profiles, the one spawn primitive, fleets and adjudication.

Modules (each has one job):

* :mod:`.skills` — ``SKILL.md`` discovery and the compact skill index;
* :mod:`.profile` — :class:`Profile` and ``profile_from_skill`` (the single narrowing point);
* :mod:`.spec` — the per-call concepts (``TaskSpec``, ``CapabilityGrant``,
  ``SchedulerPolicy``, ``ContextRequest``) and ``ProfileExecSpec``;
* :mod:`.claims` — write claims resolved to real paths;
* :mod:`.scheduler` — the session scheduler (concurrency, writers, claim overlap);
* :mod:`.scope` — a child's tool registry narrowed to its grant;
* :mod:`.ledger` — host receipts gathered from a child's events;
* :mod:`.completion` — ``complete_subtask`` and adjudication;
* :mod:`.capsule` — the ``ContextCapsule`` sidecar;
* :mod:`.spawn` — ``TaskTool.run_profile_spec``, the only construction primitive;
* :mod:`.fleet` — the small dependency graph;
* :mod:`.tools` — the model-facing tools (``task`` … ``run_skill``).
"""
