/*
 * sim_tbl.c: srd-sim's tables (sim_tbl.h).
 */
#include "sim_tbl.h"

#include <string.h>

void sim_tbl_row(sim_tbl *t, const char *l) {
  if (t->rows < TBL_ROWS) {
    snprintf(t->label[t->rows], TBL_CELL, "%s", l);
    memset(t->cell[t->rows], 0, sizeof(t->cell[t->rows]));
  }
  ++t->rows;
  t->col = 0;
}

void sim_tbl_cell(sim_tbl *t, const char *s) {
  if (t->rows > 0 && t->rows <= TBL_ROWS && t->col < SCN_MAX_TRANSPORTS) {
    snprintf(t->cell[t->rows - 1][t->col], TBL_CELL, "%s", s);
  }
  ++t->col;
}

/* width counts |s|'s characters: its bytes but UTF-8's continuation
   bytes (10xxxxxx). */
static int width(const char *s) {
  int n = 0;

  for (; *s; ++s) {
    n += ((unsigned char)*s & 0xc0) != 0x80;
  }
  return n;
}

void sim_tbl_print(FILE *f, const sim_tbl *t, uint32_t n) {
  int lw = TBL_LABEL_WIDTH, w[SCN_MAX_TRANSPORTS];
  uint32_t r, i, rows = t->rows < TBL_ROWS ? t->rows : TBL_ROWS;

  for (i = 0; i < n; ++i) {
    w[i] = TBL_MIN_WIDTH;
  }
  for (r = 0; r < rows; ++r) {
    int l = width(t->label[r]);
    lw = l > lw ? l : lw;
    for (i = 0; i < n; ++i) {
      int c = width(t->cell[r][i]) + 1;
      w[i] = c > w[i] ? c : w[i];
    }
  }
  for (r = 0; r < rows; ++r) {
    /* Padded by hand: printf's widths count bytes. */
    fprintf(f, "  %s%*s", t->label[r], lw - width(t->label[r]), "");
    for (i = 0; i < n; ++i) {
      fprintf(f, " %*s%s", w[i] - width(t->cell[r][i]), "", t->cell[r][i]);
    }
    fprintf(f, "\n");
  }
}
