#include "log.h"

#include <stdarg.h>
#include <string.h>

#include "fmt.h"

#define LOG_LINE_MAX 256

static const struct hal_console_ops *console;
static const struct hal_timer_ops *clock;
static enum fw_log_level level = FW_LOG_INFO;

static const char *const level_names[] = {
	[FW_LOG_ERR] = "err",
	[FW_LOG_WARN] = "warn",
	[FW_LOG_INFO] = "info",
	[FW_LOG_DEBUG] = "debug",
};

void fw_log_init(const struct hal_console_ops *con, const struct hal_timer_ops *timer)
{
	console = con;
	clock = timer;
}

void fw_log_set_level(enum fw_log_level lvl)
{
	level = lvl;
}

int fw_log_parse_level(const char *name, enum fw_log_level *out)
{
	unsigned i;

	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(name, level_names[i]) == 0) {
			*out = (enum fw_log_level)i;
			return 0;
		}
	}
	return -1;
}

static void emit(const char *s)
{
	if (!console)
		return;
	for (; *s; s++) {
		if (*s == '\n')
			console->putc('\r');
		console->putc(*s);
	}
}

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX];
	size_t n = 0;

	if (prefix) {
		uint64_t ns = clock ? clock->now_ns() : 0;

		n = (size_t)fw_snprintf(line, sizeof(line), "[%5llu.%06llu] %s: ",
					(unsigned long long)(ns / 1000000000u),
					(unsigned long long)(ns % 1000000000u / 1000u), prefix);
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
	}
	fw_vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	n = strlen(line);
	line[n] = '\n';
	line[n + 1] = '\0';
	emit(line);
}

void fw_log(enum fw_log_level lvl, const char *fmt, ...)
{
	static const char *const tags[] = { "E", "W", "I", "D" };
	va_list ap;

	if (lvl > level)
		return;
	va_start(ap, fmt);
	vlog(tags[lvl], fmt, ap);
	va_end(ap);
}

void fw_print(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(NULL, fmt, ap);
	va_end(ap);
}
