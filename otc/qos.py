"""Per-port QoS in OVS (issue #15, ``docs/qos.md``): meters on br-otc, QoS/Queue rows on the trunks.

For a migrated port with ``qos`` in the plan (:class:`harmless.qos.model.PortQos`):

* **ingress** (host -> br-of): OpenFlow meter :func:`meter_id` (= the port's patch port number on br-otc) with one
  ``drop`` band at ``ingress_mbps`` (kbit/s) and ``burst_size`` in kbit; the translator's ``pop_vlan`` flow of the
  port's VID starts with ``meter:<id>`` (:mod:`.flows`). Userspace (netdev/DPDK) datapath meters: OVS >= 2.10.
* **egress** (br-of -> host): a queue with id :func:`queue_id` (= the port's OpenFlow port number) in the QoS row of
  the port's trunk, selected by ``set_queue:<id>`` in the translator's ``push_vlan`` flow:

  - ``system`` trunks: QoS ``linux-htb`` or ``linux-hfsc`` (``ovs-vswitchd.conf.db(5)``): Queue ``max-rate`` and
    ``min-rate`` = the rate (bit/s), ``burst`` (bit; default 10 ms at the rate,
    :data:`harmless.qos.model.EGRESS_BURST_S`). OVS builds the kernel qdisc, one class ``1:<id+1>`` per queue.
    The userspace datapath sends on the trunk through an AF_PACKET socket and does not pass ``set_queue`` on as the
    packet's priority (measured: every packet lands in the default class ``1:1``), so HARMLESS also attaches one
    ``cls_bpf`` classifier per queue to the qdisc that sends frames whose outer VID is the port's VID to the queue's
    class (:func:`bpf_bytecode`): the port's VID on the trunk *is* the port, so this is the same selection.
  - ``dpdk``/``dpdkvhostuserclient`` trunks: QoS ``trtcm-policer`` (RFC 4115 two-rate three-colour marker in
    OVS-DPDK): Queue ``cir`` = the rate (bytes/s of IP packets, without the Ethernet header) and ``cbs`` the burst
    (bytes), ``eir``/``ebs`` 0; the port level is left open (:data:`PORT_CEILING_BPS`). Policing, not shaping.
  - ``afxdp`` trunks: refused at validation (AF_XDP transmits bypass the qdisc).

Every QoS and Queue row HARMLESS creates carries ``external_ids:harmless=qos`` (QoS and Queue are root tables in
OVSDB: nothing deletes them but an explicit ``destroy``); :func:`remove_commands` destroys all of them, which
``down`` runs with the bridge removal, so no orphan is left.
"""
from __future__ import annotations

import os
import re
import subprocess

from harmless import procs
from harmless.errors import OvsError
from harmless.openflow import meter_ofctl
from harmless.otc.flows import OTC_BRIDGE, patch_ofport
from harmless.ovs import Ovs
from harmless.plan import Plan
from harmless.qos.model import EGRESS_BY_TRUNK, PortQos

#: ``external_ids:harmless`` value of the QoS and Queue rows HARMLESS creates
MARK = "qos"
#: the trunk-level ceiling of HARMLESS's QoS rows (bit/s): 10 Gbit/s, the trunk speed the paper sizes for (Sec. IV);
#: ports without a queue share it (linux-htb would otherwise take the link speed OVS reads, 1 Gbit/s for a veth)
PORT_CEILING_BPS = 10_000_000_000
OF13 = ("-O", "OpenFlow13")


def meter_id(switch_index: int, ofport: int) -> int:
    """OpenFlow meter id of a port's ingress policer on br-otc: its patch port number (``i*1000 + ofport``)."""
    return patch_ofport(switch_index, ofport)


def queue_id(ofport: int) -> int:
    """Queue id of a port's egress queue on its trunk: its OpenFlow port number (1..899, never 0 = default)."""
    return ofport


def qos_type(trunk_type: str, scheduler: str) -> str:
    """OVS QoS type for a trunk type and scheduler: ``linux-htb``, ``linux-hfsc`` or ``trtcm-policer``.

    Raises:
        ValueError: the trunk type cannot enforce egress QoS (``afxdp``).
    """
    mech = EGRESS_BY_TRUNK.get(trunk_type)
    if mech is None:
        raise ValueError(f"a {trunk_type} trunk cannot enforce egress QoS")
    return "trtcm-policer" if mech == "trtcm-policer" else f"linux-{scheduler}"


