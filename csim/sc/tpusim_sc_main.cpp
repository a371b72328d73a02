/*
 * tpusim_sc: the SystemC/TLM-2.0 example (issue 16; docs/systemc.md). A small host model drives,
 * over TLM transactions only, a lone chip (sc_chip) and a W x H slice (sc_slice, default 2x2),
 * all clocked from one sc_clock at the chip's frequency:
 *   1. GEMM: writes A and B into the chip's HBM (DMI, or b_transport with --no-dmi), writes the
 *      firmware GEMM's programs (fw/gemm.h, built on the host as a driver would) into the
 *      command windows, loads them, starts the queues, waits for the done interrupt, reads C;
 *   2. a collective (all-reduce by default): writes each chip's buffer into its HBM, a DMA
 *      program copies it into VMEM, the collective's programs run on every chip at once (the
 *      slice's START), a DMA program copies the result back, the host reads it.
 * A thin client of the runtime: the machine is the CLI's (pod/machine.h), the programs the
 * firmware's as the runtime builds them (chip_gemm_programs, pod_coll_plan,
 * pod_coll_programs, pod_coll_copy_program), the checks the golden models', the arithmetic
 * runtime/perf.h's; what is its own is moving data and programs over TLM. Each part prints the
 * cycles `tpusim gemm` and `tpusim collective` print for the same inputs. --selftest runs the error paths of the
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
#include "pod/machine.h"
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

const char *const coll_op_names[] = {"allreduce", "reduce_scatter", "all_gather", "broadcast"};

struct options {
  /* the machine (docs/machines.md): the chips of both parts and the slice's links; the slice is
   * pod.size_x x pod.size_y (default 2x2) */
  machine_t mach = machine_default();
  uint64_t m = 64, k = 64, n = 64, seed = 1;
  uint64_t bytes = 4096;
  fw_coll_op_t op = FW_COLL_ALLREDUCE;
  fw_coll_algo_t algo = FW_COLL_RING;
  bool gemm = true, collective = true, selftest = false, dmi = true, json = false;
  /* the collective as `tpusim collective` plans it (pod_coll_plan): the slice's machine (each
   * chip's HBM sized for the buffer), its geometry, slice and arguments */
  pod_config_t slice_machine{};
  chip_geometry_t slice_geo{};
  fw_slice_t slice{};
  fw_coll_args_t args{};
  unsigned clock_mhz() const { return mach.pod.chip.clock_mhz ? mach.pod.chip.clock_mhz : CHIP_DEFAULT_CLOCK_MHZ; }
};

