/* error.c -- the module's last-error message (sgpar_last_error). It is the engine's one last-error
 * buffer (sgnn_op.h), not a second copy: one message, from whichever library failed last, and
 * per thread like the engine's. The message is formatted first into a local buffer because its
 * arguments often quote sgnn_last_error() itself. */
#include "sgpar_impl.h"
#include "sgnn_op.h"
#include <stdarg.h>
#include <stdio.h>

const char *sgpar_last_error(void) { return sgnn_last_error(); }
int sgpar_fail(int code, const char *fmt, ...)
{
  char    buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return sgnn_seterr(code, "%s", buf);
}
