"""Parsers of the benchmark: testpmd port stats, OVS pmd-stats-show / pmd-perf-show, dpctl actions (captured text)."""
from harmless.bench.experiments import datapath_actions
from harmless.bench.ovsstats import parse_pmd_perf, summarize
from harmless.ovsstats import parse_pmd_stats
from harmless.bench.quick import LoopSample, summarize_pair
from harmless.bench.testpmd import TestpmdOptions, VirtioPort, build_argv, parse_port_stats, txpkts_for

PORT_STATS = """
  ######################## NIC statistics for port 0  ########################
  RX-packets: 31999712   RX-missed: 0          RX-bytes:  1919982720
  RX-errors: 0
  RX-nombuf:  0         
  TX-packets: 31567168   TX-errors: 0          TX-bytes:  1894030080

  Throughput (since last show)
  Rx-pps:     28969688          Rx-bps:            0
  Tx-pps:     28568626          Tx-bps:            0
  ############################################################################

  ######################## NIC statistics for port 1  ########################
  RX-packets: 32004800   RX-missed: 3          RX-bytes:  0
  RX-errors: 0
  RX-nombuf:  17        
  TX-packets: 31567200   TX-errors: 0          TX-bytes:  0

  Throughput (since last show)
  Rx-pps:            0          Rx-bps:            0
  Tx-pps:            0          Tx-bps:            0
  ############################################################################
"""

PMD_STATS = """pmd thread numa_id 0 core_id 1:
  packets received: 14437408
  packet recirculations: 0
  avg. datapath passes per packet: 1.00
  phwol hits: 0
  mfex opt hits: 0
  simple match hits: 0
  emc hits: 10578688
  smc hits: 0
  megaflow hits: 3858720
  avg. subtable lookups per megaflow hit: 1.00
  miss with success upcall: 0
  miss with failed upcall: 0
  avg. packets per output batch: 32.00
  idle cycles: 1442892436 (18.29%)
  processing cycles: 6448161521 (81.71%)
  avg cycles per packet: 546.57 (7891053957/14437408)
  avg processing cycles per packet: 446.63 (6448161521/14437408)
main thread:
  packets received: 0
  packet recirculations: 0
  avg. datapath passes per packet: 0.00
  emc hits: 0
"""

PMD_PERF = """
Time: 02:48:17.680
Measurement duration: 4.220 s

pmd thread numa_id 0 core_id 1:

  Iterations:              3646692  (1.14 us/it)
  - Used TSC cycles:   10821870268  ( 98.6 % of total cycles)
  - idle iterations:       3019120  (  9.9 % of used cycles)
  - busy iterations:        627572  ( 90.1 % of used cycles)
  Rx packets:             40136064  (9511 Kpps, 243 cycles/pkt)
  Datapath passes:        40136064  (1.00 passes/pkt)
  - EMC hits:             40136064  (100.0 %)
  - Megaflow hits:               0  (  0.0 %, 0.00 subtbl lookups/hit)
  Tx packets:             40136064  (9511 Kpps)
  Tx batches:              1254252  (32.00 pkts/batch)

Histograms
   cycles/it              packets/it
   499       2158631      0         2160028
"""

DPCTL = """flow-dump from pmd on cpu core: 1
recirc_id(0),in_port(hl-trunk-a),packet_type(ns=0,id=0),eth(dst=02:00:00:00:00:0a),eth_type(0x8100),vlan(vid=107,pcp=0),encap(eth_type(0x0800)), packets:36145983, bytes:2313342912, used:0.000s, actions:pop_vlan,push_vlan(vid=110,pcp=0),hl-trunk-b
recirc_id(0),in_port(hl-trunk-a),packet_type(ns=0,id=0),eth(dst=02:00:00:00:00:0a),eth_type(0x8100),vlan(vid=107,pcp=0),encap(eth_type(0x0800)), packets:1, bytes:64, used:0.000s, actions:pop_vlan,push_vlan(vid=110,pcp=0),hl-trunk-b
recirc_id(0),in_port(plain-a),packet_type(ns=0,id=0),eth(dst=02:00:00:00:00:0a),eth_type(0x0800), packets:5, bytes:300, used:0.000s, actions:plain-b
"""