# ---------------------------------------------------------------------------- what the plan wants (pure)
def wanted_meters(plan: Plan) -> dict[int, tuple[int, int]]:
    """``{meter id: (rate kbit/s, burst kbit)}`` for every port with ingress QoS. Pure."""
    out = {}
    for i, sp in plan.numbered():
        for p in sp.ports:
            if p.qos is not None and p.qos.ingress_mbps is not None:
                out[meter_id(i, p.ofport)] = (p.qos.meter_kbps, p.qos.meter_burst_kb)
    return out


def wanted_trunks(plan: Plan) -> dict[str, dict]:
    """Per trunk server interface that needs a QoS row: ``{iface: {"type": OVS QoS type, "queues": {queue id:
    {"qos": PortQos, "vid": VID, "interface": legacy port}}}}``. Pure.

    Raises:
        ValueError: two ports on one trunk ask for different schedulers (one QoS row per trunk), or a trunk type
            that cannot shape has a port with egress (validation refuses both first).
    """
    out: dict[str, dict] = {}
    for sp in plan.switches:
        trunks = {t.switch_port: t for t in sp.trunks}
        for p in sp.ports:
            if p.qos is None or p.qos.egress_mbps is None:
                continue
            t = trunks[p.trunk]
            typ = qos_type(t.type, p.qos.scheduler)
            cur = out.setdefault(t.server_interface, {"type": typ, "queues": {}})
            if cur["type"] != typ:
                raise ValueError(f"trunk {t.server_interface} would need both {cur['type']} and {typ}: one scheduler "
                                 "per trunk")
            cur["queues"][queue_id(p.ofport)] = {"qos": p.qos, "vid": p.vid, "interface": p.interface}
    return out


def queue_config(typ: str, q: PortQos) -> list[str]:
    """``other_config`` of one Queue row as ``key=value`` strings (units: ovs-vswitchd.conf.db(5)). Pure."""
    bps = q.egress_bps
    if typ == "trtcm-policer":
        cbs = max(2048, q.queue_burst_kb * 125)      # bytes; DPDK needs cbs > 0 with cir > 0
        return [f"cir={bps // 8}", f"cbs={cbs}", "eir=0", "ebs=0"]
    return [f"max-rate={bps}", f"min-rate={bps}", f"burst={q.queue_burst_kb * 1000}"]


def port_config(typ: str) -> list[str]:
    """``other_config`` of the trunk's QoS row (the ceiling all its queues share). Pure."""
    if typ == "trtcm-policer":
        return [f"cir={PORT_CEILING_BPS // 8}", "cbs=1048576", "eir=0", "ebs=0"]
    return [f"max-rate={PORT_CEILING_BPS}"]


def ovsdb_commands(want: dict[str, dict], rows: dict) -> list[list[str]]:
    """ovs-vsctl commands (one transaction) that make the trunks' QoS/Queue rows equal ``want``. Pure.

    Args:
        want: :func:`wanted_trunks`.
        rows: :func:`read_rows` (``{"ports": {name: qos uuid | None}, "qos": {uuid: {"type", "queues": {id: uuid},
            "external_ids"}}, "queue": {uuid: {"external_ids"}}}``).

    Returns:
        The commands; rows HARMLESS made that nothing wants any more are destroyed (no orphans).

    Raises:
        OvsError: a trunk carries a QoS row HARMLESS did not make (it is never overwritten).
    """
    txn = _QosTxn()
    for iface, w in sorted(want.items()):
        cur = rows["ports"].get(iface)
        row = rows["qos"].get(cur) if cur else None
        if row is not None and row["external_ids"].get("harmless") != MARK:
            raise OvsError(iface, "the trunk carries a QoS row HARMLESS did not make",
                           f"remove it (ovs-vsctl clear Port {iface} qos) or drop qos from this trunk's ports")
        if row is not None and row["type"] == w["type"]:
            txn.update_qos(cur, row, w)
        else:
            txn.create_qos(iface, w)
    txn.drop_unkept(rows, want)
    return txn.cmds