void usage(FILE *f) {
  fprintf(f,
          "usage: tpusim_sc [--only gemm|collective] [--machine FILE | --chip small|v2|v3] [--mxu RxC] [--mxus X]\n"
          "                 [--cores K] [--m M --k K --n N] [--seed S] [--hbm-bw B] [--hbm-latency L] [--pod WxH]\n"
          "                 [--op OP] [--bytes B] [--algo ring|torus2d] [--link-latency L] [--link-bytes B]\n"
          "                 [--flit-words W] [--model rtl|fast|check] [--clock-mhz F] [--no-dmi] [--json]\n"
          "       tpusim_sc --selftest [--model rtl|fast|check]\n\n"
          "The SystemC/TLM-2.0 example (docs/systemc.md): a host model drives a chip and a slice\n"
          "of chips through TLM transactions only. It runs the firmware GEMM on a lone chip (as\n"
          "`tpusim gemm --mxu RxC --m M --k K --n N --seed S --model ...`), then a collective of\n"
          "B bytes per chip on a WxH slice (default 2x2, as `tpusim collective --pod WxH --op\n"
          "OP --bytes B ...`), checks both bit for bit against the golden models and prints\n"
          "their cycles. Defaults: --mxu 16x16, M=K=N=64, --op allreduce, --bytes 4096, --link-latency 0, seed 1.\n"
          "OP: allreduce, reduce_scatter, all_gather, broadcast (from chip 0).\n"
          "--machine FILE, --chip small|v2|v3: the machine from a file or a preset (docs/machines.md), as\n"
          "`tpusim`'s; the other options override it. --link-bytes B, --flit-words W: the slice's links\n"
          "carry B bytes a cycle each way in flits of W 64-bit words (W > 1: the fast model), as the pod's.\n"
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

/* The index of `name` in a "a|b|c" list, or -1. */
int choice(const char *list, const char *name) {
  if (!name) return -1;
  int i = 0;
  for (const char *p = list;; i++) {
    const char *bar = strchr(p, '|');
    const size_t len = bar ? (size_t)(bar - p) : strlen(p);
    if (strlen(name) == len && !strncmp(p, name, len)) return i;
    if (!bar) return -1;
    p = bar + 1;
  }
}

/* --machine FILE or --chip NAME: the machine the other options start from (0, or 2 with a message). */
int base_machine(int argc, char **argv, options *o) {
  for (int i = 1; i + 1 < argc; i++) {
    const std::string a = argv[i];
    char err[512];
    if (a == "--machine") {
      if (machine_load(argv[i + 1], &o->mach, err, sizeof err)) return bad(std::string("--machine: ") + err);
    } else if (a == "--chip") {
      const int p = choice(machine_preset_names(), argv[i + 1]);
      if (p < 0) return bad(std::string("--chip takes ") + machine_preset_names());
      if (machine_preset((unsigned)p, &o->mach, err, sizeof err)) return bad(err);
    } else {
      continue;
    }
    i++;
  }
  return 0;
}

/* Option a (its value v) onto *o: 1 when it took v, 0 when none, 2 (bad usage, message printed)
 * or -1 (--help printed). */
int parse_option(const std::string &a, const char *v, options *o) {
  chip_config_t *c = &o->mach.pod.chip;
  pod_config_t *pod = &o->mach.pod;
  uint64_t x;
  auto need = [&](bool ok) { return ok ? 1 : bad("bad or missing value for " + a + (v ? std::string(": ") + v : "")); };
  if (a == "--help" || a == "-h") return usage(stdout), -1;
  if (a == "--selftest") return o->selftest = true, 0;
  if (a == "--no-dmi") return o->dmi = false, 0;
  if (a == "--json") return o->json = true, 0;
  if (a == "--machine" || a == "--chip") return 1;  /* (base_machine) */
  if (a == "--only") {
    if (v && !strcmp(v, "gemm")) o->collective = false;
    else if (v && !strcmp(v, "collective")) o->gemm = false;
    else return bad("--only takes gemm or collective");
    return 1;
  }
  if (a == "--mxu") return need(parse_dims(v, 4096, &c->rows, &c->cols));
  if (a == "--pod") return need(parse_dims(v, 255, &pod->size_x, &pod->size_y));
  if (a == "--m") return need(parse_u64(v, 1, 1u << 16, &o->m));
  if (a == "--k") return need(parse_u64(v, 1, 1u << 16, &o->k));
  if (a == "--n") return need(parse_u64(v, 1, 1u << 16, &o->n));
  if (a == "--seed") return need(parse_u64(v, 0, UINT64_MAX, &o->seed));
  if (a == "--bytes") return need(parse_u64(v, 4, 1ull << 30, &o->bytes));
  const struct {
    const char *name;
    unsigned *field;
    uint64_t lo, hi;
  } numbers[] = {
      {"--mxus", &c->mxus, 1, CHIP_MAX_MXUS},
      {"--cores", &c->cores, 1, CHIP_MAX_CORES},
      {"--hbm-bw", &c->hbm_bytes_per_cycle, 1, CHIP_MAX_HBM_BYTES_PER_CYCLE},
      {"--hbm-latency", &c->hbm_latency, 1, CHIP_MAX_HBM_LATENCY},
      {"--flit-words", &c->flit_words, 1, NOC_FLIT_MAX_WORDS},
      {"--clock-mhz", &c->clock_mhz, 1, 100000},
      {"--link-latency", &pod->link_latency, 0, 1000},
      {"--link-bytes", &pod->link_bytes, 1, 8 * NOC_FLIT_MAX_WORDS},
  };
  for (const auto &f : numbers) {
    if (a != f.name) continue;
    const int rc = need(parse_u64(v, f.lo, f.hi, &x));
    if (rc == 1) *f.field = (unsigned)x;
    return rc;
  }
  if (a == "--algo") {
    if (v && !strcmp(v, "ring")) o->algo = FW_COLL_RING;
    else if (v && !strcmp(v, "torus2d")) o->algo = FW_COLL_TORUS2D;
    else return bad("--algo takes ring or torus2d");
    return 1;
  }
  if (a == "--op") {
    const int op = choice("allreduce|reduce_scatter|all_gather|broadcast", v);
    if (op < 0) return bad("--op takes allreduce, reduce_scatter, all_gather or broadcast");
    o->op = (fw_coll_op_t)op;
    return 1;
  }
  if (a == "--model") {
    if (!v || chip_model_parse(v, &c->model)) return bad("--model takes rtl, fast or check");
    return 1;
  }
  return bad("unknown option " + a);
}

/* The collective as `tpusim collective` plans it (0, or 2 with a message). */
int plan_collective(options *o) {
  pod_coll_config_t c{};
  c.machine = o->mach.pod;
  c.slice = fw_slice_t{0, 0, c.machine.size_x, c.machine.size_y, c.machine.size_x, c.machine.size_y};
  c.args.op = o->op, c.args.algo = o->algo;
  c.elems = o->bytes / 4;
  char err[512];
  if (pod_coll_plan(&c, &o->slice_geo, &o->slice, &o->args, err, sizeof err)) return bad(err);
  o->slice_machine = c.machine;
  if (pod_hbm_fit(&o->slice_machine, (uint64_t)o->args.lines * 4 * o->slice_geo.cols, err, sizeof err)) return bad(err);
  return 0;
}

/* 0, 2 (bad usage, message printed) or -1 (--help printed). */
int parse(int argc, char **argv, options *o) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return usage(stdout), -1;
  if (const int rc = base_machine(argc, argv, o)) return rc;
  if (!(o->mach.keys & MACHINE_HAS_POD)) o->mach.pod.size_x = o->mach.pod.size_y = 2;
  for (int i = 1; i < argc; i++) {
    const int rc = parse_option(argv[i], i + 1 < argc ? argv[i + 1] : nullptr, o);
    if (rc == 1) i++;
    else if (rc) return rc;
  }
  if (o->bytes % 4) return bad("--bytes must be a multiple of 4 (fp32 values)");
  const chip_config_t &c = o->mach.pod.chip;
  char err[512];
  chip_geometry_t g;
  if (chip_geometry_for(c.rows, c.cols, c.mxus, c.cores, c.model, &g, err, sizeof err)) return bad(err);
  if (!o->selftest && o->gemm) {
    pod_config_t lone = o->mach.pod;  /* (a capacity the machine gives must hold the GEMM, as `tpusim gemm` says) */
    if (chip_gemm_check(&g, o->m, o->k, o->n, nullptr, err, sizeof err) ||
        (lone.chip.hbm_bytes && pod_hbm_fit(&lone, chip_gemm_hbm_bytes(c.cols, o->m, o->k, o->n), err, sizeof err)))
      return bad(err);
  }
  if (o->selftest || o->collective) return plan_collective(o);  /* (the slice is built for the self-test too) */
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

  /* what a part measured, for its report */
  struct gemm_result {
    chip_geometry_t g;
    uint64_t cycles, hbm_bytes, dma_busy, mxu_busy;
    size_t cmds[2];
    golden_diff_t diff;
    uint32_t c00;
  };
  struct coll_result {
    uint64_t cycles;
    unsigned sems_left;
    coll_check_t chk;
  };

  void gemm();
  static int hbm_write_chip(void *self, uint64_t addr, const void *data, size_t len);
  void gemm_report(const gemm_result &res, double seconds);
  void collective();
  void coll_stage_in(std::vector<uint32_t> &in);
  coll_result coll_run();
  void coll_copy(bool store);
  void coll_copy_back(std::vector<uint32_t> &out);
  void coll_report(const coll_result &res, double seconds);
  void run_slice(uint32_t mask, const char *what);
  void selftest();
  void selftest_map();
  void selftest_chip_runs();
  void selftest_slice();
  bool expect(const char *name, tlm_response_status got, tlm_response_status want);
  bool verdict(const char *name, bool ok, const char *said, const char *wrong = "wrong");
  int passed_ = 0, total_ = 0;
};

/* chip_gemm_place's writer: HBM bytes into the lone chip over TLM (a refusal ends the example). */
int host::hbm_write_chip(void *self, uint64_t addr, const void *data, size_t len) {
  host *h = static_cast<host *>(self);
  h->hbm_access(h->to_chip, true, addr, const_cast<void *>(data), len);
  return 0;
}

void host::gemm() {
  stopwatch_t w;
  stopwatch_start(&w);
  const size_t m = o_.m, k = o_.k, n = o_.n;
  std::vector<uint16_t> a(m * k), b(k * n);  /* the inputs `tpusim gemm` makes from the seed */
  rng_t rng;
  rng_seed(&rng, o_.seed);
  rng_gemm_inputs(&rng, a.data(), a.size());
  rng_gemm_inputs(&rng, b.data(), b.size());
  gemm_result res{};
  res.g = geometry(to_chip, 0);
  const chip_gemm_layout_t l = chip_gemm_layout(res.g.cols, m, k, n);
  fprintf(stderr, "tpusim_sc: GEMM: A and B into HBM over TLM (%s)...\n", o_.dmi ? "DMI" : "b_transport");
  if (chip_gemm_place(res.g.cols, m, k, n, a.data(), b.data(), nullptr, hbm_write_chip, this)) fail("out of memory");
  /* the driver builds the firmware's programs and hands them to the chip */
  fw_prog_t cq[CHIP_MAX_CORES], dq[CHIP_MAX_CORES];
  char err[512];
  if (chip_gemm_programs(&res.g, m, k, n, nullptr, cq, dq, err, sizeof err)) fail(err);
  for (unsigned c = 0; c < isa_geometry_cores(&res.g); c++) {
    load(to_chip, 0, c * ISA_NUM_QUEUES + ISA_QUEUE_COMPUTE, cq[c]);
    load(to_chip, 0, c * ISA_NUM_QUEUES + ISA_QUEUE_DMA, dq[c]);
    res.cmds[0] += cq[c].count, res.cmds[1] += dq[c].count;
  }
  for (unsigned c = 0; c < CHIP_MAX_CORES; c++) fw_prog_free(&cq[c]), fw_prog_free(&dq[c]);
  fprintf(stderr, "tpusim_sc: GEMM: %zu compute and %zu DMA commands loaded; running...\n", res.cmds[0], res.cmds[1]);
  const uint32_t queues = rd(to_chip, REG_BASE + REG_QUEUES);
  run(to_chip, REG_BASE + REG_START, (1u << queues) - 1, chip_irq);
  const uint32_t st = rd(to_chip, REG_BASE + REG_STATUS);
  wr(to_chip, REG_BASE + REG_IRQ, 1);
  if (st & STATUS_FAILED) fail("GEMM run failed: " + report(to_chip, 0));
  res.cycles = rd64(to_chip, REG_BASE + REG_RUN_CYCLES_LO);
  res.hbm_bytes = rd64(to_chip, REG_BASE + REG_COUNTERS + 8 * COUNTER_HBM_BYTES);
  res.dma_busy = rd64(to_chip, REG_BASE + REG_COUNTERS + 8 * COUNTER_DMA_BUSY);
  res.mxu_busy = rd64(to_chip, REG_BASE + REG_COUNTERS + 8 * COUNTER_MXU_BUSY);
  std::vector<uint32_t> c(m * n);
  hbm_access(to_chip, false, l.c, c.data(), 4 * m * n);
  if (gemm_golden_check(res.g.rows, m, k, n, a.data(), b.data(), false, false, c.data(), &res.diff)) fail("out of memory");
  res.c00 = c[0];
  gemm_report(res, stopwatch_seconds(&w));
}

void host::gemm_report(const gemm_result &res, double seconds) {
  const chip_geometry_t &g = res.g;
  const chip_config_t &cc = o_.mach.pod.chip;
  const unsigned mhz = o_.clock_mhz();
  const perf_chip_t pc = {.rows = g.rows, .cols = g.cols, .mxus = isa_geometry_mxus(&g), .cores = isa_geometry_cores(&g),
                          .clock_mhz = (double)mhz};
  const double ideal = perf_gemm_ideal_cycles(&pc, o_.m, o_.k, o_.n);
  report_t r;
  report_init(&r);
  report_str(&r, "part", "gemm");
  report_u64(&r, "m", o_.m), report_u64(&r, "k", o_.k), report_u64(&r, "n", o_.n);
  report_u64(&r, "mxu_rows", g.rows), report_u64(&r, "mxu_cols", g.cols);
  report_u64(&r, "mxus", isa_geometry_mxus(&g)), report_u64(&r, "cores", isa_geometry_cores(&g));
  report_str(&r, "model", chip_model_name(cc.model));
  report_u64(&r, "seed", o_.seed);
  report_u64(&r, "cycles", res.cycles);
  report_f64(&r, "time_us", res.cycles / (double)mhz);
  report_u64(&r, "clock_mhz", mhz);
  report_u64(&r, "hbm_bytes", res.hbm_bytes), report_u64(&r, "hbm_bw", cc.hbm_bytes_per_cycle);
  report_u64(&r, "hbm_latency", cc.hbm_latency);
  report_u64(&r, "dma_busy_cycles", res.dma_busy), report_u64(&r, "mxu_busy_cycles", res.mxu_busy);
  report_u64(&r, "compute_commands", res.cmds[0]), report_u64(&r, "dma_commands", res.cmds[1]);
  report_f64(&r, "utilization", ideal / (double)res.cycles);
  report_bool(&r, "bit_exact", res.diff.mismatches == 0);
  report_u64(&r, "mismatches", res.diff.mismatches);
  report_str(&r, "transport", o_.dmi ? "dmi" : "b_transport");
  const std::string sim = sc_time_stamp().to_string();
  report_str(&r, "simulated_time", sim.c_str());
  report_f64(&r, "host_seconds", seconds);
  report_text_f64(&r, "c00", bits_fp32_value(res.c00));
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
  const golden_diff_t &d = res.diff;
  if (d.mismatches) {
    fprintf(stderr, "tpusim_sc: %zu of %zu outputs differ from the golden model; the first: C[%zu][%zu] is 0x%08x, "
                    "golden 0x%08x\n", d.mismatches, (size_t)(o_.m * o_.n), d.first / o_.n, d.first % o_.n, d.got,
            d.want);
    exit_code = 1;
  }
}

static uint64_t win(unsigned i) { return (uint64_t)i * CHIP_WINDOW; }

/* A slice START of the queues in `mask`, until its done interrupt; a failed run ends the example. */
void host::run_slice(uint32_t mask, const char *what) {
  run(to_slice, SLICE_REG_BASE + SREG_START, mask, slice_irq);
  wr(to_slice, SLICE_REG_BASE + SREG_IRQ, 1);
  if (!(rd(to_slice, SLICE_REG_BASE + SREG_STATUS) & STATUS_FAILED)) return;
  std::string why;
  for (unsigned i = 0; i < o_.slice.w * o_.slice.h; i++)
    if (rd(to_slice, win(i) + REG_BASE + REG_STATUS) & STATUS_FAILED)
      why += " chip " + std::to_string(i) + ": " + report(to_slice, win(i));
  fail(std::string(what) + " failed:" + why);
}

/* 1. every chip's values into its HBM (in: chip i's at i * elems), and a DMA program per chip
 * copies them into VMEM (pod_collective's copy stage) */
void host::coll_stage_in(std::vector<uint32_t> &in) {
  const unsigned chips = o_.slice.w * o_.slice.h, lanes = o_.slice_geo.cols;
  const uint64_t elems = o_.bytes / 4;
  fprintf(stderr, "tpusim_sc: %s: %u chips' buffers into HBM over TLM, then into VMEM...\n",
          o_.op == FW_COLL_ALLREDUCE ? "all-reduce" : coll_op_names[o_.op], chips);
  std::vector<uint32_t> buf((size_t)o_.args.lines * lanes);
  for (unsigned i = 0; i < chips; i++) {
    std::fill(buf.begin(), buf.end(), 0);
    for (uint64_t e = 0; e < elems; e++) buf[e] = in[i * elems + e] = rng_coll_input(o_.seed, i, e);
    hbm_access(to_slice, true, win(i), buf.data(), buf.size() * 4);
  }
  coll_copy(false);
}

/* Every chip's buffer copied by DMA between HBM address 0 and VMEM line 0 (store: to HBM). */
void host::coll_copy(bool store) {
  for (unsigned i = 0; i < o_.slice.w * o_.slice.h; i++) {
    fw_prog_t p;
    fw_prog_init(&p);
    pod_coll_copy_program(&p, o_.args.lines, 0, 4 * o_.slice_geo.cols, store);
    fw_halt(&p);
    load(to_slice, win(i), ISA_QUEUE_DMA, p);
    fw_prog_free(&p);
  }
  run_slice(ISA_QMASK_DMA, store ? "the copy back to HBM" : "the copy into VMEM");
}

/* 2. the slice in every chip's router, the collective's programs on every chip; one START for all */
host::coll_result host::coll_run() {
  const fw_slice_t &s = o_.slice;
  const unsigned chips = s.w * s.h;
  char err[512];
  for (unsigned i = 0; i < chips; i++) {
    wr(to_slice, win(i) + REG_BASE + REG_SLICE, s.x0 | s.y0 << 8 | s.w << 16 | s.h << 24);
    fw_prog_t cq, dq;
    fw_prog_init(&cq), fw_prog_init(&dq);
    if (pod_coll_programs(&o_.slice_geo, &s, &o_.args, i % s.w, i / s.w, &cq, &dq, err, sizeof err)) fail(err);
    load(to_slice, win(i), ISA_QUEUE_COMPUTE, cq);
    load(to_slice, win(i), ISA_QUEUE_DMA, dq);
    fw_prog_free(&cq), fw_prog_free(&dq);
  }
  fprintf(stderr, "tpusim_sc: %s: running...\n", o_.op == FW_COLL_ALLREDUCE ? "all-reduce" : coll_op_names[o_.op]);
  run_slice(ISA_QMASK_ALL, o_.op == FW_COLL_ALLREDUCE ? "the all-reduce" : coll_op_names[o_.op]);
  coll_result res{};
  res.cycles = rd64(to_slice, SLICE_REG_BASE + SREG_RUN_CYCLES_LO);
  for (unsigned i = 0; i < chips; i++)
    for (unsigned k = 0; k < ISA_NUM_SEMS; k++) res.sems_left += rd(to_slice, win(i) + REG_BASE + REG_SEM + 4 * k) != 0;
  return res;
}

/* 3. the results back to HBM by DMA, and read */
void host::coll_copy_back(std::vector<uint32_t> &out) {
  const unsigned chips = o_.slice.w * o_.slice.h, lanes = o_.slice_geo.cols;
  const uint64_t elems = o_.bytes / 4;
  coll_copy(true);
  std::vector<uint32_t> buf((size_t)o_.args.lines * lanes);
  for (unsigned i = 0; i < chips; i++) {
    hbm_access(to_slice, false, win(i), buf.data(), buf.size() * 4);
    std::copy(buf.begin(), buf.begin() + elems, out.begin() + i * elems);
  }
}

/* The collective of `tpusim collective` on the slice, step for step (docs/systemc.md). */
void host::collective() {
  stopwatch_t w;
  stopwatch_start(&w);
  const chip_geometry_t g = geometry(to_slice, 0);
  if (g.cols != o_.slice_geo.cols || g.vmem_lines != o_.slice_geo.vmem_lines) fail("the slice's chips are not the plan's");
  const unsigned chips = o_.slice.w * o_.slice.h;
  const uint64_t elems = o_.bytes / 4;
  std::vector<uint32_t> in(chips * elems), out(chips * elems);
  coll_stage_in(in);
  coll_result res = coll_run();
  coll_copy_back(out);
  if (coll_golden_check(&o_.slice, &o_.args, g.cols, elems, in.data(), out.data(), &res.chk))
    fail("out of memory for the golden model");
  coll_report(res, stopwatch_seconds(&w));
}

void host::coll_report(const coll_result &res, double seconds) {
  const bool correct = res.chk.mismatches == 0 && res.chk.bound_violations == 0 && res.sems_left == 0;
  const unsigned mhz = o_.clock_mhz();
  const pod_coll_bw_t bw = pod_coll_bandwidth(&o_.slice, o_.op, o_.bytes, res.cycles, mhz, o_.mach.pod.link_bytes);
  report_t r;
  report_init(&r);
  report_str(&r, "part", "collective");
  report_str(&r, "op", coll_op_names[o_.op]);
  report_str(&r, "algo", o_.algo == FW_COLL_TORUS2D ? "torus2d" : "ring");
  report_u64(&r, "w", o_.slice.w), report_u64(&r, "h", o_.slice.h);
  report_u64(&r, "link_latency", o_.mach.pod.link_latency);
  report_str(&r, "model", chip_model_name(o_.mach.pod.chip.model));
  report_u64(&r, "seed", o_.seed);
  report_u64(&r, "bytes", o_.bytes);
  report_u64(&r, "cycles", res.cycles);
  report_f64(&r, "time_us", bw.time_s * 1e6);
  report_u64(&r, "clock_mhz", mhz);
  report_f64(&r, "algbw_GBps", bw.algbw), report_f64(&r, "busbw_GBps", bw.busbw);
  report_u64(&r, "mismatches", res.chk.mismatches);
  report_u64(&r, "float64_bound_violations", res.chk.bound_violations);
  report_u64(&r, "semaphores_left", res.sems_left);
  report_bool(&r, "correct", correct);
  const std::string sim = sc_time_stamp().to_string();
  report_str(&r, "simulated_time", sim.c_str());
  report_f64(&r, "host_seconds", seconds);
  report_line(&r, "{op} on a {w}x{h} SystemC slice ({model} model, link latency {link_latency}), {bytes} bytes per "
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
            res.chk.mismatches, res.chk.bound_violations, res.sems_left);
    exit_code = 1;
  }
}

