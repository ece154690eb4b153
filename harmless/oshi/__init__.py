"""OSHI lab and tooling: topology files, deployment into network namespaces (one OVS + one FRR per node), the
``harmless oshi`` commands, the demo and the Sec. VII benchmark. The node pipeline and the controller live in
:mod:`harmless.pipelines.oshi`."""
