/*
 * gen_chip_isa_pkg: writes the RTL package chip_isa_pkg (SystemVerilog) from the command
 * table fw/isa.def, so the RTL and the C firmware read the command format from one source.
 * The Makefile builds it and writes build/gen/chip_isa_pkg.sv; nothing generated is
 * committed. It checks the table as it goes (fields inside the command, no overlaps, codes
 * that fit their enums) and exits 1 with a message instead of writing a bad package.
 *
 * usage: gen_chip_isa_pkg > chip_isa_pkg.sv
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *name;
  unsigned long value, bits;  /* bits: VEC operations, the operands read | 4 if it reduces lines */
  const char *doc;
} item_t;

typedef struct {
  const char *op, *name;
  unsigned word, lsb, width;
  const char *doc;
} field_t;

typedef struct {
  const char *name;
  unsigned code;
  const char *queues, *doc;
} op_t;

static const item_t consts[] = {
#define ISA_CONST(name, value, doc) {#name, value, 0, doc},
#include "fw/isa.def"
};
static const item_t queues[] = {
#define ISA_QUEUE(name, index, doc) {#name, index, 0, doc},
#include "fw/isa.def"
};
static const op_t ops[] = {
#define ISA_OP(name, code, queues, doc) {#name, code, #queues, doc},
#include "fw/isa.def"
};
static const field_t fields[] = {
#define ISA_FIELD(op, name, word, lsb, width, doc) {#op, #name, word, lsb, width, doc},
#include "fw/isa.def"
};
static const item_t errs[] = {
#define ISA_ERR(name, code, doc) {#name, code, 0, doc},
#include "fw/isa.def"
};
static const item_t vecs[] = {
#define ISA_VEC(name, code, operands, reduces, doc) {#name, code, operands | reduces << 2, doc},
#include "fw/isa.def"
};
static const item_t kinds[] = {
#define ISA_DMA_KIND(name, code, doc) {#name, code, 0, doc},
#include "fw/isa.def"
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static unsigned long const_value(const char *name) {
  for (size_t i = 0; i < COUNT(consts); i++)
    if (!strcmp(consts[i].name, name)) return consts[i].value;
  fprintf(stderr, "gen_chip_isa_pkg: fw/isa.def has no ISA_CONST(%s)\n", name);
  exit(1);
}

/* SEM_WAIT -> prefix + "SemWait"; TO_BF16 -> "ToBf16". */
static const char *camel(const char *prefix, const char *name) {
  static char buf[8][64];
  static int next;
  char *out = buf[next++ % 8];
  size_t n = strlen(prefix);
  memcpy(out, prefix, n);
  for (int up = 1; *name && n < 63; name++) {
    if (*name == '_') {
      up = 1;
      continue;
    }
    out[n++] = (char)(up ? toupper((unsigned char)*name) : tolower((unsigned char)*name));
    up = 0;
  }
  out[n] = 0;
  return out;
}

/* SEM_WAIT -> "sem_wait". */
static const char *lower(const char *name) {
  static char buf[64];
  size_t n = 0;
  for (; *name && n < 63; name++) buf[n++] = (char)tolower((unsigned char)*name);
  buf[n] = 0;
  return buf;
}

/* "OpSemWait:" for a case item. */
static const char *op_label(const char *name) {
  static char buf[64];
  snprintf(buf, sizeof buf, "%s:", camel("Op", name));
  return buf;
}

static unsigned clog2(unsigned long n) {
  unsigned b = 0;
  while ((1ul << b) < n) b++;
  return b ? b : 1;
}

/* Writes a typed enum of `n` items with width `bits`; checks every code fits. */
static void emit_enum(const char *type, const char *prefix, const item_t *it, size_t n, const char *width,
                      unsigned bits, int hex) {
  printf("  typedef enum logic [%s] {\n", width);
  for (size_t i = 0; i < n; i++) {
    if (it[i].value >> bits) {
      fprintf(stderr, "gen_chip_isa_pkg: %s %s = %lu does not fit %u bits\n", type, it[i].name, it[i].value, bits);
      exit(1);
    }
    printf(hex ? "    %-14s = %u'h%02lx%s  // %s\n" : "    %-14s = %u'd%lu%s  // %s\n", camel(prefix, it[i].name), bits,
           it[i].value, i + 1 < n ? "," : " ", it[i].doc);
  }
  printf("  } %s;\n\n", type);
}

/* Bit b of the command is part of field f. */
static int covers(const field_t *f, unsigned b) {
  unsigned lo = 32 * f->word + f->lsb;
  return b >= lo && b < lo + f->width;
}

/* A function of a VEC operation, true for those whose table bits & mask equal want. */
static void emit_vec_predicate(const char *name, const char *what, unsigned long mask, unsigned long want) {
  printf("  // Whether VEC operation op %s.\n"
         "  function automatic logic %s(logic [VecOpBits-1:0] op);\n"
         "    unique case (op)\n", what, name);
  for (size_t v = 0; v < COUNT(vecs); v++) {
    char label[64];
    snprintf(label, sizeof label, "%s:", camel("Vec", vecs[v].name));
    if ((vecs[v].bits & mask) == want) printf("      %-13s return 1'b1;\n", label);
  }
  printf("      default:      return 1'b0;\n    endcase\n  endfunction\n\n");
}

int main(void) {
  const unsigned words = (unsigned)const_value("CMD_WORDS"), cmd_bits = 32 * words;
  const unsigned err_bits = (unsigned)const_value("ERR_BITS"), vec_bits = (unsigned)const_value("VEC_OP_BITS");
  /* the table's own consistency */
  for (size_t i = 0; i < COUNT(fields); i++) {
    const field_t *f = &fields[i];
    int known = 0;
    for (size_t o = 0; o < COUNT(ops); o++) known |= !strcmp(ops[o].name, f->op);
    if (!known || f->word >= words || f->width == 0 || f->lsb + f->width > 32 || (f->word == 0 && f->lsb < 8)) {
      fprintf(stderr, "gen_chip_isa_pkg: field %s.%s (word %u bits %u+%u) is not inside a known command's operand "
              "bits\n", f->op, f->name, f->word, f->lsb, f->width);
      return 1;
    }
    for (size_t j = 0; j < i; j++)
      if (!strcmp(fields[j].op, f->op))
        for (unsigned b = 0; b < cmd_bits; b++)
          if (covers(&fields[j], b) && covers(f, b)) {
            fprintf(stderr, "gen_chip_isa_pkg: fields %s.%s and %s.%s overlap\n", f->op, fields[j].name, f->op, f->name);
            return 1;
          }
  }
  /* enums the RTL bounds with a count (VecOps, DmaKinds, NumQueues) must be 0, 1, ... in order */
  const struct {
    const item_t *items;
    size_t n;
    const char *what;
  } counted[] = {{vecs, COUNT(vecs), "VEC operations"}, {kinds, COUNT(kinds), "DMA kinds"},
                 {queues, COUNT(queues), "queues"}};
  for (size_t c = 0; c < COUNT(counted); c++)
    for (size_t i = 0; i < counted[c].n; i++)
      if (counted[c].items[i].value != i) {
        fprintf(stderr, "gen_chip_isa_pkg: %s must be numbered 0, 1, ... in order\n", counted[c].what);
        return 1;
      }

  printf("// chip_isa_pkg: the chip's command format (docs/isa.md): opcodes, error codes, VEC\n"
         "// operations, DMA kinds, a packed struct per command and the bits each command defines.\n"
         "// GENERATED by scripts/gen_chip_isa_pkg.c from fw/isa.def, the one source of the format\n"
         "// (the C firmware includes the same table): edit fw/isa.def, not this file.\n"
         "package chip_isa_pkg;\n\n");
  /* SEM_NONE is compared with 8-bit semaphore fields: it gets their type */
  for (size_t i = 0; i < COUNT(consts); i++)
    printf(strcmp(consts[i].name, "SEM_NONE") ? "  localparam int unsigned %-16s = %lu;  // %s\n"
                                               : "  localparam logic [7:0]  %-16s = 8'd%lu;  // %s\n",
           camel("", consts[i].name), consts[i].value, consts[i].doc);
  printf("  localparam int unsigned %-16s = %u;  // bits of a command\n", "CmdW", cmd_bits);
  for (size_t i = 0; i < COUNT(queues); i++)
    printf("  localparam int unsigned %-16s = %lu;  // %s\n", camel("Queue", queues[i].name), queues[i].value,
           queues[i].doc);
  printf("  localparam int unsigned %-16s = %zu;\n", "NumQueues", COUNT(queues));
  printf("  localparam int unsigned %-16s = %zu;  // VEC operations 0 .. VecOps-1\n", "VecOps", COUNT(vecs));
  printf("  localparam int unsigned %-16s = %zu;  // DMA kinds 0 .. DmaKinds-1\n\n", "DmaKinds", COUNT(kinds));

  item_t op_items[COUNT(ops)];
  for (size_t i = 0; i < COUNT(ops); i++) op_items[i] = (item_t){ops[i].name, ops[i].code, 0, ops[i].doc};
  emit_enum("opcode_e", "Op", op_items, COUNT(ops), "7:0", 8, 1);
  emit_enum("err_e", "Err", errs, COUNT(errs), "ErrBits-1:0", err_bits, 0);
  emit_enum("vec_op_e", "Vec", vecs, COUNT(vecs), "VecOpBits-1:0", vec_bits, 0);
  char kind_width[16];
  unsigned kind_bits = clog2(COUNT(kinds));
  snprintf(kind_width, sizeof kind_width, "%u:0", kind_bits - 1);
  emit_enum("dma_kind_e", "Dma", kinds, COUNT(kinds), kind_width, kind_bits, 0);

  printf("  // Any command: the opcode, and the operands the opcode's own struct below names.\n"
         "  typedef struct packed {\n    logic [CmdW-9:0] operands;\n    opcode_e         opcode;\n  } cmd_t;\n\n");

  /* one packed struct per command, most significant field first */
  for (size_t o = 0; o < COUNT(ops); o++) {
    printf("  // %s (0x%02x): %s\n  typedef struct packed {\n", ops[o].name, ops[o].code, ops[o].doc);
    for (int b = (int)cmd_bits - 1; b >= 8;) {
      const field_t *f = NULL;
      for (size_t i = 0; i < COUNT(fields); i++)
        if (!strcmp(fields[i].op, ops[o].name) && covers(&fields[i], (unsigned)b)) f = &fields[i];
      if (f) {
        char decl[32];
        snprintf(decl, sizeof decl, "logic [%u:0]", f->width - 1);
        char name[40];
        snprintf(name, sizeof name, "%s;", f->name);
        printf("    %-14s %-15s  // word %u", f->width > 1 ? decl : "logic", name, f->word);
        if (f->width < 32) printf(" bits %u:%u", f->lsb + f->width - 1, f->lsb);
        printf(": %s\n", f->doc);
        b -= (int)f->width;
      } else {
        int top = b;
        while (b >= 8) {
          int any = 0;
          for (size_t i = 0; i < COUNT(fields); i++)
            any |= !strcmp(fields[i].op, ops[o].name) && covers(&fields[i], (unsigned)b);
          if (any) break;
          b--;
        }
        char decl[32], name[32];
        snprintf(decl, sizeof decl, "logic [%d:0]", top - b - 1);
        snprintf(name, sizeof name, "rsvd%d;", b + 1);
        printf("    %-14s %-15s  // reserved: zero\n", top - b > 1 ? decl : "logic", name);
      }
    }
    printf("    %-14s %-15s  // word 0 bits 7:0\n  } %s_cmd_t;\n\n", "opcode_e", "opcode;", lower(ops[o].name));
  }

  /* every command's view of the same 256 bits */
  printf("  // A command seen as any of the commands above: cmd.any.opcode, cmd.dma.rows, ...\n"
         "  typedef union packed {\n    cmd_t            any;  // the opcode alone\n");
  for (size_t o = 0; o < COUNT(ops); o++) {
    char member[48];
    snprintf(member, sizeof member, "%s;", lower(ops[o].name));
    printf("    %s_cmd_t %*s%s\n", lower(ops[o].name), (int)(10 - strlen(lower(ops[o].name))), "", member);
  }
  printf("  } cmd_u;\n\n");

  /* the bits each command defines */
  printf("  // The bits of a command with opcode `op` that its opcode and fields occupy; a command with\n"
         "  // any other bit set is illegal (ErrOpcode). All zero for an unknown opcode.\n"
         "  function automatic logic [CmdW-1:0] cmd_defined_bits(logic [7:0] op);\n"
         "    unique case (op)\n");
  for (size_t o = 0; o < COUNT(ops); o++) {
    printf("      %-13s return %u'h", op_label(ops[o].name), cmd_bits);
    for (int w = (int)words - 1; w >= 0; w--) {
      unsigned long mask = w == 0 ? 0xFF : 0;
      for (size_t i = 0; i < COUNT(fields); i++)
        if (!strcmp(fields[i].op, ops[o].name) && fields[i].word == (unsigned)w)
          mask |= (fields[i].width >= 32 ? 0xFFFFFFFFul : ((1ul << fields[i].width) - 1)) << fields[i].lsb;
      printf("%08lx%s", mask, w ? "_" : ";\n");
    }
  }
  printf("      default:      return '0;\n    endcase\n  endfunction\n\n");

  emit_vec_predicate("vec_binary", "reads operand b (else b is ignored and not checked)", 3, 2);
  emit_vec_predicate("vec_reduces_lines", "folds its rows lines into one destination line", 4, 4);

  printf("  // Whether op is an opcode.\n"
         "  function automatic logic cmd_known(logic [7:0] op);\n"
         "    unique case (op)\n");
  for (size_t o = 0; o < COUNT(ops); o++) printf("      %-13s return 1'b1;\n", op_label(ops[o].name));
  printf("      default:      return 1'b0;\n    endcase\n  endfunction\n\n"
         "  // Whether a command has a bit set that its opcode's fields do not name (an unknown opcode\n"
         "  // defines none: every other bit counts).\n"
         "  function automatic logic cmd_reserved_set(logic [CmdW-1:0] cmd);\n"
         "    return (cmd & ~cmd_defined_bits(cmd[7:0])) != '0;\n"
         "  endfunction\n\n");

  /* where each command may run */
  printf("  // Whether a command with opcode `op` may run on queue `queue` (QueueCompute, QueueDma).\n"
         "  function automatic logic cmd_allowed(logic [7:0] op, int unsigned queue);\n"
         "    unique case (op)\n");
  for (size_t o = 0; o < COUNT(ops); o++) {
    const char *q = ops[o].queues;
    if (!strcmp(q, "BOTH")) printf("      %-13s return 1'b1;\n", op_label(ops[o].name));
    else printf("      %-13s return queue == %s;\n", op_label(ops[o].name), camel("Queue", q));
  }
  printf("      default:      return 1'b0;\n    endcase\n  endfunction\n\n");

  printf("endpackage\n");
  return fflush(stdout) ? 1 : 0;
}
