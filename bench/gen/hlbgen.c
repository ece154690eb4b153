/*
 * hlbgen: a small paced DPDK traffic generator for harmless bench (RFC 2544 throughput and latency).
 *
 * Why it exists: dpdk-testpmd cannot pace traffic on net_virtio_user ports (no per-queue rate limit there, no tx
 * timestamps), so a zero-loss search needs a generator that sends at a given rate.  This one is deliberately
 * small: frames come from template files written by harmless.bench.traffic (pure Python), the generator only
 * paces, counts and timestamps.
 *
 * Ports: every --vdev of the EAL command line (net_virtio_user, server=1: OVS connects as dpdkvhostuserclient).
 * One lcore does everything (tx pacing, rx polling) so tx and rx timestamps come from the same TSC.
 *
 * Timestamps: each sent IPv4 frame gets a sequence number in its IPv4 identification field
 * (bit 15 = tx port slot, bits 0..14 = sequence; the header checksum is patched incrementally, RFC 1624 eq. 3)
 * and its TSC is stored in a per-slot ring of 32768 entries.  None of the benchmark pipelines touch the IP ID,
 * so a received frame's latency is rx_tsc - ring[id].  Ambiguity would need > 32768 frames in flight (≈ 3 ms at
 * 10 Mpps); the vrings hold far fewer.  Latency includes the generator's own burst/poll granularity.
 *
 * Latency histogram: log-linear buckets, exact below 128 ns, then 64 sub-buckets per power of two (≤ 1.6 %
 * relative width): idx = v (v < 128) else 128 + (e - 7) * 64 + ((v >> (e - 6)) & 63), e = floor(log2 v).
 * Decoded by harmless.bench.latency.
 *
 * Protocol (stdin, one command per line; one reply line per command on stdout):
 *   load <port> <file>   templates: lines "<expect 0|1> <frame_len> <hex header bytes>", rest of frame zero
 *                        -> "ok load <port> <n> <n_expect>"
 *   links                -> "links <0|1> ..." (link status per port)
 *   run <tx csv> <rx csv> <rate_pps> <duration_s> <count> <drain_ms>
 *                        rate is the aggregate offered rate over the tx ports; count > 0 sends exactly
 *                        count frames per tx port (duration then only caps the time)
 *                        -> "result {json}"
 *   quit
 * SIGINT/SIGTERM or EOF on stdin end the program (ports stopped, EAL cleaned up).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#define MAX_PORTS 8
#define BURST 32
#define RING 32768
#define QSIZE 4096
#define NB_BINS 2560
#define MAX_HDR 128

struct tmpl {
	uint16_t len;      /* frame length without FCS */
	uint16_t hdr_len;  /* bytes of hdr[] that are set; the rest of the frame is zero */
	int16_t ip_off;    /* offset of the IPv4 header, -1 = not IPv4 */
	uint8_t expect;    /* 1 = the pipeline should forward it (counted in tx_expected) */
	uint8_t hdr[MAX_HDR];
};

struct port_tmpls {
	struct tmpl *t;
	uint32_t n;
	uint32_t n_expect;
};

static volatile int quit_flag;
static struct rte_mempool *pool;
static uint16_t nb_ports;
static struct port_tmpls tmpls[MAX_PORTS];
static uint64_t ring_tsc[2][RING];
static uint64_t hist[NB_BINS];

static void on_signal(int sig) { (void)sig; quit_flag = 1; }

