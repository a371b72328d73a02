/*
 * tpusim_sc: the SystemC/TLM-2.0 example (issue 16; docs/systemc.md). A small host model drives,
 * over TLM transactions only, a lone chip (sc_chip) and a W x H slice (sc_slice, default 2x2),
 * all clocked from one sc_clock at the chip's frequency:
 *   1. GEMM: writes A and B into the chip's HBM (DMI, or b_transport with --no-dmi), writes the
 *      firmware GEMM's programs (fw/gemm.h, built on the host as a driver would) into the
 *      command windows, loads them, starts the queues, waits for the done interrupt, reads C;
 *   2. all-reduce: writes each chip's buffer into its HBM, a DMA program copies it into VMEM,
 *      the collective's programs (fw/collective.h) run on every chip at once (the slice's
 *      START), a DMA program copies the result back, the host reads it.
 * Each is checked bit for bit against the golden models, and prints the cycles `tpusim gemm`
 * and `tpusim collective` print for the same inputs. --selftest runs the error paths of the
 * memory map instead (docs/systemc.md, "Errors") and prints a line per case.
 * Results on stdout; progress and SystemC's warnings on stderr. Exit 0, 1 (a run failed or
 * disagrees with the golden model), 2 (bad command line).
 */
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include "sc/sc_chip.h"
#include "sc/sc_map.h"
#include "sc/sc_slice.h"

extern "C" {
#include "fw/collective.h"
#include "fw/hal.h"
#include "golden/coll_golden.h"
#include "golden/gemm_golden.h"
#include "runtime/chip_gemm.h"
#include "runtime/perf.h"
#include "runtime/pod_collective.h"
#include "chip/chip.h"
#include "util/bits.h"
#include "util/report.h"
#include "util/rng.h"
#include "util/stopwatch.h"
}

using namespace sc_core;
using tlm::tlm_response_status;
using namespace tpu_sc;

namespace {

struct options {
  unsigned rows = 16, cols = 16, mxus = 1, cores = 1;
  uint64_t m = 64, k = 64, n = 64, seed = 1;
  unsigned hbm_bw = CHIP_DEFAULT_HBM_BYTES_PER_CYCLE, hbm_latency = CHIP_DEFAULT_HBM_LATENCY;
  unsigned pod_w = 2, pod_h = 2, link_latency = 0;
  uint64_t bytes = 4096;
  fw_coll_algo_t algo = FW_COLL_RING;
  chip_model_t model = CHIP_MODEL_RTL;
  unsigned clock_mhz = CHIP_DEFAULT_CLOCK_MHZ;
  bool gemm = true, collective = true, selftest = false, dmi = true, json = false;
};

void usage(FILE *f) {
  fprintf(f,
          "usage: tpusim_sc [--only gemm|collective] [--mxu RxC] [--mxus X] [--cores K] [--m M --k K --n N]\n"
          "                 [--seed S]"
          " [--hbm-bw B] [--hbm-latency L] [--pod WxH] [--bytes B] [--algo ring|torus2d]\n"
          "                 [--link-latency L] [--model rtl|fast|check] [--clock-mhz F] [--no-dmi] [--json]\n"
          "       tpusim_sc --selftest [--model rtl|fast|check]\n\n"
          "The SystemC/TLM-2.0 example (docs/systemc.md): a host model drives a chip and a slice\n"
          "of chips through TLM transactions only. It runs the firmware GEMM on a lone chip (as\n"
          "`tpusim gemm --mxu RxC --m M --k K --n N --seed S --model ...`), then an all-reduce of\n"
          "B bytes per chip on a WxH slice (default 2x2, as `tpusim collective --pod WxH --op\n"
          "allreduce --bytes B ...`), checks both bit for bit against the golden models and prints\n"
          "their cycles. Defaults: --mxu 16x16, M=K=N=64, --bytes 4096, --link-latency 0, seed 1.\n"
          "--mxus X, --cores K: chips of K cores of X MXUs each (the collective runs on core 0).\n"
          "--json: each part's results as one JSON object on a line. --no-dmi: HBM through b_transport.\n"
          "--selftest: the memory map's error responses, one line per case.\n"
          "Exit status: 0 success, 1 a run failed or disagrees with the golden model, 2 bad usage.\n");
}

int bad(const std::string &why) {
  fprintf(stderr, "tpusim_sc: %s (try --help)\n", why.c_str());
  return 2;
}

bool parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *v) {
  char *end;
  if (!s || !*s || *s == '-') return false;
  errno = 0;
  const unsigned long long x = strtoull(s, &end, 10);
  if (errno || *end || x < lo || x > hi) return false;
  *v = x;
  return true;
}

bool parse_dims(const char *s, unsigned hi, unsigned *a, unsigned *b) {
  if (!s) return false;
  const char *x = strchr(s, 'x');
  if (!x) return false;
  uint64_t u, v;
  const std::string first(s, x);
  if (!parse_u64(first.c_str(), 1, hi, &u) || !parse_u64(x + 1, 1, hi, &v)) return false;
  *a = (unsigned)u, *b = (unsigned)v;
  return true;
}

