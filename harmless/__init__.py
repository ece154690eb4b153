"""HARMLESS: add OpenFlow to a legacy 802.1Q switch by tagging and hairpinning (Csikor et al., IFIP Networking 2018).

The package behind the ``harmless`` CLI. Components live in their own folders and import as sub-packages:
``harmless.otc`` (``otc/``), ``harmless.switch_drivers`` (``switch-drivers/``), ``harmless.pipelines``
(``pipelines/``), ``harmless.bench`` (``bench/``).
"""

__version__ = "0.1.0"


def _reopen_closed_standard_streams() -> None:
    """Give a process started with stdin, stdout or stderr closed (``harmless up >&- 2>&-``) ``/dev/null`` there, before
    anything is imported: Python leaves ``sys.stdout`` None then, which some libraries do not survive at import
    (ciscoconfparse2 adds a loguru handler on ``sys.stdout``), and a file opened later (the journal) would take the
    free descriptor and receive the output. Output errors once running: :func:`harmless.clikit.guard_output`."""
    import os
    import sys
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, mode, closefd=False))  # noqa: SIM115 - lives as long as the process


_reopen_closed_standard_streams()
