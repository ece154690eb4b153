"""HARMLESS: add OpenFlow to a legacy 802.1Q switch by tagging and hairpinning (Csikor et al., IFIP Networking 2018).

The package behind the ``harmless`` CLI. Components live in their own folders and import as sub-packages:
``harmless.otc`` (``otc/``), ``harmless.switch_drivers`` (``switch-drivers/``), ``harmless.pipelines``
(``pipelines/``), ``harmless.bench`` (``bench/``).
"""

__version__ = "0.1.0"
