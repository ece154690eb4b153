"""OSHI: the hybrid IP/SDN node (Salsano et al., "OSHI - Open Source Hybrid IP/SDN networking and Mantoo",
IEEE TNSM 2015; ``shared/seeds/000_ed49ff7c8a06242b.txt``) on an OpenFlow bridge, e.g. a HARMLESS ``br-of``.

Modules (pure unless stated):
  * :mod:`.lme` -- the node's Local Management Entity flows (table 0, installed by the node, not the controller).
  * :mod:`.model` -- services, end points, topology views, service records (pydantic).
  * :mod:`.labels` -- MPLS label allocation per link.
  * :mod:`.paths` -- shortest paths and the Steiner-tree heuristic (networkx).
  * :mod:`.services` -- planning a service (paths, labels, virtual bridging points) and its flows
    (:class:`harmless.openflow.Flow`, which also renders them as os-ken FLOW_MODs, Nicira encap/decap included).
  * :mod:`.manager` -- the service life cycle: create/delete/restore/re-route, persistence (side effects through
    an installer interface).
  * :mod:`.api` -- the small HTTP API (WSGI) and its client.
  * :mod:`.controller` -- the os-ken application (``osken-manager harmless.pipelines.oshi.controller``).
"""
