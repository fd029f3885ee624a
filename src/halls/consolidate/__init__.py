"""The consolidator ("dreaming"): turns short-term recurrence into long-term facts.

Pure steps, one concept per module: ``cluster`` (embedding clusters),
``evidence`` (how much a cluster counts), ``briefs`` (hints, noise, finished
intents), ``reconcile`` (ADD/UPDATE/DELETE/NONE against known facts), ``pii``
(PII and secret detection, forget-flag classes), ``decay``, ``candidates``
(the clusters of statements a run reads), ``consensus`` (a cluster's readings
against a fact, made one answer). The engines (``heuristic``, ``llm``) decide,
behind the ``engine.Engine`` protocol, through the plan they share
(``plan``); the ``runner`` reads through the Store, asks the engine, applies
the plan (``apply``: its actions and changes) in one transaction and writes
the run record; ``revert`` undoes a run; ``due``
keeps when a store is next due (the timer itself is the service's
``halls.service.scheduler``).
"""
