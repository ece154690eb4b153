"""Per-port QoS on migrated ports (issue #15): ingress policing and egress shaping on the translator's path.

* :mod:`.model`: the inventory field ``qos:`` (validation) and :class:`~.model.PortQos`, the QoS of one port in a plan.
* :mod:`harmless.otc.qos`: what it becomes in OVS (OpenFlow meters on br-otc, QoS/Queue rows on the trunks, the
  kernel classifier for the userspace datapath).
* :mod:`.live`: ``harmless qos set|show|clear`` (journaled, persisted in the state, restored by ``up``).
* :mod:`.demo`: ``harmless qos demo`` (iperf3 measurements on the lab).
* :mod:`.cli`: the ``harmless qos`` command group.

Manual: ``docs/qos.md``.
"""
