"""Installing what Faucet's integration suite needs: Debian packages, and a virtualenv of its own with the pinned
Python packages and the ``faucet`` sdist (its ``faucet/``, ``clib/`` and ``tests/integration/``).

Idempotent: a second call finds the stamp file (same Faucet version, same pins) and downloads nothing. The layout
under the suite folder (default ``<repo>/.faucet-suite``, or ``$HARMLESS_FAUCET_SUITE``)::

    venv/                        the suite's virtualenv (Debian's mininet module linked into it)
    faucet-<version>.tar.gz      the sdist from PyPI
    src/                         the unpacked sdist (FAUCET_DIR = src/faucet)
    installed.json               the stamp: version, hash of the pins
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from harmless.errors import HarmlessError
from harmless.procs import run

FAUCET_VERSION = "1.10.12"
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
PINS = HERE / "requirements.txt"
SITECUSTOMIZE = HERE / "sitecustomize.py"
#: Debian packages the suite calls (clib's EXTERNAL_DEPENDENCIES, mininet's mnexec and Python module, wpa_supplicant for
#: the EAPOL tests)
APT_PACKAGES = ("mininet", "netcat-openbsd", "psmisc", "lsof", "curl", "iperf", "fping", "ndisc6", "tshark",
                "ladvd", "exabgp", "socat", "tcpdump", "ethtool", "wpasupplicant")
MININET_MODULE = Path("/usr/lib/python3/dist-packages/mininet")


class SuiteError(HarmlessError):
    """Installing or running Faucet's suite failed."""


@dataclass(frozen=True)
class Suite:
    """Where the suite lives. ``root``: the suite folder."""

    root: Path

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def src(self) -> Path:
        return self.root / "src"

    @property
    def sdist(self) -> Path:
        return self.root / f"faucet-{FAUCET_VERSION}.tar.gz"

    @property
    def stamp(self) -> Path:
        return self.root / "installed.json"


def default_suite() -> Suite:
    """The suite folder: ``$HARMLESS_FAUCET_SUITE`` or ``<repo>/.faucet-suite``."""
    return Suite(Path(os.environ.get("HARMLESS_FAUCET_SUITE") or REPO / ".faucet-suite").resolve())


def wanted_stamp() -> dict:
    """What a complete install records: the Faucet version and the SHA-256 of the pins and sitecustomize files."""
    return {"faucet": FAUCET_VERSION, "pins_sha256": hashlib.sha256(PINS.read_bytes()).hexdigest(),
            "sitecustomize_sha256": hashlib.sha256(SITECUSTOMIZE.read_bytes()).hexdigest()}


def missing_apt() -> list[str]:
    """The Debian packages of :data:`APT_PACKAGES` that are not installed."""
    out = []
    for p in APT_PACKAGES:
        r = run(["dpkg-query", "-W", "-f=${Status}", p], check=False)
        if "ok installed" not in r.stdout:
            out.append(p)
    return out


def installed(suite: Suite) -> bool:
    """True when the stamp matches and the virtualenv, the sources and the Debian packages are there."""
    try:
        stamp = json.loads(suite.stamp.read_text())
    except (OSError, ValueError):
        return False
    return stamp == wanted_stamp() and suite.python.exists() and (suite.src / "clib").is_dir() and not missing_apt()


def _step(argv: list[str], what: str, timeout: float = 900, env: dict | None = None) -> None:
    run(argv, timeout=timeout, env=env, error=SuiteError, where=what,
        fix="see the message above; the suite needs Debian's and PyPI's package servers")


def install_apt(progress=print) -> None:
    """``apt-get install`` the missing :data:`APT_PACKAGES` (no questions asked)."""
    missing = missing_apt()
    if not missing:
        return
    progress(f"apt: {' '.join(missing)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    _step(["apt-get", "update", "-q"], "apt-get update", env=env)
    _step(["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing], "apt-get install", env=env)


def install_venv(suite: Suite, progress=print) -> None:
    """The virtualenv with the pins, the unpacked sdist installed into it, Debian's mininet module linked in, and
    :data:`SITECUSTOMIZE` (scapy without the layers no test uses)."""
    if not suite.python.exists():
        progress(f"virtualenv {suite.venv}")
        _step([os.environ.get("PYTHON", "python3"), "-m", "venv", str(suite.venv)], "python3 -m venv")
    pip = [str(suite.python), "-m", "pip", "-q", "--disable-pip-version-check"]
    progress(f"pip: {PINS.name} ({sum(1 for ln in PINS.read_text().splitlines() if '==' in ln)} pins)")
    _step([*pip, "install", "-r", str(PINS)], "pip install -r requirements.txt")
    if not suite.sdist.exists():
        progress(f"pip download faucet=={FAUCET_VERSION} (sdist)")
        _step([*pip, "download", "--no-deps", "--no-binary", ":all:", f"faucet=={FAUCET_VERSION}", "-d",
               str(suite.root)], "pip download faucet")
    if suite.src.exists():
        shutil.rmtree(suite.src)
    with tarfile.open(suite.sdist) as t:
        t.extractall(suite.root, filter="data")
    (suite.root / f"faucet-{FAUCET_VERSION}").rename(suite.src)
    # no git metadata in an sdist: pbr takes the version from PBR_VERSION
    _step([*pip, "install", "--no-deps", str(suite.src)], "pip install faucet sdist",
          env={**os.environ, "PBR_VERSION": FAUCET_VERSION})
    site = run([str(suite.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    link = Path(site) / "mininet"
    if not link.exists():
        link.symlink_to(MININET_MODULE)
    shutil.copy(SITECUSTOMIZE, Path(site) / "sitecustomize.py")     # scapy without unused layers (its docstring)


def install(suite: Suite | None = None, progress=print) -> Suite:
    """Install everything (skipped when :func:`installed`); returns the suite.

    Raises:
        SuiteError: a package could not be installed (the step and its output are named).
    """
    suite = suite or default_suite()
    if installed(suite):
        progress(f"already installed in {suite.root}")
        return suite
    if os.geteuid() != 0:
        raise SuiteError("install", "installing Debian packages needs root", "run it as root")
    suite.root.mkdir(parents=True, exist_ok=True)
    install_apt(progress)
    if suite.stamp.exists():
        suite.stamp.unlink()
    install_venv(suite, progress)
    if not MININET_MODULE.is_dir():
        raise SuiteError("install", f"{MININET_MODULE} is missing after installing mininet", "apt-get install mininet")
    suite.stamp.write_text(json.dumps(wanted_stamp(), indent=2) + "\n")
    progress(f"installed in {suite.root} (python {sys.version.split()[0]})")
    return suite