bool host::expect(const char *name, tlm_response_status got, tlm_response_status want) {
  const bool ok = got == want;
  const std::string verdict = ok ? "ok" : std::string("FAILED (want ") + status_name(want) + ")";
  printf("selftest %-28s %-32s %s\n", name, status_name(got), verdict.c_str());
  fflush(stdout);
  passed_ += ok, ++total_;
  return ok;
}

/* A case that is not one transaction's response: `said` when it went as it must, else `wrong`. */
bool host::verdict(const char *name, bool ok, const char *said, const char *wrong) {
  printf("selftest %-28s %-32s %s\n", name, ok ? said : wrong, ok ? "ok" : "FAILED");
  passed_ += ok, ++total_;
  return ok;
}

/* The lone chip's map: addresses, bursts, sizes, alignment, byte enables, DMI. */
void host::selftest_map() {
  using namespace tlm;
  const tlm_command R = TLM_READ_COMMAND, Wr = TLM_WRITE_COMMAND;
  uint8_t buf[64] = {0};
  const uint64_t hbm = rd64(to_chip, REG_BASE + REG_HBM_BYTES_LO);
  const uint32_t queues = rd(to_chip, REG_BASE + REG_QUEUES), depth = rd(to_chip, REG_BASE + REG_QUEUE_DEPTH);
  const uint64_t window = (uint64_t)depth * ISA_CMD_WORDS * 4;
  expect("out_of_map", xfer(to_chip, R, 0x300000000ull, buf, 4), TLM_ADDRESS_ERROR_RESPONSE);
  expect("between_hbm_and_commands", xfer(to_chip, R, hbm + 64, buf, 4), TLM_ADDRESS_ERROR_RESPONSE);
  expect("past_last_queue", xfer(to_chip, Wr, CMD_BASE + queues * CMD_STRIDE, buf, 4), TLM_ADDRESS_ERROR_RESPONSE);
  expect("hbm_burst_crosses_end", xfer(to_chip, Wr, hbm - 8, buf, 16), TLM_BURST_ERROR_RESPONSE);
  expect("command_burst_crosses_end", xfer(to_chip, Wr, CMD_BASE + window - 8, buf, 16), TLM_BURST_ERROR_RESPONSE);
  expect("register_burst_crosses_end", xfer(to_chip, R, REG_BASE + REG_SIZE - 4, buf, 8), TLM_BURST_ERROR_RESPONSE);
  expect("register_8_bytes", xfer(to_chip, R, REG_BASE + REG_ID, buf, 8), TLM_BURST_ERROR_RESPONSE);
  expect("register_unaligned", xfer(to_chip, R, REG_BASE + REG_ID + 2, buf, 4), TLM_ADDRESS_ERROR_RESPONSE);
  expect("register_hole", xfer(to_chip, R, REG_BASE + 0xFFC, buf, 4), TLM_ADDRESS_ERROR_RESPONSE);
  unsigned char be4[4] = {0xFF, 0, 0xFF, 0};
  expect("register_byte_enables", xfer(to_chip, R, REG_BASE + REG_ID, buf, 4, be4, 4), TLM_BYTE_ENABLE_ERROR_RESPONSE);
  uint32_t v = 1;
  expect("register_read_only", xfer(to_chip, Wr, REG_BASE + REG_ID, &v, 4), TLM_COMMAND_ERROR_RESPONSE);
  expect("command_unaligned", xfer(to_chip, Wr, CMD_BASE + 2, buf, 4), TLM_ADDRESS_ERROR_RESPONSE);
  expect("zero_length", xfer(to_chip, R, 0, buf, 0), TLM_GENERIC_ERROR_RESPONSE);
  expect("streaming", xfer(to_chip, R, 0, buf, 16, nullptr, 0, 4), TLM_BURST_ERROR_RESPONSE);
  v = 1u << queues;
  expect("start_no_such_queue", xfer(to_chip, Wr, REG_BASE + REG_START, &v, 4), TLM_GENERIC_ERROR_RESPONSE);
  v = depth + 1;
  expect("program_too_long", xfer(to_chip, Wr, REG_BASE + REG_QUEUE + REG_Q_PROG_LEN, &v, 4), TLM_GENERIC_ERROR_RESPONSE);
  /* byte enables on HBM are handled: the disabled bytes keep their values */
  uint8_t ones[8], twos[8], back[8];
  memset(ones, 0x11, 8), memset(twos, 0x22, 8);
  unsigned char be2[2] = {0xFF, 0};
  xfer(to_chip, Wr, 256, ones, 8);
  const bool be_ok = expect("hbm_byte_enables", xfer(to_chip, Wr, 256, twos, 8, be2, 2), TLM_OK_RESPONSE);
  xfer(to_chip, R, 256, back, 8);
  bool pattern = be_ok;
  for (int i = 0; i < 8; i++) pattern &= back[i] == (i % 2 ? 0x11 : 0x22);
  verdict("hbm_byte_enables_data", pattern, "22 11 22 11 22 11 22 11", "wrong bytes");
  /* DMI: granted for HBM, the pointer sees what b_transport wrote; refused elsewhere */
  tlm_generic_payload p;
  tlm_dmi dmi, none;
  p.set_address(256);
  const bool got = to_chip->get_direct_mem_ptr(p, dmi);
  const bool same = got && dmi.get_dmi_ptr()[256 - dmi.get_start_address()] == 0x22;
  p.set_address(REG_BASE);
  const bool refused = !to_chip->get_direct_mem_ptr(p, none);
  verdict("dmi", got && same && refused, "HBM granted, registers refused");
}

