"""The project's test library (Faucet's ``clib/`` is the model): import as ``from tests.lib.fakeoftable import ...``
(``python -m pytest`` from the repository root puts the root on ``sys.path``)."""