static int ip_offset(const uint8_t *f, uint16_t len)
{
	int off = 12;
	uint16_t et;
	if (len < 14) return -1;
	et = (uint16_t)(f[off] << 8 | f[off + 1]);
	while ((et == 0x8100 || et == 0x88a8) && off + 6 <= len) {
		off += 4;
		et = (uint16_t)(f[off] << 8 | f[off + 1]);
	}
	off += 2;
	if (et != 0x0800 || off + 20 > len || (f[off] >> 4) != 4) return -1;
	return off;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

static int load_templates(uint16_t port, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	uint32_t cap = 1024, n = 0, ne = 0;
	struct tmpl *t;
	if (!f) return -errno;
	t = calloc(cap, sizeof(*t));
	while (fgets(line, sizeof(line), f)) {
		unsigned expect, flen;
		char hex[2 * MAX_HDR + 2];
		size_t i, hl;
		if (line[0] == '#' || line[0] == '\n') continue;
		if (sscanf(line, "%u %u %257s", &expect, &flen, hex) != 3) { free(t); fclose(f); return -EINVAL; }
		hl = strlen(hex) / 2;
		if (flen < 14 || flen > 9000 || hl > MAX_HDR || hl > flen) { free(t); fclose(f); return -EINVAL; }
		if (n == cap) { cap *= 2; t = realloc(t, cap * sizeof(*t)); }
		memset(&t[n], 0, sizeof(t[n]));
		for (i = 0; i < hl; i++) {
			int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
			if (hi < 0 || lo < 0) { free(t); fclose(f); return -EINVAL; }
			t[n].hdr[i] = (uint8_t)(hi << 4 | lo);
		}
		t[n].len = (uint16_t)flen;
		t[n].hdr_len = (uint16_t)hl;
		t[n].ip_off = (int16_t)ip_offset(t[n].hdr, (uint16_t)hl);
		t[n].expect = expect ? 1 : 0;
		ne += t[n].expect;
		n++;
	}
	fclose(f);
	if (n == 0) { free(t); return -ENODATA; }
	free(tmpls[port].t);
	tmpls[port].t = t;
	tmpls[port].n = n;
	tmpls[port].n_expect = ne;
	return (int)n;
}

static inline unsigned bin_of(uint64_t v)
{
	unsigned e, idx;
	if (v < 128) return (unsigned)v;
	e = 63 - (unsigned)__builtin_clzll(v);
	idx = 128 + (e - 7) * 64 + (unsigned)((v >> (e - 6)) & 63);
	return idx < NB_BINS ? idx : NB_BINS - 1;
}

static inline void set_ip_id(uint8_t *ip, uint16_t id)
{
	/* template carries id 0 and a valid checksum: HC' = ~(~HC + m') (RFC 1624 eq. 3, m = 0) */
	uint32_t s = (uint16_t)~(ip[10] << 8 | ip[11]);
	s += id;
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (uint16_t)~s;
	ip[4] = (uint8_t)(id >> 8);
	ip[5] = (uint8_t)id;
	ip[10] = (uint8_t)(s >> 8);
	ip[11] = (uint8_t)s;
}

static int parse_ports(const char *csv, uint16_t *out)
{
	int n = 0;
	const char *p = csv;
	while (*p && n < MAX_PORTS) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v < 0 || v >= nb_ports) return -1;
		out[n++] = (uint16_t)v;
		p = (*end == ',') ? end + 1 : end;
		if (*end && *end != ',') return -1;
	}
	return n;
}