/* 0, 2 (bad usage, message printed) or -1 (--help printed). */
int parse(int argc, char **argv, options *o) {
  for (int i = 1; i < argc; i++) {
    const std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    uint64_t x;
    auto need = [&](bool ok) { return ok ? (i++, 0) : bad("bad or missing value for " + a + (v ? std::string(": ") + v : "")); };
    int rc = 0;
    if (a == "--help" || a == "-h") return usage(stdout), -1;
    else if (a == "--selftest") o->selftest = true;
    else if (a == "--no-dmi") o->dmi = false;
    else if (a == "--json") o->json = true;
    else if (a == "--only") {
      if (v && !strcmp(v, "gemm")) o->collective = false;
      else if (v && !strcmp(v, "collective")) o->gemm = false;
      else return bad("--only takes gemm or collective");
      i++;
    } else if (a == "--mxu") rc = need(parse_dims(v, 4096, &o->rows, &o->cols));
    else if (a == "--mxus") rc = need(parse_u64(v, 1, CHIP_MAX_MXUS, &x)), o->mxus = (unsigned)x;
    else if (a == "--cores") rc = need(parse_u64(v, 1, CHIP_MAX_CORES, &x)), o->cores = (unsigned)x;
    else if (a == "--pod") rc = need(parse_dims(v, 255, &o->pod_w, &o->pod_h));
    else if (a == "--m") rc = need(parse_u64(v, 1, 1u << 16, &o->m));
    else if (a == "--k") rc = need(parse_u64(v, 1, 1u << 16, &o->k));
    else if (a == "--n") rc = need(parse_u64(v, 1, 1u << 16, &o->n));
    else if (a == "--seed") rc = need(parse_u64(v, 0, UINT64_MAX, &o->seed));
    else if (a == "--bytes") rc = need(parse_u64(v, 4, 1ull << 30, &o->bytes));
    else if (a == "--hbm-bw") rc = need(parse_u64(v, 1, CHIP_MAX_HBM_BYTES_PER_CYCLE, &x)), o->hbm_bw = (unsigned)x;
    else if (a == "--hbm-latency") rc = need(parse_u64(v, 1, CHIP_MAX_HBM_LATENCY, &x)), o->hbm_latency = (unsigned)x;
    else if (a == "--link-latency") rc = need(parse_u64(v, 0, 1000, &x)), o->link_latency = (unsigned)x;
    else if (a == "--clock-mhz") rc = need(parse_u64(v, 1, 100000, &x)), o->clock_mhz = (unsigned)x;
    else if (a == "--algo") {
      if (v && !strcmp(v, "ring")) o->algo = FW_COLL_RING;
      else if (v && !strcmp(v, "torus2d")) o->algo = FW_COLL_TORUS2D;
      else return bad("--algo takes ring or torus2d");
      i++;
    } else if (a == "--model") {
      if (!v || chip_model_parse(v, &o->model)) return bad("--model takes rtl, fast or check");
      i++;
    } else return bad("unknown option " + a);
    if (rc) return rc;
  }
  if (o->bytes % 4) return bad("--bytes must be a multiple of 4 (fp32 values)");
  char err[512];
  chip_geometry_t g;
  if (chip_geometry_for(o->rows, o->cols, o->mxus, o->cores, o->model, &g, err, sizeof err)) return bad(err);
  if (!o->selftest && o->gemm && chip_gemm_check(&g, o->m, o->k, o->n, nullptr, err, sizeof err)) return bad(err);
  if (!o->selftest && o->collective) {
    pod_coll_config_t c{};
    c.machine.size_x = o->pod_w, c.machine.size_y = o->pod_h;
    c.machine.chip = chip_config_default(o->rows, o->cols);
    c.machine.chip.hbm_bytes = 0, c.machine.chip.model = o->model;
    c.machine.chip.mxus = o->mxus, c.machine.chip.cores = o->cores;
    c.slice = fw_slice_t{0, 0, o->pod_w, o->pod_h, o->pod_w, o->pod_h};
    c.args.op = FW_COLL_ALLREDUCE, c.args.algo = o->algo;
    c.elems = o->bytes / 4;
    if (pod_coll_check(&c, err, sizeof err)) return bad(err);
  }
  return 0;
}

const char *status_name(tlm_response_status s) {
  switch (s) {
    case tlm::TLM_OK_RESPONSE: return "TLM_OK_RESPONSE";
    case tlm::TLM_INCOMPLETE_RESPONSE: return "TLM_INCOMPLETE_RESPONSE";
    case tlm::TLM_GENERIC_ERROR_RESPONSE: return "TLM_GENERIC_ERROR_RESPONSE";
    case tlm::TLM_ADDRESS_ERROR_RESPONSE: return "TLM_ADDRESS_ERROR_RESPONSE";
    case tlm::TLM_COMMAND_ERROR_RESPONSE: return "TLM_COMMAND_ERROR_RESPONSE";
    case tlm::TLM_BURST_ERROR_RESPONSE: return "TLM_BURST_ERROR_RESPONSE";
    case tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE: return "TLM_BYTE_ENABLE_ERROR_RESPONSE";
  }
  return "?";
}

/* SystemC's reports on stderr (its default is stdout, which holds the results). */
void report_handler(const sc_report &r, const sc_actions &actions) {
  if ((actions & SC_DISPLAY) && r.get_severity() != SC_INFO)
    fprintf(stderr, "%s: %s: %s\n", r.get_severity() == SC_INFO ? "info" : r.get_severity() == SC_WARNING ? "warning"
                                                                                                            : "error",
            r.get_msg_type(), r.get_msg());
  sc_report_handler::default_handler(r, actions & ~SC_DISPLAY);
}

}  // namespace

/* The host: a processor model with a bus master port to the lone chip and one to the slice. */
class host : public sc_module {
 public:
  /* (either may be left unbound: --only builds one target) */
  typedef tlm_utils::simple_initiator_socket_optional<host> socket_t;
  socket_t to_chip, to_slice;
  sc_in<bool> chip_irq, slice_irq;
  int exit_code = 0;

  SC_HAS_PROCESS(host);
  host(sc_module_name name, const options &o) : sc_module(name), to_chip("to_chip"), to_slice("to_slice"), o_(o) {
    to_chip.register_invalidate_direct_mem_ptr(this, &host::invalidate);
    to_slice.register_invalidate_direct_mem_ptr(this, &host::invalidate);
    qk_.set_global_quantum(sc_time(1, SC_US));
    qk_.reset();
    SC_THREAD(main);
  }

 private:
  options o_;
  tlm_utils::tlm_quantumkeeper qk_;
  std::vector<tlm::tlm_dmi> dmi_;  /* HBM regions granted (with the socket each came from) */
  std::vector<socket_t *> dmi_sock_;

  void invalidate(sc_dt::uint64, sc_dt::uint64) { dmi_.clear(), dmi_sock_.clear(); }

