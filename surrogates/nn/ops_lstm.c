/* ops_lstm.c -- one LSTM cell step (PyTorch gate order i, f, g, o):
 *   gates = x Wih^T + h Whh^T + b;  c' = s(f) c + s(i) tanh(g);  h' = s(o) tanh(c')
 * Composed of matmul/slice/elementwise ops, so it differentiates to second
 * order; the two GEMMs dominate its cost. */
#include "sgnn_impl.h"

int sgnn_lstm_cell(SgnnTensor x, SgnnTensor h, SgnnTensor c, SgnnTensor Wih, SgnnTensor Whh, SgnnTensor bias,
                   SgnnTensor *h_out, SgnnTensor *c_out)
{
  SGNN_CHECK(x && h && c && Wih && Whh && h_out && c_out, SGNN_ERR_ARG, "lstm_cell: NULL argument");
  SGNN_TRY(sgnn_check_pair("lstm_cell", x, h));
  SGNN_TRY(sgnn_check_pair("lstm_cell", x, c));
  SGNN_TRY(sgnn_check_pair("lstm_cell", x, Wih));
  SGNN_TRY(sgnn_check_pair("lstm_cell", x, Whh));
  SGNN_CHECK(x->ndim == 2 && h->ndim == 2 && c->ndim == 2 && Wih->ndim == 2 && Whh->ndim == 2, SGNN_ERR_SHAPE,
             "lstm_cell: all operands must be 2-d (x %s, h %s, c %s, Wih %s, Whh %s)", SHP(x), SHP(h), SHP(c), SHP(Wih),
             SHP(Whh));
  int B = x->shape[0], I = x->shape[1], H = h->shape[1];
  SGNN_CHECK(h->shape[0] == B && c->shape[0] == B && c->shape[1] == H && Wih->shape[0] == 4 * H && Wih->shape[1] == I &&
                 Whh->shape[0] == 4 * H && Whh->shape[1] == H,
             SGNN_ERR_SHAPE, "lstm_cell: x %s, h %s, c %s, Wih %s, Whh %s (expected [B,I],[B,H],[B,H],[4H,I],[4H,H])",
             SHP(x), SHP(h), SHP(c), SHP(Wih), SHP(Whh));
  if (bias) {
    SGNN_TRY(sgnn_check_pair("lstm_cell", x, bias));
    SGNN_CHECK(bias->ndim == 1 && bias->shape[0] == 4 * H, SGNN_ERR_SHAPE, "lstm_cell: bias %s, expected [%d]", SHP(bias),
               4 * H);
  }
  int rc = 0;
  SgnnTensor a = NULL, b = NULL, gates = NULL, gi = NULL, gf = NULL, gg = NULL, go = NULL;
  SgnnTensor si = NULL, sf = NULL, tg = NULL, so = NULL, fc = NULL, ig = NULL, cn = NULL, tc = NULL;
  SGNN_TRYG(sgnn_linear(x, Wih, bias, &a));
  SGNN_TRYG(sgnn_matmul(h, Whh, 0, 1, &b));
  SGNN_TRYG(sgnn_add(a, b, &gates));
  SGNN_TRYG(sgnn_slice(gates, 1, 0, H, &gi));
  SGNN_TRYG(sgnn_slice(gates, 1, H, 2 * H, &gf));
  SGNN_TRYG(sgnn_slice(gates, 1, 2 * H, 3 * H, &gg));
  SGNN_TRYG(sgnn_slice(gates, 1, 3 * H, 4 * H, &go));
  SGNN_TRYG(sgnn_sigmoid(gi, &si));
  SGNN_TRYG(sgnn_sigmoid(gf, &sf));
  SGNN_TRYG(sgnn_tanh(gg, &tg));
  SGNN_TRYG(sgnn_sigmoid(go, &so));
  SGNN_TRYG(sgnn_mul(sf, c, &fc));
  SGNN_TRYG(sgnn_mul(si, tg, &ig));
  SGNN_TRYG(sgnn_add(fc, ig, &cn));
  SGNN_TRYG(sgnn_tanh(cn, &tc));
  SGNN_TRYG(sgnn_mul(so, tc, h_out));
  *c_out = sgnn_tensor_ref(cn);
done:
  sgnn_tensor_free(&a);
  sgnn_tensor_free(&b);
  sgnn_tensor_free(&gates);
  sgnn_tensor_free(&gi);
  sgnn_tensor_free(&gf);
  sgnn_tensor_free(&gg);
  sgnn_tensor_free(&go);
  sgnn_tensor_free(&si);
  sgnn_tensor_free(&sf);
  sgnn_tensor_free(&tg);
  sgnn_tensor_free(&so);
  sgnn_tensor_free(&fc);
  sgnn_tensor_free(&ig);
  sgnn_tensor_free(&cn);
  sgnn_tensor_free(&tc);
  return rc;
}