static void do_run(char *args)
{
	char txs[64], rxs[64];
	double rate, dur;
	unsigned long long count;
	unsigned drain_ms;
	uint16_t tx[MAX_PORTS], rx[MAX_PORTS];
	int ntx, nrx, i;
	uint64_t hz = rte_get_tsc_hz();
	uint64_t sent[MAX_PORTS] = {0}, fail[MAX_PORTS] = {0}, expected[MAX_PORTS] = {0}, rcv[MAX_PORTS] = {0};
	uint32_t tidx[MAX_PORTS] = {0};
	struct rte_mbuf *stash[MAX_PORTS][BURST];   /* max-rate mode: frames the vring refused, sent next */
	unsigned nstash[MAX_PORTS] = {0};
	int maxrate;
	uint64_t seq[MAX_PORTS] = {0};
	uint64_t nombuf = 0, lat_n = 0, lat_min = UINT64_MAX, lat_max = 0, lat_unmatched = 0, rx_other = 0;
	double lat_sum = 0;
	uint64_t t0, t_end, t_tx_end = 0, t_last;
	double per_tsc;
	uint64_t ns_mul = ((uint64_t)1000000000 << 20) / hz;   /* ns = cycles * ns_mul >> 20 */
	int sending = 1;

	if (sscanf(args, "%63s %63s %lf %lf %llu %u", txs, rxs, &rate, &dur, &count, &drain_ms) != 6) {
		printf("error run: usage run <tx csv> <rx csv> <rate_pps> <duration_s> <count> <drain_ms>\n");
		return;
	}
	ntx = parse_ports(txs, tx);
	nrx = parse_ports(rxs, rx);
	if (ntx <= 0 || ntx > 2 || nrx <= 0 || rate <= 0 || dur <= 0) {
		printf("error run: bad ports/rate/duration\n");
		return;
	}
	for (i = 0; i < ntx; i++)
		if (!tmpls[tx[i]].n) { printf("error run: no templates loaded for port %u\n", tx[i]); return; }
	memset(hist, 0, sizeof(hist));
	memset(ring_tsc, 0, sizeof(ring_tsc));
	/* rate >= 1e9 pps = "as fast as the SUT takes them": refused frames are retried, not dropped (RFC 2889 MFR) */
	maxrate = rate >= 1e9;
	per_tsc = rate / ntx / (double)hz;
	t0 = rte_rdtsc();
	t_end = t0 + (uint64_t)(dur * hz);
	t_last = t0;
	while (!quit_flag) {
		uint64_t now = rte_rdtsc();
		if (sending) {
			int done = 1;
			for (i = 0; i < ntx; i++) {
				uint64_t due = (uint64_t)((double)(now - t0) * per_tsc) + 1;
				uint64_t have = sent[i] + fail[i];
				struct rte_mbuf *m[BURST];
				unsigned n, k, nb;
				if (count && due > count) due = count;
				if (!(count && have >= count)) done = 0;
				if (maxrate && nstash[i]) {
					unsigned ns = nstash[i];
					nb = rte_eth_tx_burst(tx[i], 0, stash[i], (uint16_t)ns);
					sent[i] += nb;
					if (nb < ns) memmove(stash[i], stash[i] + nb, (ns - nb) * sizeof(stash[i][0]));
					nstash[i] = ns - nb;
					continue;
				}
				if (due <= have) continue;
				n = (unsigned)(due - have > BURST ? BURST : due - have);
				if (rte_pktmbuf_alloc_bulk(pool, m, n) != 0) { nombuf++; continue; }
				for (k = 0; k < n; k++) {
					const struct tmpl *t = &tmpls[tx[i]].t[tidx[i]];
					uint8_t *d = rte_pktmbuf_mtod(m[k], uint8_t *);
					memcpy(d, t->hdr, t->hdr_len);
					if (t->len > t->hdr_len) memset(d + t->hdr_len, 0, t->len - t->hdr_len);
					m[k]->data_len = m[k]->pkt_len = t->len;
					if (t->ip_off >= 0) {
						uint16_t s = (uint16_t)(seq[i] & (RING - 1));
						set_ip_id(d + t->ip_off, (uint16_t)((i << 15) | s));
						ring_tsc[i][s] = now;
						seq[i]++;
					}
					expected[i] += t->expect;
					if (++tidx[i] == tmpls[tx[i]].n) tidx[i] = 0;
				}
				nb = rte_eth_tx_burst(tx[i], 0, m, (uint16_t)n);
				sent[i] += nb;
				if (nb < n && maxrate) {
					memcpy(stash[i], &m[nb], (n - nb) * sizeof(m[0]));
					nstash[i] = n - nb;
				} else if (nb < n) {
					rte_pktmbuf_free_bulk(&m[nb], n - nb);
					fail[i] += n - nb;
				}
			}
			if ((count && done) || now >= t_end) {
				sending = 0;
				t_tx_end = now;
			}
		}
		now = rte_rdtsc();   /* rx time: after this iteration's tx (a frame may already be back) */
		for (i = 0; i < nrx; i++) {
			struct rte_mbuf *m[BURST];
			uint16_t nb = rte_eth_rx_burst(rx[i], 0, m, BURST), k;
			if (!nb) continue;
			rcv[i] += nb;
			t_last = now;
			for (k = 0; k < nb; k++) {
				uint8_t *d = rte_pktmbuf_mtod(m[k], uint8_t *);
				int off = ip_offset(d, rte_pktmbuf_data_len(m[k]));
				if (off >= 0) {
					uint16_t id = (uint16_t)(d[off + 4] << 8 | d[off + 5]);
					unsigned slot = id >> 15;
					uint64_t ts = slot < (unsigned)ntx ? ring_tsc[slot][id & (RING - 1)] : 0;
					if (ts && now >= ts) {
						uint64_t ns = ((now - ts) * ns_mul) >> 20;
						ring_tsc[slot][id & (RING - 1)] = 0;
						hist[bin_of(ns)]++;
						lat_n++;
						lat_sum += (double)ns;
						if (ns < lat_min) lat_min = ns;
						if (ns > lat_max) lat_max = ns;
					} else {
						lat_unmatched++;
					}
				} else {
					rx_other++;
				}
			}
			rte_pktmbuf_free_bulk(m, nb);
		}
		if (!sending && now - t_tx_end > (uint64_t)drain_ms * hz / 1000)
			break;
	}
	for (i = 0; i < ntx; i++)      /* unsent leftovers of max-rate mode were never offered */
		if (nstash[i]) rte_pktmbuf_free_bulk(stash[i], nstash[i]);
	{
		uint64_t s_tot = 0, f_tot = 0, e_tot = 0, r_tot = 0;
		double tx_s = (double)(t_tx_end - t0) / (double)hz;
		int first = 1;
		unsigned b;
		for (i = 0; i < ntx; i++) { s_tot += sent[i]; f_tot += fail[i]; e_tot += expected[i]; }
		for (i = 0; i < nrx; i++) r_tot += rcv[i];
		printf("result {\"tx\":%" PRIu64 ",\"tx_fail\":%" PRIu64 ",\"tx_expected\":%" PRIu64 ",\"rx\":%" PRIu64
		       ",\"rx_other\":%" PRIu64 ",\"nombuf\":%" PRIu64 ",\"tx_seconds\":%.6f,\"last_rx_after_tx_s\":%.6f,\"interrupted\":%d,"
		       "\"lat\":{\"n\":%" PRIu64 ",\"unmatched\":%" PRIu64 ",\"min_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
		       ",\"avg_ns\":%.1f,\"bins\":[",
		       s_tot, f_tot, e_tot, r_tot, rx_other, nombuf, tx_s,
		       t_last > t_tx_end ? (double)(t_last - t_tx_end) / (double)hz : 0.0, quit_flag,
		       lat_n, lat_unmatched, lat_n ? lat_min : 0, lat_max, lat_n ? lat_sum / (double)lat_n : 0.0);
		for (b = 0; b < NB_BINS; b++) {
			if (!hist[b]) continue;
			printf("%s[%u,%" PRIu64 "]", first ? "" : ",", b, hist[b]);
			first = 0;
		}
		printf("]}}\n");
	}
}