  /* One transaction; the target's delay goes on the host's local time. */
  tlm_response_status xfer(socket_t &s, tlm::tlm_command cmd, uint64_t addr, void *data, unsigned len,
                           unsigned char *be = nullptr, unsigned be_len = 0, unsigned stream = 0) {
    tlm::tlm_generic_payload p;
    p.set_command(cmd);
    p.set_address(addr);
    p.set_data_ptr(static_cast<unsigned char *>(data));
    p.set_data_length(len);
    p.set_streaming_width(stream ? stream : len);
    p.set_byte_enable_ptr(be);
    p.set_byte_enable_length(be_len);
    p.set_dmi_allowed(false);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time delay = qk_.get_local_time();
    s->b_transport(p, delay);
    qk_.set(delay);
    if (qk_.need_sync()) qk_.sync();
    return p.get_response_status();
  }
  /* Register access that must succeed: a failure ends the example with the target's message. */
  uint32_t rd(socket_t &s, uint64_t addr) {
    uint32_t v = 0;
    if (xfer(s, tlm::TLM_READ_COMMAND, addr, &v, 4) != tlm::TLM_OK_RESPONSE) fail("read of " + hex(addr) + " refused");
    return v;
  }
  void wr(socket_t &s, uint64_t addr, uint32_t v) {
    if (xfer(s, tlm::TLM_WRITE_COMMAND, addr, &v, 4) != tlm::TLM_OK_RESPONSE) fail("write of " + hex(addr) + " refused");
  }
  uint64_t rd64(socket_t &s, uint64_t lo) { return rd(s, lo) | (uint64_t)rd(s, lo + 4) << 32; }
  static std::string hex(uint64_t v) {
    char b[32];
    snprintf(b, sizeof b, "0x%" PRIx64, v);
    return b;
  }
  [[noreturn]] void fail(const std::string &why) {
    fprintf(stderr, "tpusim_sc: %s\n", why.c_str());
    exit_code = 1;
    sc_stop();
    wait();  /* (never resumes) */
    for (;;) {}
  }

  /* HBM bytes at addr: by DMI where the target grants it (--no-dmi: never), else b_transport. */
  void hbm_access(socket_t &s, bool write, uint64_t addr, void *data, size_t len) {
    uint8_t *d = static_cast<uint8_t *>(data);
    while (len) {
      const tlm::tlm_dmi *r = nullptr;
      for (size_t i = 0; i < dmi_.size() && o_.dmi; i++)
        if (dmi_sock_[i] == &s && addr >= dmi_[i].get_start_address() && addr <= dmi_[i].get_end_address()) r = &dmi_[i];
      if (!r && o_.dmi) {
        tlm::tlm_generic_payload p;
        p.set_address(addr);
        p.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        tlm::tlm_dmi dmi;
        if (s->get_direct_mem_ptr(p, dmi) && (write ? dmi.is_write_allowed() : dmi.is_read_allowed())) {
          dmi_.push_back(dmi), dmi_sock_.push_back(&s);
          r = &dmi_.back();
        }
      }
      if (r) {
        const size_t n = std::min<uint64_t>(len, r->get_end_address() - addr + 1);
        uint8_t *mem = r->get_dmi_ptr() + (addr - r->get_start_address());
        write ? memcpy(mem, d, n) : memcpy(d, mem, n);
        qk_.inc(write ? r->get_write_latency() : r->get_read_latency());
        addr += n, d += n, len -= n;
        continue;
      }
      const unsigned n = (unsigned)std::min<size_t>(len, 1u << 20);
      if (xfer(s, write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND, addr, d, n) != tlm::TLM_OK_RESPONSE)
        fail("HBM " + std::string(write ? "write" : "read") + " at " + hex(addr) + " refused");
      addr += n, d += n, len -= n;
    }
    if (qk_.need_sync()) qk_.sync();
  }

  /* A program into queue q's command window and loaded (PROG_LEN). */
  void load(socket_t &s, uint64_t base, unsigned q, const fw_prog_t &p) {
    if (!fw_prog_ok(&p)) fail("out of memory building a program");
    const uint64_t w = base + CMD_BASE + q * CMD_STRIDE;
    const size_t bytes = p.count * ISA_CMD_WORDS * 4;
    for (size_t at = 0; at < bytes; at += 1u << 16) {
      const unsigned n = (unsigned)std::min<size_t>(bytes - at, 1u << 16);
      if (xfer(s, tlm::TLM_WRITE_COMMAND, w + at, (uint8_t *)p.words + at, n) != tlm::TLM_OK_RESPONSE)
        fail("command window of queue " + std::to_string(q) + " refused the program");
    }
    wr(s, base + REG_BASE + REG_QUEUE + q * REG_QUEUE_STRIDE + REG_Q_PROG_LEN, (uint32_t)p.count);
  }

  /* START (a chip's or the slice's), then sleep until its done interrupt. */
  void run(socket_t &s, uint64_t start_reg, uint32_t mask, sc_in<bool> &irq) {
    qk_.sync();  /* the start is acted on at the first rising edge after the host's time */
    wr(s, start_reg, mask);
    do wait(irq.posedge_event());
    while (!irq.read());
    qk_.reset();
  }

  chip_geometry_t geometry(socket_t &s, uint64_t base) {
    if (rd(s, base + REG_BASE + REG_ID) != CHIP_ID) fail("no chip at " + hex(base));
    chip_geometry_t g{};
    g.rows = rd(s, base + REG_BASE + REG_ROWS), g.cols = rd(s, base + REG_BASE + REG_COLS);
    g.acc_depth = rd(s, base + REG_BASE + REG_ACC_DEPTH), g.vmem_lines = rd(s, base + REG_BASE + REG_VMEM_LINES);
    g.queue_depth = rd(s, base + REG_BASE + REG_QUEUE_DEPTH);
    g.mxus = rd(s, base + REG_BASE + REG_MXUS), g.cores = rd(s, base + REG_BASE + REG_CORES);
    return g;
  }

  std::string report(socket_t &s, uint64_t base) {
    char r[REG_REPORT_BYTES + 1] = {0};
    xfer(s, tlm::TLM_READ_COMMAND, base + REG_BASE + REG_REPORT, r, REG_REPORT_BYTES);
    return r;
  }

  void main() {
    if (o_.selftest) selftest();
    else {
      if (o_.gemm) gemm();
      if (o_.collective) collective();
    }
    sc_stop();
  }

  void gemm();
  void collective();
  void selftest();
  bool expect(const char *name, tlm_response_status got, tlm_response_status want, int *passed, int *total);
};