class _QosTxn:
    """The commands of :func:`ovsdb_commands` as they are built: which rows are kept, and the counter that names
    new rows (``@hq<n>``, ``@hqos<n>``) uniquely within the transaction."""

    def __init__(self):
        self.cmds: list[list[str]] = []
        self.keep_qos: set[str] = set()
        self.keep_queue: set[str] = set()
        self.n = 0

    def _create_queue(self, typ: str, spec: dict) -> str:
        """Append a ``create Queue`` command; return its ``@hq<n>`` name."""
        self.n += 1
        self.cmds.append(["--id=@hq%d" % self.n, "create", "Queue",
                          *[f"other_config:{c}" for c in queue_config(typ, spec["qos"])],
                          f"external_ids:harmless={MARK}", f"external_ids:harmless-port={spec['interface']}"])
        return f"@hq{self.n}"

    def update_qos(self, cur: str, row: dict, w: dict) -> None:
        """Keep QoS row ``cur`` (same type as wanted): its settings, its queues updated, added or removed."""
        self.keep_qos.add(cur)
        self.cmds.append(["set", "QoS", cur, *[f"other_config:{c}" for c in port_config(w["type"])]])
        for qid, spec in sorted(w["queues"].items()):
            quuid = row["queues"].get(qid)
            if quuid:
                self.keep_queue.add(quuid)
                cfg = queue_config(w["type"], spec["qos"])
                self.cmds.append(["clear", "Queue", quuid, "other_config"])
                self.cmds.append(["set", "Queue", quuid, *[f"other_config:{c}" for c in cfg],
                                  f"external_ids:harmless-port={spec['interface']}"])
            else:
                ref = self._create_queue(w["type"], spec)
                self.cmds.append(["add", "QoS", cur, "queues", f"{qid}={ref}"])
        for qid in sorted(row["queues"]):
            if qid not in w["queues"]:
                self.cmds.append(["remove", "QoS", cur, "queues", str(qid)])

    def create_qos(self, iface: str, w: dict) -> None:
        """A new QoS row with its queues on trunk ``iface`` (replacing whatever HARMLESS row it had)."""
        refs = [f"queues:{qid}={self._create_queue(w['type'], spec)}" for qid, spec in sorted(w["queues"].items())]
        self.n += 1
        self.cmds.append([f"--id=@hqos{self.n}", "create", "QoS", f"type={w['type']}",
                          *[f"other_config:{c}" for c in port_config(w["type"])], *refs,
                          f"external_ids:harmless={MARK}", f"external_ids:harmless-trunk={iface}"])
        self.cmds.append(["set", "Port", iface, f"qos=@hqos{self.n}"])

    def drop_unkept(self, rows: dict, want: dict) -> None:
        """Whatever HARMLESS made that is not kept: detach, then destroy (QoS and Queue rows are never
        garbage-collected)."""
        for port, cur in sorted(rows["ports"].items(), key=lambda kv: kv[0]):
            if cur and cur not in self.keep_qos and _ours(rows["qos"].get(cur, {})) and port not in want:
                self.cmds.append(["clear", "Port", port, "qos"])
        for u, row in sorted(rows["qos"].items()):
            if u not in self.keep_qos and _ours(row):
                self.cmds.append(["destroy", "QoS", u])
        for u, row in sorted(rows["queue"].items()):
            if u not in self.keep_queue and _ours(row):
                self.cmds.append(["destroy", "Queue", u])


def _ours(row: dict) -> bool:
    """True when an OVSDB row carries HARMLESS's QoS mark (``external_ids:harmless=qos``). Pure."""
    return row.get("external_ids", {}).get("harmless") == MARK


def bpf_bytecode(vid: int) -> str:
    """Classic BPF (``tc filter ... bpf bytecode``) matching frames whose outer tag (TPID 0x8100 or 0x88a8) carries
    VID ``vid``: returns -1 (the filter's classid) on a match, 0 otherwise. Offsets from the Ethernet header (tc
    egress sees the frame from its MAC header): TPID at 12, TCI at 14 (IEEE 802.1Q §9.6). Pure.

    Raises:
        ValueError: VID outside 1..4094.
    """
    if not 1 <= vid <= 4094:
        raise ValueError(f"VID {vid} outside 1..4094")
    prog = [(0x28, 0, 0, 12),          # ldh [12]          TPID
            (0x15, 1, 0, 0x8100),      # jeq #0x8100 -> TCI
            (0x15, 0, 4, 0x88A8),      # jeq #0x88a8 -> TCI, else no match
            (0x28, 0, 0, 14),          # ldh [14]          TCI
            (0x54, 0, 0, 0x0FFF),      # and #0xfff        VID
            (0x15, 0, 1, vid),         # jeq #vid
            (0x06, 0, 0, 0xFFFFFFFF),  # ret #-1           match: the filter's classid
            (0x06, 0, 0, 0)]           # ret #0            no match
    return ",".join([str(len(prog))] + [f"{c} {jt} {jf} {k}" for c, jt, jf, k in prog])


def tc_class(qid: int) -> str:
    """The kernel class OVS's linux-htb/linux-hfsc gives queue ``qid``: ``1:<qid+1>`` (hex minor, tc(8))."""
    return f"1:{qid + 1:x}"


