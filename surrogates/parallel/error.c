/* error.c -- the module's last-error message (sgpar_last_error). */
#include "sgpar_impl.h"
#include <stdarg.h>
#include <stdio.h>

static char errbuf[512];
const char *sgpar_last_error(void) { return errbuf; }
int sgpar_fail(int code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(errbuf, sizeof errbuf, fmt, ap);
  va_end(ap);
  return code;
}