/* A chip that runs refuses a second START and new programs; a run that never ends times out
 * with a report, and the chip runs again afterwards. */
void host::selftest_chip_runs() {
  using namespace tlm;
  uint8_t buf[64] = {0};
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
  uint32_t v = ISA_QMASK_COMPUTE;
  expect("start_while_running", xfer(to_chip, TLM_WRITE_COMMAND, REG_BASE + REG_START, &v, 4), TLM_GENERIC_ERROR_RESPONSE);
  v = 1;
  expect("load_while_running", xfer(to_chip, TLM_WRITE_COMMAND, REG_BASE + REG_QUEUE + REG_Q_PROG_LEN, &v, 4),
         TLM_GENERIC_ERROR_RESPONSE);
  expect("window_while_running", xfer(to_chip, TLM_WRITE_COMMAND, CMD_BASE, buf, 16), TLM_GENERIC_ERROR_RESPONSE);
  v = 0xF;
  expect("slice_while_running", xfer(to_chip, TLM_WRITE_COMMAND, REG_BASE + REG_SLICE, &v, 4), TLM_GENERIC_ERROR_RESPONSE);
  while (!chip_irq.read()) wait(chip_irq.posedge_event());
  const uint32_t st = rd(to_chip, REG_BASE + REG_STATUS);
  const std::string r = report(to_chip, 0);
  const bool timed = (st & STATUS_FAILED) && (st & STATUS_TIMED_OUT) && r.find("timed out") != std::string::npos &&
                     r.find("semaphore 0") != std::string::npos;
  if (!verdict("timeout_reported", timed, "failed, timed out, reported"))
    fprintf(stderr, "tpusim_sc: status 0x%x, report: %s\n", st, r.c_str());
  wr(to_chip, REG_BASE + REG_IRQ, 1);
  wr(to_chip, REG_BASE + REG_TIMEOUT, 0);
  fw_prog_init(&p);
  fw_sem_signal(&p, 1, 1);
  fw_halt(&p);
  load(to_chip, 0, ISA_QUEUE_COMPUTE, p);
  fw_prog_free(&p);
  run(to_chip, REG_BASE + REG_START, ISA_QMASK_COMPUTE, chip_irq);
  const uint32_t st2 = rd(to_chip, REG_BASE + REG_STATUS);
  verdict("runs_after_timeout", !(st2 & STATUS_FAILED) && rd(to_chip, REG_BASE + REG_SEM + 4) == 1,
          "ran, semaphore 1 = 1");
  wr(to_chip, REG_BASE + REG_IRQ, 1);
}