void host::gemm() {
  stopwatch_t w;
  stopwatch_start(&w);
  const size_t m = o_.m, k = o_.k, n = o_.n;
  /* the inputs `tpusim gemm` makes from the seed */
  rng_t rng;
  rng_seed(&rng, o_.seed);
  std::vector<uint16_t> a(m * k), b(k * n);
  for (auto &x : a) x = rng_bf16(&rng, -4, 1);
  for (auto &x : b) x = rng_bf16(&rng, -4, 1);
  const chip_geometry_t g = geometry(to_chip, 0);
  const chip_gemm_layout_t l = chip_gemm_layout(g.cols, m, k, n);
  fprintf(stderr, "tpusim_sc: GEMM: A and B into HBM over TLM (%s)...\n", o_.dmi ? "DMI" : "b_transport");
  std::vector<uint16_t> row(std::max(l.lda, l.ldb), 0);
  for (size_t i = 0; i < m; i++) {
    std::fill(row.begin(), row.end(), 0);
    std::copy(a.begin() + i * k, a.begin() + (i + 1) * k, row.begin());
    hbm_access(to_chip, true, l.a + 2 * i * l.lda, row.data(), 2 * l.lda);
  }
  for (size_t i = 0; i < k; i++) {
    std::fill(row.begin(), row.end(), 0);
    std::copy(b.begin() + i * n, b.begin() + (i + 1) * n, row.begin());
    hbm_access(to_chip, true, l.b + 2 * i * l.ldb, row.data(), 2 * l.ldb);
  }
  std::vector<uint8_t> zero(4 * g.cols, 0);
  hbm_access(to_chip, true, l.zero, zero.data(), zero.size());
  /* the driver builds the firmware's programs and hands them to the chip */
  fw_prog_t cq[CHIP_MAX_CORES], dq[CHIP_MAX_CORES];
  char err[512];
  if (chip_gemm_programs(&g, m, k, n, nullptr, cq, dq, err, sizeof err)) fail(err);
  size_t cmds[2] = {0, 0};
  for (unsigned c = 0; c < isa_geometry_cores(&g); c++) {
    load(to_chip, 0, c * ISA_NUM_QUEUES + ISA_QUEUE_COMPUTE, cq[c]);
    load(to_chip, 0, c * ISA_NUM_QUEUES + ISA_QUEUE_DMA, dq[c]);
    cmds[0] += cq[c].count, cmds[1] += dq[c].count;
  }
  for (unsigned c = 0; c < CHIP_MAX_CORES; c++) fw_prog_free(&cq[c]), fw_prog_free(&dq[c]);
  fprintf(stderr, "tpusim_sc: GEMM: %zu compute and %zu DMA commands loaded; running...\n", cmds[0], cmds[1]);
  const uint32_t queues = rd(to_chip, REG_BASE + REG_QUEUES);
  run(to_chip, REG_BASE + REG_START, (1u << queues) - 1, chip_irq);
  const uint32_t st = rd(to_chip, REG_BASE + REG_STATUS);
  wr(to_chip, REG_BASE + REG_IRQ, 1);
  if (st & STATUS_FAILED) fail("GEMM run failed: " + report(to_chip, 0));
  const uint64_t cycles = rd64(to_chip, REG_BASE + REG_RUN_CYCLES_LO);
  const uint64_t hbm_bytes = rd64(to_chip, REG_BASE + REG_COUNTERS + 8 * COUNTER_HBM_BYTES);
  const uint64_t dma_busy = rd64(to_chip, REG_BASE + REG_COUNTERS + 8 * COUNTER_DMA_BUSY);
  const uint64_t mxu_busy = rd64(to_chip, REG_BASE + REG_COUNTERS + 8 * COUNTER_MXU_BUSY);
  std::vector<uint32_t> c(m * n);
  hbm_access(to_chip, false, l.c, c.data(), 4 * m * n);
  golden_diff_t d;
  if (gemm_golden_check(g.rows, m, k, n, a.data(), b.data(), false, false, c.data(), &d)) fail("out of memory");
  const perf_chip_t pc = {.rows = g.rows, .cols = g.cols, .mxus = isa_geometry_mxus(&g), .cores = isa_geometry_cores(&g),
                          .clock_mhz = (double)o_.clock_mhz};
  const double ideal = perf_gemm_ideal_cycles(&pc, m, k, n);
  report_t r;
  report_init(&r);
  report_str(&r, "part", "gemm");
  report_u64(&r, "m", m), report_u64(&r, "k", k), report_u64(&r, "n", n);
  report_u64(&r, "mxu_rows", g.rows), report_u64(&r, "mxu_cols", g.cols);
  report_u64(&r, "mxus", isa_geometry_mxus(&g)), report_u64(&r, "cores", isa_geometry_cores(&g));
  report_str(&r, "model", chip_model_name(o_.model));
  report_u64(&r, "seed", o_.seed);
  report_u64(&r, "cycles", cycles);
  report_f64(&r, "time_us", cycles / (double)o_.clock_mhz);
  report_u64(&r, "clock_mhz", o_.clock_mhz);
  report_u64(&r, "hbm_bytes", hbm_bytes), report_u64(&r, "hbm_bw", o_.hbm_bw), report_u64(&r, "hbm_latency", o_.hbm_latency);
  report_u64(&r, "dma_busy_cycles", dma_busy), report_u64(&r, "mxu_busy_cycles", mxu_busy);
  report_u64(&r, "compute_commands", cmds[0]), report_u64(&r, "dma_commands", cmds[1]);
  report_f64(&r, "utilization", ideal / (double)cycles);
  report_bool(&r, "bit_exact", d.mismatches == 0);
  report_u64(&r, "mismatches", d.mismatches);
  report_str(&r, "transport", o_.dmi ? "dmi" : "b_transport");
  const std::string sim = sc_time_stamp().to_string();
  report_str(&r, "simulated_time", sim.c_str());
  report_f64(&r, "host_seconds", stopwatch_seconds(&w));
  report_text_f64(&r, "c00", bits_fp32_value(c[0]));
  report_line(&r, "GEMM {m}x{k} * {k}x{n} on a SystemC chip ({cores} core(s) of {mxus} {mxu_rows}x{mxu_cols} MXU(s), "
                  "{model} model), over TLM-2.0");
  report_line(&r, "  cycles          {cycles}  ({time_us:%.2f} us at {clock_mhz} MHz)");
  report_line(&r, "  HBM             {hbm_bytes} bytes at {hbm_bw} bytes/cycle, latency {hbm_latency}");
  report_line(&r, "  busy cycles     DMA {dma_busy_cycles}, MXU {mxu_busy_cycles}");
  report_line(&r, "  programs        {compute_commands} compute, {dma_commands} DMA commands");
  report_line(&r, "  utilization     {utilization*100:%.2f}%");
  report_line(&r, "  golden model    {bit_exact?agrees on every bit|DISAGREES} ({m} of {m} rows checked)");
  report_line(&r, "  C[0][0]         {c00:%.9g}");
  report_line(&r, "  simulated time  {simulated_time}");
  report_line(&r, "  host            {host_seconds:%.3f} s");
  report_print(&r, o_.json, stdout);
  fflush(stdout);
  if (d.mismatches) {
    fprintf(stderr, "tpusim_sc: %zu of %zu outputs differ from the golden model; the first: C[%zu][%zu] is 0x%08x, "
                    "golden 0x%08x\n", d.mismatches, m * n, d.first / n, d.first % n, d.got, d.want);
    exit_code = 1;
  }
}

