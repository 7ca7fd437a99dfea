/* error.c -- error codes with a readable message (sgnn_last_error) and the
 * log sink used for visible backend fallbacks. The message buffer is
 * thread-local so concurrent threads do not overwrite each other's errors. */
#include "sgnn_impl.h"
#include <stdarg.h>
#include <string.h>

static _Thread_local char errbuf[1024];

static void log_stderr(const char *msg) { fprintf(stderr, "%s\n", msg); }
static void (*log_fn)(const char *) = log_stderr;

const char *sgnn_last_error(void) { return errbuf; }
void sgnn_clear_error(void) { errbuf[0] = 0; }

int sgnn_seterr(int code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(errbuf, sizeof errbuf, fmt, ap);
  va_end(ap);
  return code;
}

void sgnn_set_log(void (*fn)(const char *msg)) { log_fn = fn; }

void sgnn_logmsg(const char *fmt, ...)
{
  char buf[512];
  va_list ap;
  if (!log_fn) return;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  log_fn(buf);
}

const char *sgnn_shape_str(int ndim, const int *shape)
{
  static _Thread_local char bufs[8][64];
  static _Thread_local int next;
  char *b = bufs[next++ & 7];
  int o = 0;
  o += snprintf(b + o, 64 - o, "[");
  for (int i = 0; i < ndim && o < 60; i++) o += snprintf(b + o, 64 - o, i ? ",%d" : "%d", shape[i]);
  snprintf(b + o, 64 - o, "]");
  return b;
}