# ---------------------------------------------------------------------------- reading OVS
def _uuid(v) -> str | None:
    return v if isinstance(v, str) and v else None


def read_rows(ovs: Ovs) -> dict:
    """The QoS-related rows of the OVS database (see :func:`ovsdb_commands` for the shape)."""
    ports = {r["name"]: _uuid(r["qos"]) for r in ovs.vsctl_json("Port", columns=["name", "qos"])}
    qos = {}
    for r in ovs.vsctl_json("QoS", columns=["_uuid", "type", "queues", "external_ids"]):
        queues = r["queues"] if isinstance(r["queues"], dict) else {}
        qos[r["_uuid"]] = {"type": r["type"], "queues": {int(k): v for k, v in queues.items()},
                           "external_ids": r["external_ids"] or {}}
    queue = {r["_uuid"]: {"external_ids": r["external_ids"] or {}, "other_config": r["other_config"] or {}}
             for r in ovs.vsctl_json("Queue", columns=["_uuid", "external_ids", "other_config"])}
    return {"ports": ports, "qos": qos, "queue": queue}


def parse_meters(text: str) -> dict[int, dict]:
    """Parse ``ovs-ofctl -O OpenFlow13 dump-meters``/``meter-stats`` output into ``{meter id: {"kbps": int,
    "burst_kb": int, "packets": int, "bytes": int, "band_drops": int}}`` (keys present as the text has them). Pure."""
    out: dict[int, dict] = {}
    cur = None
    for line in text.splitlines():
        m = re.search(r"meter[=:](\d+)", line)
        if m:
            cur = out.setdefault(int(m.group(1)), {})
            for key, name in (("packet_in_count", "packets"), ("byte_in_count", "bytes")):
                mm = re.search(key + r":(\d+)", line)
                if mm:
                    cur[name] = int(mm.group(1))
        if cur is None:
            continue
        mm = re.search(r"type=drop rate=(\d+) burst_size=(\d+)", line)
        if mm:
            cur["kbps"], cur["burst_kb"] = int(mm.group(1)), int(mm.group(2))
        mm = re.search(r"packet_count:(\d+)", line)
        if mm and "packet_in_count" not in line:
            cur["band_drops"] = int(mm.group(1))
    return out