def test_port_stats():
    st = parse_port_stats("testpmd> show port stats all\n" + PORT_STATS)
    assert set(st) == {0, 1}
    assert st[0].rx_packets == 31999712 and st[0].tx_packets == 31567168 and st[0].rx_bytes == 1919982720
    assert st[0].rx_pps == 28969688 and st[0].tx_pps == 28568626
    assert st[1].rx_missed == 3 and st[1].rx_nombuf == 17


def test_port_stats_empty():
    assert parse_port_stats("Invalid port 9\n") == {}


def test_pmd_stats_cycles_per_packet():
    stats = parse_pmd_stats(PMD_STATS)
    assert [s.thread for s in stats] == ["pmd1", "main"]
    pmd = stats[0]
    assert pmd.core == 1 and pmd.packets == 14437408
    assert pmd.get("emc hits") == 10578688 and pmd.get("avg processing cycles per packet") == 446.63
    s = summarize(stats)
    assert s.packets == 14437408 and s.emc_hits == 10578688 and s.megaflow_hits == 3858720 and s.upcalls == 0
    assert abs(s.cycles_per_packet - 446.63) < 0.01               # processing cycles only, idle excluded
    assert abs(s.idle_fraction - 0.1829) < 0.001 and s.passes_per_packet == 1.0


def test_pmd_stats_no_packets():
    s = summarize(parse_pmd_stats("pmd thread numa_id 0 core_id 1:\n  packets received: 0\n"))
    assert s.packets == 0 and s.cycles_per_packet == 0.0


def test_pmd_perf():
    p = parse_pmd_perf(PMD_PERF)
    assert p["rx packets"] == 40136064 and p["emc hits"] == 40136064 and p["tx batches"] == 1254252
    assert p["iterations"] == 3646692 and p["used tsc cycles"] == 10821870268


def test_datapath_actions():
    a = datapath_actions(DPCTL)
    assert a == {"hl-trunk-a": ["pop_vlan,push_vlan(vid=110,pcp=0),hl-trunk-b"], "plain-a": ["plain-b"]}


def test_summarize_pair_medians_and_ratios():
    def smp(system, mpps, cyc):
        return LoopSample(system, mpps, cyc, mpps, 0.0, 3.0)
    r = summarize_pair({"harmless": [smp("harmless", 8, 310), smp("harmless", 4, 450), smp("harmless", 8.2, 300)],
                        "plain": [smp("plain", 10, 250), smp("plain", 9, 260), smp("plain", 12, 200)]})
    assert r["harmless_mpps"] == 8 and r["plain_mpps"] == 10
    assert r["harmless_cycles_per_packet"] == 310 and r["plain_cycles_per_packet"] == 250
    # median of per-round ratios 8/10, 4/9, 8.2/12 -> 0.683 (a ratio of medians would say 0.8)
    assert r["ratio"] == round(8.2 / 12, 3) and r["round_ratios"] == [0.8, 0.444, 0.683]
    assert r["cycles_ratio"] == round(200 / 300, 3)


def test_testpmd_argv():
    argv = build_argv("hlb1gen", [VirtioPort("/tmp/a.sock", "02:00:00:00:00:07", "02:00:00:00:00:0a")],
                      TestpmdOptions(frame_size=128))
    assert argv[:3] == ["stdbuf", "-oL", "-eL"]
    assert "--vdev=net_virtio_user0,path=/tmp/a.sock,queues=1,server=1,mac=02:00:00:00:00:07" in argv
    assert "--no-huge" in argv and "--txpkts=124" in argv and "--eth-peer=0,02:00:00:00:00:0a" in argv
    assert argv.index("--") < argv.index("-i")
    assert txpkts_for(64) == 60 and txpkts_for(1518) == 1514