void host::collective() {
  stopwatch_t w;
  stopwatch_start(&w);
  const unsigned W = o_.pod_w, H = o_.pod_h, chips = W * H;
  const uint64_t elems = o_.bytes / 4;
  const chip_geometry_t g = geometry(to_slice, 0);
  const unsigned lanes = g.cols, lb = 4 * lanes;
  fw_slice_t s = {0, 0, W, H, W, H};
  fw_coll_args_t a{};
  a.op = FW_COLL_ALLREDUCE;
  a.algo = o_.algo;
  a.data_line = 0;
  a.lines = (uint32_t)((elems + lanes - 1) / lanes);
  pod_coll_default_chunk(&s, &a, g.vmem_lines);
  char err[512];
  if (fw_coll_check(&g, &s, &a, err, sizeof err)) fail(err);
  auto win = [](unsigned i) { return (uint64_t)i * CHIP_WINDOW; };
  /* 1. every chip's values into its HBM, and a DMA program copies them into VMEM */
  fprintf(stderr, "tpusim_sc: all-reduce: %u chips' buffers into HBM over TLM, then into VMEM...\n", chips);
  std::vector<uint32_t> in(chips * elems), out(chips * elems);
  std::vector<uint32_t> buf((size_t)a.lines * lanes);
  for (unsigned i = 0; i < chips; i++) {
    std::fill(buf.begin(), buf.end(), 0);
    for (uint64_t e = 0; e < elems; e++) buf[e] = in[i * elems + e] = rng_coll_input(o_.seed, i, e);
    hbm_access(to_slice, true, win(i), buf.data(), buf.size() * 4);
    fw_prog_t p;
    fw_prog_init(&p);
    fw_dma_hbm_to_vmem(&p, ISA_SEM_NONE, 0, 0, lb, 0, a.lines, lb);
    fw_fence(&p);
    fw_halt(&p);
    load(to_slice, win(i), ISA_QUEUE_DMA, p);
    fw_prog_free(&p);
  }
  run(to_slice, SLICE_REG_BASE + SREG_START, ISA_QMASK_DMA, slice_irq);
  if (rd(to_slice, SLICE_REG_BASE + SREG_STATUS) & STATUS_FAILED) fail("the copy into VMEM failed: " + report(to_slice, 0));
  wr(to_slice, SLICE_REG_BASE + SREG_IRQ, 1);
  /* 2. the slice, and the collective's programs on every chip; one START for all */
  for (unsigned i = 0; i < chips; i++) {
    const unsigned x = i % W, y = i / W;
    wr(to_slice, win(i) + REG_BASE + REG_SLICE, s.x0 | s.y0 << 8 | s.w << 16 | s.h << 24);
    fw_prog_t cq, dq;
    fw_prog_init(&cq), fw_prog_init(&dq);
    if (fw_collective(&g, &s, &a, x, y, &cq, &dq, err, sizeof err)) fail(err);
    fw_halt(&cq), fw_halt(&dq);
    load(to_slice, win(i), ISA_QUEUE_COMPUTE, cq);
    load(to_slice, win(i), ISA_QUEUE_DMA, dq);
    fw_prog_free(&cq), fw_prog_free(&dq);
  }
  fprintf(stderr, "tpusim_sc: all-reduce: running...\n");
  run(to_slice, SLICE_REG_BASE + SREG_START, ISA_QMASK_ALL, slice_irq);
  wr(to_slice, SLICE_REG_BASE + SREG_IRQ, 1);
  if (rd(to_slice, SLICE_REG_BASE + SREG_STATUS) & STATUS_FAILED) {
    std::string why;
    for (unsigned i = 0; i < chips; i++)
      if (rd(to_slice, win(i) + REG_BASE + REG_STATUS) & STATUS_FAILED) why += " chip " + std::to_string(i) + ": " + report(to_slice, win(i));
    fail("the all-reduce failed:" + why);
  }
  const uint64_t cycles = rd64(to_slice, SLICE_REG_BASE + SREG_RUN_CYCLES_LO);
  unsigned sems_left = 0;
  for (unsigned i = 0; i < chips; i++)
    for (unsigned k = 0; k < ISA_NUM_SEMS; k++) sems_left += rd(to_slice, win(i) + REG_BASE + REG_SEM + 4 * k) != 0;
  /* 3. the results back to HBM by DMA, and read */
  for (unsigned i = 0; i < chips; i++) {
    fw_prog_t p;
    fw_prog_init(&p);
    fw_dma_vmem_to_hbm(&p, ISA_SEM_NONE, 0, 0, 0, lb, a.lines, lb);
    fw_fence(&p);
    fw_halt(&p);
    load(to_slice, win(i), ISA_QUEUE_DMA, p);
    fw_prog_free(&p);
  }
  run(to_slice, SLICE_REG_BASE + SREG_START, ISA_QMASK_DMA, slice_irq);
  wr(to_slice, SLICE_REG_BASE + SREG_IRQ, 1);
  if (rd(to_slice, SLICE_REG_BASE + SREG_STATUS) & STATUS_FAILED) fail("the copy back to HBM failed");
  for (unsigned i = 0; i < chips; i++) {
    hbm_access(to_slice, false, win(i), buf.data(), buf.size() * 4);
    std::copy(buf.begin(), buf.begin() + elems, out.begin() + i * elems);
  }
  coll_check_t chk;
  if (coll_golden_check(&s, &a, lanes, elems, in.data(), out.data(), &chk)) fail("out of memory for the golden model");
  const bool correct = chk.mismatches == 0 && chk.bound_violations == 0 && sems_left == 0;
  const pod_coll_bw_t bw = pod_coll_bandwidth(&s, a.op, o_.bytes, cycles, o_.clock_mhz, 8); /* 64-bit flits, a flit a cycle */
  report_t r;
  report_init(&r);
  report_str(&r, "part", "collective");
  report_str(&r, "op", "allreduce");
  report_str(&r, "algo", o_.algo == FW_COLL_TORUS2D ? "torus2d" : "ring");
  report_u64(&r, "w", W), report_u64(&r, "h", H);
  report_u64(&r, "link_latency", o_.link_latency);
  report_str(&r, "model", chip_model_name(o_.model));
  report_u64(&r, "seed", o_.seed);
  report_u64(&r, "bytes", o_.bytes);
  report_u64(&r, "cycles", cycles);
  report_f64(&r, "time_us", bw.time_s * 1e6);
  report_u64(&r, "clock_mhz", o_.clock_mhz);
  report_f64(&r, "algbw_GBps", bw.algbw), report_f64(&r, "busbw_GBps", bw.busbw);
  report_u64(&r, "mismatches", chk.mismatches);
  report_u64(&r, "float64_bound_violations", chk.bound_violations);
  report_u64(&r, "semaphores_left", sems_left);
  report_bool(&r, "correct", correct);
  const std::string sim = sc_time_stamp().to_string();
  report_str(&r, "simulated_time", sim.c_str());
  report_f64(&r, "host_seconds", stopwatch_seconds(&w));
  report_line(&r, "allreduce on a {w}x{h} SystemC slice ({model} model, link latency {link_latency}), {bytes} bytes per "
                  "chip, over TLM-2.0");
  report_line(&r, "  cycles          {cycles}  ({time_us:%.2f} us at {clock_mhz} MHz)");
  report_line(&r, "  algbw           {algbw_GBps:%.3f} GB/s");
  report_line(&r, "  busbw           {busbw_GBps:%.3f} GB/s");
  report_line(&r, "  golden model    {correct?agrees on every bit of every chip|DISAGREES}");
  report_line(&r, "  simulated time  {simulated_time}");
  report_line(&r, "  host            {host_seconds:%.3f} s");
  report_print(&r, o_.json, stdout);
  fflush(stdout);
  if (!correct) {
    fprintf(stderr, "tpusim_sc: %" PRIu64 " values differ from the golden model, %" PRIu64
                    " sums outside the float64 bound, %u semaphores left non-zero\n",
            chk.mismatches, chk.bound_violations, sems_left);
    exit_code = 1;
  }
}

