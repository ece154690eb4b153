"""``harmless overlay``: the edge-overlay lab (servers, legacy L2 core, VMs), its CLI and demo."""