static int port_init(uint16_t port)
{
	struct rte_eth_conf conf;
	int r;
	memset(&conf, 0, sizeof(conf));
	r = rte_eth_dev_configure(port, 1, 1, &conf);
	if (r < 0) return r;
	r = rte_eth_rx_queue_setup(port, 0, QSIZE, rte_eth_dev_socket_id(port), NULL, pool);
	if (r < 0) return r;
	r = rte_eth_tx_queue_setup(port, 0, QSIZE, rte_eth_dev_socket_id(port), NULL);
	if (r < 0) return r;
	return rte_eth_dev_start(port);
}

int main(int argc, char **argv)
{
	char line[4096];
	uint16_t p;
	int r = rte_eal_init(argc, argv);
	if (r < 0) {
		fprintf(stderr, "error EAL init failed\n");
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);
	nb_ports = rte_eth_dev_count_avail();
	if (nb_ports == 0 || nb_ports > MAX_PORTS) {
		printf("error need 1..%d ports, have %u\n", MAX_PORTS, nb_ports);
		rte_eal_cleanup();
		return 1;
	}
	pool = rte_pktmbuf_pool_create("hlbgen", 8 * QSIZE * MAX_PORTS / 2 - 1, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, rte_socket_id());
	if (!pool) {
		printf("error mbuf pool: %s\n", rte_strerror(rte_errno));
		rte_eal_cleanup();
		return 1;
	}
	for (p = 0; p < nb_ports; p++) {
		r = port_init(p);
		if (r < 0) {
			printf("error port %u init: %s\n", p, rte_strerror(-r));
			rte_eal_cleanup();
			return 1;
		}
	}
	printf("ready %u ports tsc_hz %" PRIu64 "\n", nb_ports, rte_get_tsc_hz());
	while (!quit_flag && fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\r\n")] = 0;
		if (!strncmp(line, "load ", 5)) {
			unsigned port;
			char path[3000];
			if (sscanf(line + 5, "%u %2999s", &port, path) != 2 || port >= nb_ports) {
				printf("error load: usage load <port> <file>\n");
				continue;
			}
			r = load_templates((uint16_t)port, path);
			if (r < 0) printf("error load %u: %s\n", port, strerror(-r));
			else printf("ok load %u %d %u\n", port, r, tmpls[port].n_expect);
		} else if (!strcmp(line, "links")) {
			printf("links");
			for (p = 0; p < nb_ports; p++) {
				struct rte_eth_link l;
				memset(&l, 0, sizeof(l));
				rte_eth_link_get_nowait(p, &l);
				printf(" %d", l.link_status ? 1 : 0);
			}
			printf("\n");
		} else if (!strncmp(line, "run ", 4)) {
			do_run(line + 4);
		} else if (!strcmp(line, "quit")) {
			break;
		} else if (line[0]) {
			printf("error unknown command\n");
		}
	}
	for (p = 0; p < nb_ports; p++) {
		rte_eth_dev_stop(p);
		rte_eth_dev_close(p);
	}
	rte_eal_cleanup();
	return 0;
}