bool host::expect(const char *name, tlm_response_status got, tlm_response_status want, int *passed, int *total) {
  const bool ok = got == want;
  printf("selftest %-28s %-32s %s\n", name, status_name(got), ok ? "ok" : (std::string("FAILED (want ") + status_name(want) + ")").c_str());
  fflush(stdout);
  *passed += ok, ++*total;
  return ok;
}

/* The memory map's error paths (docs/systemc.md, "Errors"): each case a line. */
void host::selftest() {
  int passed = 0, total = 0;
  using namespace tlm;
  const tlm_command R = TLM_READ_COMMAND, Wr = TLM_WRITE_COMMAND;
  uint8_t buf[64] = {0};
  const uint64_t hbm = rd64(to_chip, REG_BASE + REG_HBM_BYTES_LO);
  const uint32_t queues = rd(to_chip, REG_BASE + REG_QUEUES), depth = rd(to_chip, REG_BASE + REG_QUEUE_DEPTH);
  const uint64_t window = (uint64_t)depth * ISA_CMD_WORDS * 4;
  expect("out_of_map", xfer(to_chip, R, 0x300000000ull, buf, 4), TLM_ADDRESS_ERROR_RESPONSE, &passed, &total);
  expect("between_hbm_and_commands", xfer(to_chip, R, hbm + 64, buf, 4), TLM_ADDRESS_ERROR_RESPONSE, &passed, &total);
  expect("past_last_queue", xfer(to_chip, Wr, CMD_BASE + queues * CMD_STRIDE, buf, 4), TLM_ADDRESS_ERROR_RESPONSE,
         &passed, &total);
  expect("hbm_burst_crosses_end", xfer(to_chip, Wr, hbm - 8, buf, 16), TLM_BURST_ERROR_RESPONSE, &passed, &total);
  expect("command_burst_crosses_end", xfer(to_chip, Wr, CMD_BASE + window - 8, buf, 16), TLM_BURST_ERROR_RESPONSE,
         &passed, &total);
  expect("register_burst_crosses_end", xfer(to_chip, R, REG_BASE + REG_SIZE - 4, buf, 8), TLM_BURST_ERROR_RESPONSE,
         &passed, &total);
  expect("register_8_bytes", xfer(to_chip, R, REG_BASE + REG_ID, buf, 8), TLM_BURST_ERROR_RESPONSE, &passed, &total);
  expect("register_unaligned", xfer(to_chip, R, REG_BASE + REG_ID + 2, buf, 4), TLM_ADDRESS_ERROR_RESPONSE, &passed,
         &total);
  expect("register_hole", xfer(to_chip, R, REG_BASE + 0xFFC, buf, 4), TLM_ADDRESS_ERROR_RESPONSE, &passed, &total);
  unsigned char be4[4] = {0xFF, 0, 0xFF, 0};
  expect("register_byte_enables", xfer(to_chip, R, REG_BASE + REG_ID, buf, 4, be4, 4), TLM_BYTE_ENABLE_ERROR_RESPONSE,
         &passed, &total);
  uint32_t v = 1;
  expect("register_read_only", xfer(to_chip, Wr, REG_BASE + REG_ID, &v, 4), TLM_COMMAND_ERROR_RESPONSE, &passed, &total);
  expect("command_unaligned", xfer(to_chip, Wr, CMD_BASE + 2, buf, 4), TLM_ADDRESS_ERROR_RESPONSE, &passed, &total);
  expect("zero_length", xfer(to_chip, R, 0, buf, 0), TLM_GENERIC_ERROR_RESPONSE, &passed, &total);
  expect("streaming", xfer(to_chip, R, 0, buf, 16, nullptr, 0, 4), TLM_BURST_ERROR_RESPONSE, &passed, &total);
  v = 1u << queues;
  expect("start_no_such_queue", xfer(to_chip, Wr, REG_BASE + REG_START, &v, 4), TLM_GENERIC_ERROR_RESPONSE, &passed,
         &total);
  v = depth + 1;
  expect("program_too_long", xfer(to_chip, Wr, REG_BASE + REG_QUEUE + REG_Q_PROG_LEN, &v, 4),
         TLM_GENERIC_ERROR_RESPONSE, &passed, &total);
  /* byte enables on HBM are handled: the disabled bytes keep their values */
  uint8_t ones[8], twos[8], back[8];
  memset(ones, 0x11, 8), memset(twos, 0x22, 8);
  unsigned char be2[2] = {0xFF, 0};
  xfer(to_chip, Wr, 256, ones, 8);
  const bool be_ok = expect("hbm_byte_enables", xfer(to_chip, Wr, 256, twos, 8, be2, 2), TLM_OK_RESPONSE, &passed, &total);
  xfer(to_chip, R, 256, back, 8);
  bool pattern = be_ok;
  for (int i = 0; i < 8; i++) pattern &= back[i] == (i % 2 ? 0x11 : 0x22);
  printf("selftest %-28s %-32s %s\n", "hbm_byte_enables_data", pattern ? "22 11 22 11 22 11 22 11" : "wrong bytes",
         pattern ? "ok" : "FAILED");
  passed += pattern, total++;
  /* DMI: granted for HBM, the pointer sees what b_transport wrote; refused elsewhere */
  {
    tlm_generic_payload p;
    tlm_dmi dmi;
    p.set_address(256);
    const bool got = to_chip->get_direct_mem_ptr(p, dmi);
    const bool same = got && dmi.get_dmi_ptr()[256 - dmi.get_start_address()] == 0x22;
    p.set_address(REG_BASE);
    tlm_dmi none;
    const bool refused = !to_chip->get_direct_mem_ptr(p, none);
    printf("selftest %-28s %-32s %s\n", "dmi", got && same && refused ? "HBM granted, registers refused" : "wrong",
           got && same && refused ? "ok" : "FAILED");
    passed += got && same && refused, total++;
  }
  /* a chip that runs refuses a second START and new programs; a run that never ends times out
   * with a report, and the chip runs again afterwards */
  {
    fw_prog_t p;
    fw_prog_init(&p);
    fw_sem_wait(&p, 0, 1);  /* waits for ever: nothing signals semaphore 0 */
    fw_halt(&p);
    load(to_chip, 0, ISA_QUEUE_COMPUTE, p);
    fw_prog_free(&p);
    wr(to_chip, REG_BASE + REG_TIMEOUT, 2000);
    qk_.sync();
    wr(to_chip, REG_BASE + REG_START, ISA_QMASK_COMPUTE);
    wait(sc_time(20, SC_NS));
    v = ISA_QMASK_COMPUTE;
    expect("start_while_running", xfer(to_chip, Wr, REG_BASE + REG_START, &v, 4), TLM_GENERIC_ERROR_RESPONSE, &passed,
           &total);
    v = 1;
    expect("load_while_running", xfer(to_chip, Wr, REG_BASE + REG_QUEUE + REG_Q_PROG_LEN, &v, 4),
           TLM_GENERIC_ERROR_RESPONSE, &passed, &total);
    expect("window_while_running", xfer(to_chip, Wr, CMD_BASE, buf, 16), TLM_GENERIC_ERROR_RESPONSE, &passed, &total);
    v = 0xF;
    expect("slice_while_running", xfer(to_chip, Wr, REG_BASE + REG_SLICE, &v, 4), TLM_GENERIC_ERROR_RESPONSE, &passed,
           &total);
    while (!chip_irq.read()) wait(chip_irq.posedge_event());
    const uint32_t st = rd(to_chip, REG_BASE + REG_STATUS);
    const std::string r = report(to_chip, 0);
    const bool timed = (st & STATUS_FAILED) && (st & STATUS_TIMED_OUT) && r.find("timed out") != std::string::npos &&
                       r.find("semaphore 0") != std::string::npos;
    printf("selftest %-28s %-32s %s\n", "timeout_reported", timed ? "failed, timed out, reported" : "wrong",
           timed ? "ok" : "FAILED");
    if (!timed) fprintf(stderr, "tpusim_sc: status 0x%x, report: %s\n", st, r.c_str());
    passed += timed, total++;
    wr(to_chip, REG_BASE + REG_IRQ, 1);
    wr(to_chip, REG_BASE + REG_TIMEOUT, 0);
    fw_prog_init(&p);
    fw_sem_signal(&p, 1, 1);
    fw_halt(&p);
    load(to_chip, 0, ISA_QUEUE_COMPUTE, p);
    fw_prog_free(&p);
    run(to_chip, REG_BASE + REG_START, ISA_QMASK_COMPUTE, chip_irq);
    const uint32_t st2 = rd(to_chip, REG_BASE + REG_STATUS);
    const bool again = !(st2 & STATUS_FAILED) && rd(to_chip, REG_BASE + REG_SEM + 4) == 1;
    printf("selftest %-28s %-32s %s\n", "runs_after_timeout", again ? "ran, semaphore 1 = 1" : "wrong", again ? "ok" : "FAILED");
    passed += again, total++;
    wr(to_chip, REG_BASE + REG_IRQ, 1);
  }
  /* the slice: outside its chips' windows, its own registers */
  expect("slice_out_of_map", xfer(to_slice, R, (uint64_t)o_.pod_w * o_.pod_h * CHIP_WINDOW, buf, 4),
         TLM_ADDRESS_ERROR_RESPONSE, &passed, &total);
  expect("slice_crosses_chips", xfer(to_slice, R, CHIP_WINDOW - 8, buf, 16), TLM_BURST_ERROR_RESPONSE, &passed, &total);
  expect("slice_register_hole", xfer(to_slice, R, SLICE_REG_BASE + 0x40, buf, 4), TLM_ADDRESS_ERROR_RESPONSE, &passed,
         &total);
  v = 1u << queues;
  expect("slice_start_no_such_queue", xfer(to_slice, Wr, SLICE_REG_BASE + SREG_START, &v, 4), TLM_GENERIC_ERROR_RESPONSE,
         &passed, &total);
  expect("slice_chip_register", xfer(to_slice, R, CHIP_WINDOW + REG_BASE + REG_ID, buf, 4), TLM_OK_RESPONSE, &passed,
         &total);
  /* a slice whose chip (0,0) waits for ever: the slice's run times out, every chip is aborted and
   * drained, the report names the chip's queue; the slice then runs again */
  {
    const unsigned chips = o_.pod_w * o_.pod_h;
    for (int pass = 0; pass < 2; pass++) {
      for (unsigned i = 0; i < chips; i++) {
        fw_prog_t cq, dq;
        fw_prog_init(&cq), fw_prog_init(&dq);
        if (pass == 0 && i == 0) fw_sem_wait(&cq, 0, 1);
        fw_halt(&cq), fw_halt(&dq);
        load(to_slice, i * CHIP_WINDOW, ISA_QUEUE_COMPUTE, cq);
        load(to_slice, i * CHIP_WINDOW, ISA_QUEUE_DMA, dq);
        fw_prog_free(&cq), fw_prog_free(&dq);
        wr(to_slice, i * CHIP_WINDOW + REG_BASE + REG_TIMEOUT, pass == 0 ? 3000 : 0);
      }
      run(to_slice, SLICE_REG_BASE + SREG_START, ISA_QMASK_ALL, slice_irq);
      wr(to_slice, SLICE_REG_BASE + SREG_IRQ, 1);
      const uint32_t st = rd(to_slice, SLICE_REG_BASE + SREG_STATUS);
      const std::string r = report(to_slice, 0);
      const bool ok = pass == 0 ? (st & STATUS_FAILED) && (st & STATUS_TIMED_OUT) &&
                                      r.find("semaphore 0") != std::string::npos &&
                                      !(rd(to_slice, SLICE_REG_BASE + SREG_STATUS) & STATUS_BUSY)
                                : !(st & STATUS_FAILED) && rd64(to_slice, SLICE_REG_BASE + SREG_RUN_CYCLES_LO) > 0;
      printf("selftest %-28s %-32s %s\n", pass == 0 ? "slice_timeout_reported" : "slice_runs_after_timeout",
             ok ? (pass == 0 ? "failed, timed out, reported" : "ran") : "wrong", ok ? "ok" : "FAILED");
      if (!ok) fprintf(stderr, "tpusim_sc: slice status 0x%x, chip (0,0)'s report: %s\n", st, r.c_str());
      passed += ok, total++;
    }
  }
  printf("selftest: %d of %d passed\n", passed, total);
  if (passed != total) exit_code = 1;
}

