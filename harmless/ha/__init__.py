"""Active/standby HARMLESS servers (issue #23, docs/high-availability.md).

:mod:`~harmless.ha.plan` (pure: the pair's plan, roles read from the device), :mod:`~harmless.ha.wire` (the agents'
authenticated messages), :mod:`~harmless.ha.decide` (pure: when a standby takes over), :mod:`~harmless.ha.replica`
(the state both servers need), :mod:`~harmless.ha.failover` (the journaled take-over), :mod:`~harmless.ha.agent`
(``harmless ha agent``), :mod:`~harmless.ha.lab` and :mod:`~harmless.ha.demo` (the two-server lab and its fault
figures), :mod:`~harmless.ha.cli` (``harmless ha ...``, ``harmless failover``).
"""