def _tc(ovs: Ovs, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """``tc`` in the server OVS's network namespace (``tc -n``); a failure (``check``) is an :class:`OvsError`."""
    argv = ["tc", *(["-n", ovs.netns] if ovs.netns else []), *args]
    return procs.run(argv, check=check, error=OvsError, where=" ".join(argv[:6]),
                     fix="check that the kernel has sch_htb/sch_hfsc and cls_bpf (docs/qos.md)")


def _filter_prios(ovs: Ovs, iface: str) -> set[int]:
    p = _tc(ovs, "filter", "show", "dev", iface, "parent", "1:", check=False)
    return {int(x) for x in re.findall(r"pref (\d+) bpf", p.stdout)}


def apply_classifiers(ovs: Ovs, want: dict[str, dict]) -> None:
    """On kernel (``system``) trunks, one cls_bpf filter per queue (priority and handle = the port's VID) that
    sends the port's VID to the queue's class; filters of VIDs no longer shaped are deleted. Idempotent.

    Raises:
        OvsError: tc failed (no qdisc: OVS could not create it, e.g. a kernel without sch_hfsc).
    """
    for iface, w in sorted(want.items()):
        if not w["type"].startswith("linux-"):
            continue
        have = _filter_prios(ovs, iface)
        vids = {spec["vid"]: qid for qid, spec in w["queues"].items()}
        for vid, qid in sorted(vids.items()):
            _tc(ovs, "filter", "replace", "dev", iface, "parent", "1:", "protocol", "all", "prio", str(vid),
                "handle", str(vid), "bpf", "bytecode", bpf_bytecode(vid), "classid", tc_class(qid))
        for prio in sorted(have - set(vids)):
            _tc(ovs, "filter", "del", "dev", iface, "parent", "1:", "prio", str(prio), check=False)


def apply_before_flows(ovs: Ovs, plan: Plan) -> set[int]:
    """Converge meters (add/modify), QoS/Queue rows and the kernel classifiers to the plan, before the translator
    flows that reference them are installed. Returns the meter ids to delete once the flows no longer use them
    (:func:`prune_meters`).

    Raises:
        OvsError: OVS refused a meter or the transaction, a trunk carries a foreign QoS row, or tc failed.
    """
    meters = wanted_meters(plan)
    have = set(parse_meters(ovs.ofctl(*OF13, "dump-meters", OTC_BRIDGE)))
    for mid, (kbps, burst) in sorted(meters.items()):
        ovs.ofctl(*OF13, "mod-meter" if mid in have else "add-meter", OTC_BRIDGE, meter_ofctl(mid, kbps, burst))
    want = wanted_trunks(plan)
    ovs.transact(ovsdb_commands(want, read_rows(ovs)))
    apply_classifiers(ovs, want)
    return have - set(meters)


def prune_meters(ovs: Ovs, stale: set[int]) -> None:
    """Delete meters no flow uses any more (after the flows were replaced)."""
    for mid in sorted(stale):
        ovs.ofctl(*OF13, "del-meter", OTC_BRIDGE, f"meter={mid}")


def remove_commands(ovs: Ovs) -> list[list[str]]:
    """ovs-vsctl commands that detach and destroy every QoS and Queue row HARMLESS made (for ``down``; run them
    before the bridges are deleted, in the same transaction)."""
    try:
        rows = read_rows(ovs)
    except OvsError:
        return []
    return ovsdb_commands({}, rows)


def port_view(ovs: Ovs, plan: Plan) -> dict[str, dict[int, dict]]:
    """What OVS enforces now per migrated port: ``{switch: {ofport: {"meter": {"id", "kbps", "burst_kb", "packets",
    "band_drops"} | None, "queue": {"id", "trunk", "type", "other_config", "tc_class", "sent_packets", "sent_bytes",
    "dropped"} | None}}}``."""
    meters = parse_meters(ovs.ofctl(*OF13, "dump-meters", OTC_BRIDGE))
    stats = parse_meters(ovs.ofctl(*OF13, "meter-stats", OTC_BRIDGE))
    rows = read_rows(ovs)
    tc_cache: dict[str, dict[str, dict]] = {}
    out: dict[str, dict[int, dict]] = {}
    for i, sp in plan.numbered():
        trunks = {t.switch_port: t for t in sp.trunks}
        sw = out.setdefault(sp.name, {})
        for p in sp.ports:
            mid = meter_id(i, p.ofport)
            m = {**meters.get(mid, {}), **stats.get(mid, {})} if mid in meters else None
            iface = trunks[p.trunk].server_interface
            qrow = rows["qos"].get(rows["ports"].get(iface) or "")
            quuid = (qrow or {}).get("queues", {}).get(queue_id(p.ofport))
            q = None
            if quuid:
                q = {"id": queue_id(p.ofport), "trunk": iface, "type": qrow["type"],
                     "other_config": rows["queue"].get(quuid, {}).get("other_config", {})}
                if qrow["type"].startswith("linux-"):
                    if iface not in tc_cache:
                        tc_cache[iface] = tc_classes(ovs, iface)
                    q.update({"tc_class": tc_class(queue_id(p.ofport)),
                              **tc_cache[iface].get(tc_class(queue_id(p.ofport)), {})})
            sw[p.ofport] = {"meter": {"id": mid, **m} if m is not None else None, "queue": q}
    return out


def tc_classes(ovs: Ovs, iface: str) -> dict[str, dict]:
    """``tc -s class show dev IFACE`` as ``{"1:8": {"sent_bytes", "sent_packets", "dropped"}}``."""
    p = _tc(ovs, "-s", "class", "show", "dev", iface, check=False)
    out, cur = {}, None
    for line in p.stdout.splitlines():
        m = re.match(r"class \S+ (\S+) ", line)
        if m:
            cur = m.group(1)
            continue
        m = re.search(r"Sent (\d+) bytes (\d+) pkt \(dropped (\d+)", line)
        if m and cur:
            out[cur] = {"sent_bytes": int(m.group(1)), "sent_packets": int(m.group(2)), "dropped": int(m.group(3))}
            cur = None
    return out


def hfsc_supported() -> tuple[bool, str]:
    """Whether this kernel can create an HFSC qdisc (``linux-hfsc``): tried on the loopback of a scratch network
    namespace. Returns ``(ok, reason)``."""
    ns = f"hl-hfsc-probe-{os.getpid()}"
    try:
        if procs.run(["ip", "netns", "add", ns], check=False).returncode != 0:
            return False, "cannot create a network namespace to probe sch_hfsc (needs root)"
        p = procs.run(["tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", "handle", "1:", "hfsc"], check=False)
        if p.returncode != 0:
            return False, f"the kernel has no HFSC scheduler (tc: {p.stderr.strip() or p.stdout.strip()}; " \
                          "CONFIG_NET_SCH_HFSC)"
        return True, "ok"
    finally:
        procs.run(["ip", "netns", "del", ns], check=False)