int sc_main(int argc, char **argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);  /* (the banner would go to stderr) */
  options o;
  const int rc = parse(argc, argv, &o);
  if (rc) return rc < 0 ? 0 : rc;
  sc_report_handler::set_handler(report_handler);
  sc_set_time_resolution(1, SC_PS);
  const double mhz = o.clock_mhz;
  sc_clock clk("clk", sc_time(1e6 / mhz, SC_PS));
  /* the lone chip of `tpusim gemm`: its HBM sized for the GEMM */
  chip_config_t cc = chip_config_default(o.rows, o.cols);
  const uint64_t need = chip_gemm_hbm_bytes(o.cols, o.m, o.k, o.n);
  cc.hbm_bytes = need < (1u << 20) ? (1u << 20) : need;
  cc.hbm_bytes_per_cycle = o.hbm_bw;
  cc.hbm_latency = o.hbm_latency;
  cc.seed = o.seed;
  cc.model = o.model;
  cc.mxus = o.mxus, cc.cores = o.cores;
  /* (only what the run uses is built: --only gemm builds no slice, --only collective no lone chip) */
  std::unique_ptr<sc_chip> chip(o.selftest || o.gemm ? new sc_chip("chip", cc, mhz) : nullptr);
  /* the slice of `tpusim collective`: HBM for a chip's buffer */
  chip_config_t sc = chip_config_default(o.rows, o.cols);
  const uint64_t lines = (o.bytes / 4 + o.cols - 1) / o.cols;
  sc.hbm_bytes = lines * 4 * o.cols;
  sc.seed = o.seed;
  sc.model = o.model;
  sc.mxus = o.mxus, sc.cores = o.cores;
  std::unique_ptr<sc_slice> slice(o.selftest || o.collective
                                      ? new sc_slice("slice", o.pod_w, o.pod_h, o.link_latency, sc, mhz)
                                      : nullptr);
  if (chip && !chip->ok()) return fprintf(stderr, "tpusim_sc: %s\n", chip->error().c_str()), 2;
  if (slice && !slice->ok()) return fprintf(stderr, "tpusim_sc: %s\n", slice->error().c_str()), 2;
  sc_signal<bool> chip_irq("chip_irq"), slice_irq("slice_irq");
  host h("host", o);
  if (chip) {
    chip->clk(clk);
    chip->irq(chip_irq);
    h.to_chip.bind(chip->socket);
  }
  if (slice) {
    slice->clk(clk);
    slice->irq(slice_irq);
    h.to_slice.bind(slice->socket);
  }
  h.chip_irq(chip_irq);
  h.slice_irq(slice_irq);
  sc_start();
  return h.exit_code;
}
