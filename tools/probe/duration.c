/* qmetric-probe: durations (see duration.h). */
#include "duration.h"

#include <string.h>

#define DAY_US (G_GINT64_CONSTANT (86400) * G_USEC_PER_SEC)

gint64
parse_duration_us (const gchar * s)
{
  static const struct
  {
    const gchar *name;
    gdouble us;
  } units[] = {
    /* longest first: "ms" before "m", "min" before "m" */
    {"min", 60e6}, {"ns", 1e-3}, {"us", 1}, {"ms", 1e3}, {"s", 1e6},
    {"m", 60e6}, {"h", 3600e6},
  };
  gdouble total = 0;

  if (!s || !*s)
    return -1;
  if (!strcmp (s, "0"))
    return 0;
  while (*s) {
    gdouble v = 0, scale = 1;
    gboolean digits = FALSE;
    guint i;

    for (; g_ascii_isdigit (*s); s++, digits = TRUE)
      v = v * 10 + (*s - '0');
    if (*s == '.')
      for (s++; g_ascii_isdigit (*s); s++, digits = TRUE)
        v += (*s - '0') * (scale /= 10);
    if (!digits || v > 1e12)
      return -1;
    for (i = 0; i < G_N_ELEMENTS (units); i++)
      if (!strncmp (s, units[i].name, strlen (units[i].name)))
        break;
    if (i == G_N_ELEMENTS (units))
      return -1;
    s += strlen (units[i].name);
    total += v * units[i].us;
    if (total > DAY_US)
      return -1;
  }
  return (gint64) (total + 0.5);
}