/* The slice: outside its chips' windows, its own registers; a slice whose chip (0,0) waits for
 * ever: the slice's run times out, every chip is aborted and drained, the report names the
 * chip's queue; the slice then runs again. */
void host::selftest_slice() {
  using namespace tlm;
  uint8_t buf[64] = {0};
  const unsigned chips = o_.slice.w * o_.slice.h;
  const uint32_t queues = rd(to_chip, REG_BASE + REG_QUEUES);
  expect("slice_out_of_map", xfer(to_slice, TLM_READ_COMMAND, (uint64_t)chips * CHIP_WINDOW, buf, 4),
         TLM_ADDRESS_ERROR_RESPONSE);
  expect("slice_crosses_chips", xfer(to_slice, TLM_READ_COMMAND, CHIP_WINDOW - 8, buf, 16), TLM_BURST_ERROR_RESPONSE);
  expect("slice_register_hole", xfer(to_slice, TLM_READ_COMMAND, SLICE_REG_BASE + 0x40, buf, 4),
         TLM_ADDRESS_ERROR_RESPONSE);
  uint32_t v = 1u << queues;
  expect("slice_start_no_such_queue", xfer(to_slice, TLM_WRITE_COMMAND, SLICE_REG_BASE + SREG_START, &v, 4),
         TLM_GENERIC_ERROR_RESPONSE);
  expect("slice_chip_register", xfer(to_slice, TLM_READ_COMMAND, CHIP_WINDOW + REG_BASE + REG_ID, buf, 4),
         TLM_OK_RESPONSE);
  for (int pass = 0; pass < 2; pass++) {
    for (unsigned i = 0; i < chips; i++) {
      fw_prog_t cq, dq;
      fw_prog_init(&cq), fw_prog_init(&dq);
      if (pass == 0 && i == 0) fw_sem_wait(&cq, 0, 1);
      fw_halt(&cq), fw_halt(&dq);
      load(to_slice, win(i), ISA_QUEUE_COMPUTE, cq);
      load(to_slice, win(i), ISA_QUEUE_DMA, dq);
      fw_prog_free(&cq), fw_prog_free(&dq);
      wr(to_slice, win(i) + REG_BASE + REG_TIMEOUT, pass == 0 ? 3000 : 0);
    }
    run(to_slice, SLICE_REG_BASE + SREG_START, ISA_QMASK_ALL, slice_irq);
    wr(to_slice, SLICE_REG_BASE + SREG_IRQ, 1);
    const uint32_t st = rd(to_slice, SLICE_REG_BASE + SREG_STATUS);
    const std::string r = report(to_slice, 0);
    const bool ok = pass == 0 ? (st & STATUS_FAILED) && (st & STATUS_TIMED_OUT) &&
                                    r.find("semaphore 0") != std::string::npos &&
                                    !(rd(to_slice, SLICE_REG_BASE + SREG_STATUS) & STATUS_BUSY)
                              : !(st & STATUS_FAILED) && rd64(to_slice, SLICE_REG_BASE + SREG_RUN_CYCLES_LO) > 0;
    if (!verdict(pass == 0 ? "slice_timeout_reported" : "slice_runs_after_timeout", ok,
                 pass == 0 ? "failed, timed out, reported" : "ran"))
      fprintf(stderr, "tpusim_sc: slice status 0x%x, chip (0,0)'s report: %s\n", st, r.c_str());
  }
}

