"""HARMLESS cost planning: CAPEX/OPEX models of Csikor et al., IFIP Networking 2018.

``catalog`` (prices, ``catalog_2017.yaml``), ``models`` (Sec. III and IV.B.3 formulas),
``opex`` (Table I, TCO), ``sensitivity`` (break-even prices), ``report`` (HTML/PDF), ``cli``
(the ``harmless capex`` click group).
"""