/* The memory map's error paths (docs/systemc.md, "Errors"): each case a line. */
void host::selftest() {
  selftest_map();
  selftest_chip_runs();
  selftest_slice();
  printf("selftest: %d of %d passed\n", passed_, total_);
  if (passed_ != total_) exit_code = 1;
}

int sc_main(int argc, char **argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);  /* (the banner would go to stderr) */
  options o;
  const int rc = parse(argc, argv, &o);
  if (rc) return rc < 0 ? 0 : rc;
  sc_report_handler::set_handler(report_handler);
  sc_set_time_resolution(1, SC_PS);
  const double mhz = o.clock_mhz();
  sc_clock clk("clk", sc_time(1e6 / mhz, SC_PS));
  /* the lone chip of `tpusim gemm`: the machine's chip, its HBM sized for the GEMM unless the
   * machine gives its capacity (checked in parse) */
  chip_config_t cc = o.mach.pod.chip;
  const uint64_t need = chip_gemm_hbm_bytes(cc.cols, o.m, o.k, o.n);
  if (!cc.hbm_bytes) cc.hbm_bytes = need < (1u << 20) ? (1u << 20) : need;
  cc.seed = o.seed;
  /* (only what the run uses is built: --only gemm builds no slice, --only collective no lone chip) */
  std::unique_ptr<sc_chip> chip(o.selftest || o.gemm ? new sc_chip("chip", cc, mhz) : nullptr);
  /* the slice of `tpusim collective`: its machine as pod_coll_plan sized it */
  o.slice_machine.chip.seed = o.seed;
  std::unique_ptr<sc_slice> slice(o.selftest || o.collective ? new sc_slice("slice", o.slice_machine, mhz) : nullptr);
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
